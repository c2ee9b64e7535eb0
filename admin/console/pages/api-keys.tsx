/**
 * API keys: create one (the key is shown this once, with a copy button), list the live keys with
 * their last use, and revoke one (asked to confirm, in the row).
 */
import { useState, type FormEvent } from 'react';
import type { ApiKey, CreatedKey } from '../api.ts';
import { formatTime } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { KEY_STORAGE, useSession } from '../session.tsx';

function KeyRow({ k, own, onRevoke }: { k: ApiKey; own: boolean; onRevoke: (id: string) => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-testid="key-row" data-key-id={k.id}>
      <td>
        {k.name} {own && <span className="badge" title="The key this console is signed in with: revoking it signs you out">this session</span>}
      </td>
      <td>
        <code>{k.prefix}…</code>
      </td>
      <td className="muted">{formatTime(k.created_at)}</td>
      <td className="muted">{k.last_used_at ? formatTime(k.last_used_at) : 'never'}</td>
      <td className="actions">
        {confirming ? (
          <>
            <button type="button" className="danger" data-testid="key-revoke-confirm" onClick={() => void onRevoke(k.id)}>
              Revoke now
            </button>
            <button type="button" className="ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" className="ghost" data-testid="key-revoke" onClick={() => setConfirming(true)}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

/** The API keys page. */
export function ApiKeysPage() {
  const { api, reportError } = useSession();
  const { data: keys, reload } = useLoad(() => api.listKeys(), [api]);
  // The list never holds a key, only its prefix: enough to mark the one this console uses.
  const signedInKey = sessionStorage.getItem(KEY_STORAGE);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedKey | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return reportError(new Error('name the key'));
    try {
      setCreated(await api.createKey(name.trim()));
      setName('');
      // What the banner said (a missing name, a failed try) is no longer so.
      reportError(null);
      reload();
    } catch (err) {
      reportError(err);
    }
  };
  const revoke = async (id: string) => {
    try {
      await api.revokeKey(id);
      reload();
    } catch (err) {
      reportError(err);
    }
  };

  return (
    <div className="page">
      <header className="page-head">
        <h1>API keys</h1>
      </header>
      <form className="row" onSubmit={create}>
        <input data-testid="key-name" placeholder="key name" value={name} onChange={(e) => setName(e.target.value)} />
        <button type="submit" data-testid="key-create">
          Create key
        </button>
      </form>
      {created && (
        <div className="created-key">
          <div>
            New key <strong>{created.name}</strong>, shown this once; store it now:
          </div>
          <code data-testid="key-created">{created.key}</code>
          <button type="button" className="ghost" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy
          </button>
          <button type="button" className="ghost" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      <table className="grid">
        <thead>
          <tr>
            <th>Name</th>
            <th>Key</th>
            <th>Created</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(keys ?? []).map((k) => (
            <KeyRow key={k.id} k={k} own={!!signedInKey?.startsWith(k.prefix)} onRevoke={revoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
