/**
 * The prompt editor: the body as JSON in a textarea (an OpenAI chat body: model, messages, …),
 * plus a name for a new prompt, or a commit message (and new major or minor) for a new version.
 * The JSON is checked here, so a typo is said before anything is sent.
 */
import { useRef, useState, type FormEvent } from 'react';

/** What a save carries. */
export interface PromptDraft {
  name: string;
  body: unknown;
  commitMessage: string;
  newMajor: boolean;
}

/**
 * Props: new prompt or new version, the starting body text, and the save handler, which resolves
 * true when saved and false when it failed (it says why itself); the commit message is cleared only
 * after a save.
 */
export function PromptEditor({ mode, initialBody, onSave, onCancel }: { mode: 'new' | 'version'; initialBody: string; onSave: (d: PromptDraft) => Promise<boolean>; onCancel?: () => void }) {
  const [name, setName] = useState('');
  const [body, setBody] = useState(initialBody);
  const [commitMessage, setCommitMessage] = useState('');
  const [newMajor, setNewMajor] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The button is disabled by `busy`, but Ctrl+Enter pressed again before React re-renders sees the
  // old state: a ref is set at once, so one save runs at a time whichever way it was asked for.
  const saving = useRef(false);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (saving.current) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      return setProblem(`the body is not valid JSON: ${(err as Error).message}`);
    }
    if (mode === 'new' && !name.trim()) return setProblem('name the prompt');
    setProblem(null);
    saving.current = true;
    setBusy(true);
    try {
      if (await onSave({ name: name.trim(), body: parsed, commitMessage, newMajor })) setCommitMessage('');
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };

  return (
    <form className="editor" onSubmit={save} onKeyDown={(e) => (e.ctrlKey || e.metaKey) && e.key === 'Enter' && void save(e)}>
      {mode === 'new' && <input data-testid="prompt-name" placeholder="prompt name" value={name} onChange={(e) => setName(e.target.value)} autoFocus />}
      <textarea data-testid="prompt-body" spellCheck={false} rows={16} value={body} onChange={(e) => setBody(e.target.value)} />
      <p className="muted syntax" data-testid="prompt-input-syntax">
        An input is written <code>{'{{svc:<name>:string}}'}</code> (or <code>number</code>, <code>boolean</code>); the gateway fills it in from the request's <code>inputs</code>.
      </p>
      {problem && <div className="problem">{problem}</div>}
      <div className="row">
        {mode === 'version' && (
          <>
            <input data-testid="prompt-commit-message" className="grow" placeholder="commit message" value={commitMessage} onChange={(e) => setCommitMessage(e.target.value)} />
            <label className="check">
              <input type="checkbox" checked={newMajor} onChange={(e) => setNewMajor(e.target.checked)} /> new major
            </label>
          </>
        )}
        <button type="submit" data-testid="prompt-save" disabled={busy} title="Save (Ctrl+Enter)">
          {mode === 'new' ? 'Create prompt' : 'Save version'}
        </button>
        {onCancel && (
          <button type="button" className="ghost" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
