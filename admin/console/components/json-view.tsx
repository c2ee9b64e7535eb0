/** Raw JSON, pretty-printed, with a copy button. */
import { prettyJson } from '../format.ts';

/** Shows `value` as indented JSON in the `raw-json` element. */
export function JsonView({ value }: { value: unknown }) {
  const text = prettyJson(value);
  return (
    <div className="json-view">
      <button type="button" className="ghost copy" onClick={() => void navigator.clipboard?.writeText(text)}>
        Copy
      </button>
      <pre data-testid="raw-json">{text}</pre>
    </div>
  );
}
