/** Promoting a prompt version to an environment (production, staging, … or any name). */
import { useState, type FormEvent } from 'react';

const ENVIRONMENTS = ['production', 'staging', 'development'];

/** Props: the version's label and the handler moving the environment's label onto it. */
export function PromoteForm({ versionLabel, onPromote }: { versionLabel: string; onPromote: (environment: string) => Promise<void> }) {
  const [environment, setEnvironment] = useState('production');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!environment.trim()) return;
    setBusy(true);
    try {
      await onPromote(environment.trim());
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="row" onSubmit={submit}>
      <span className="muted">Promote {versionLabel} to</span>
      <input data-testid="promote-environment" list="environments" value={environment} onChange={(e) => setEnvironment(e.target.value)} />
      <datalist id="environments">
        {ENVIRONMENTS.map((env) => (
          <option key={env} value={env} />
        ))}
      </datalist>
      <button type="submit" data-testid="promote-submit" disabled={busy}>
        Promote
      </button>
    </form>
  );
}
