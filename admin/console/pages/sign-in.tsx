/**
 * Sign-in: one field for an API key. The key is checked with a cheap authenticated call
 * (`GET /v1/api-keys`) before it is kept, so a wrong key is said at once, not on the first page.
 */
import { useState, type FormEvent } from 'react';
import { createApi } from '../api.ts';

/** Props: called with a key that admin accepted, or with the failure's message. */
export function SignInPage({ onSignIn, onError }: { onSignIn: (key: string) => void; onError: (message: string) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return onError('enter an API key');
    setBusy(true);
    try {
      await createApi(k).listKeys();
      onSignIn(k);
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="signin" onSubmit={submit}>
      <h1>svc gateway</h1>
      <p className="muted">Sign in with an API key (admin prints one on first start).</p>
      <input
        data-testid="signin-key"
        type="password"
        autoFocus
        autoComplete="off"
        placeholder="sk-svc-…"
        value={key}
        onChange={(e) => setKey(e.target.value)}
      />
      <button type="submit" data-testid="signin-submit" disabled={busy}>
        {busy ? 'Checking…' : 'Sign in'}
      </button>
    </form>
  );
}
