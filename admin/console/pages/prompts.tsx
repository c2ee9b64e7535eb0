/**
 * Prompts (prompt-2025): the list, a new prompt, and the open prompt's versions, editor,
 * promotion and diff (components/prompt-detail.tsx).
 */
import { useState } from 'react';
import { PromptDetail } from '../components/prompt-detail.tsx';
import { PromptEditor, type PromptDraft } from '../components/prompt-editor.tsx';
import { formatTime } from '../format.ts';
import { useDebounced, useLoad } from '../hooks.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.tsx';

/**
 * The body a new prompt starts from. Its input is written as the gateway fills one in
 * (`{{svc:<name>:<type>}}`, from the request's `inputs`): `{{question}}` would reach the provider as is.
 */
const NEW_BODY = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: '{{svc:question:string}}' }] }, null, 2);

/** Props: the open prompt's id (from the route), if any. */
export function PromptsPage({ openId }: { openId: string | null }) {
  const { api, reportError } = useSession();
  const [search, setSearch] = useState('');
  const settled = useDebounced(search, 300);
  const { data: prompts, reload } = useLoad(() => api.listPrompts(settled), [api, settled]);
  const [creating, setCreating] = useState(false);
  const open = prompts?.find((p) => p.id === openId);

  const create = async (d: PromptDraft): Promise<boolean> => {
    try {
      const created = await api.createPrompt(d.name, d.body);
      setCreating(false);
      reload();
      navigate('prompts', created.id);
      return true;
    } catch (err) {
      reportError(err);
      return false;
    }
  };

  return (
    <div className="page split">
      <div className="list-pane">
        <header className="page-head">
          <h1>Prompts</h1>
          <div className="spacer" />
          <button type="button" data-testid="prompt-new" onClick={() => setCreating(true)}>
            New prompt
          </button>
        </header>
        <input className="search" placeholder="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        <table className="grid">
          <tbody>
            {(prompts ?? []).map((p) => (
              <tr key={p.id} data-testid="prompt-row" data-prompt-id={p.id} className={p.id === openId ? 'selected clickable' : 'clickable'} onClick={() => { setCreating(false); navigate('prompts', p.id); }}>
                <td>{p.name}</td>
                <td className="muted">{formatTime(p.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {prompts?.length === 0 && <p className="muted pad">No prompts yet.</p>}
      </div>
      <div className="detail-pane">
        {creating ? (
          <section>
            <h2>New prompt</h2>
            <PromptEditor mode="new" initialBody={NEW_BODY} onSave={create} onCancel={() => setCreating(false)} />
          </section>
        ) : open ? (
          <PromptDetail promptId={open.id} name={open.name} />
        ) : openId && prompts && !settled ? (
          // A link to a prompt deleted or of another organization: say so, not "Choose a prompt".
          <p className="problem pad" data-testid="prompt-not-found">
            Prompt <code>{openId}</code> was not found: it may have been deleted. Choose a prompt, or make a new one.
          </p>
        ) : (
          <p className="muted pad">{openId && prompts ? 'The open prompt is not among those matching the search.' : 'Choose a prompt, or make a new one.'}</p>
        )}
      </div>
    </div>
  );
}
