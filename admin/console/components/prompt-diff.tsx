/**
 * The line diff of two prompt versions' bodies (pretty JSON, so a change to one message is one
 * changed line), drawn with the `diff` package's line diff: removed lines red, added green.
 */
import { diffLines } from 'diff';
import { useMemo } from 'react';
import { prettyJson } from '../format.ts';

/** Props: the two bodies and their version labels. */
export function PromptDiff({ from, to, fromLabel, toLabel }: { from: unknown; to: unknown; fromLabel: string; toLabel: string }) {
  const parts = useMemo(() => diffLines(prettyJson(from), prettyJson(to)), [from, to]);
  const changed = parts.some((p) => p.added || p.removed);
  return (
    <div className="diff" data-testid="prompt-diff">
      <div className="diff-head muted">
        {fromLabel} → {toLabel}
        {changed ? '' : ' · no differences'}
      </div>
      <pre>
        {parts.flatMap((p, i) =>
          p.value
            .replace(/\n$/, '')
            .split('\n')
            .map((line, j) => (
              <div key={`${i}-${j}`} className={p.added ? 'add' : p.removed ? 'del' : 'same'}>
                <span className="sign">{p.added ? '+' : p.removed ? '-' : ' '}</span>
                {line}
              </div>
            )),
        )}
      </pre>
    </div>
  );
}
