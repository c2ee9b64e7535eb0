/**
 * "New dataset" on the Requests page: a name, then `POST /v1/experiment/dataset` with the page's
 * current filter; the answer says how many requests went in and links to the dataset.
 */
import { useState, type FormEvent } from 'react';
import type { FilterNode } from '../filters.ts';
import { routeHash } from '../router.ts';
import { useSession } from '../session.tsx';

/** Props: the filter the dataset is made from. */
export function DatasetFromFilter({ filter }: { filter: FilterNode }) {
  const { api, reportError } = useSession();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ datasetId: string; rows: number } | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return reportError(new Error('name the dataset'));
    setBusy(true);
    try {
      setCreated(await api.createDataset(name.trim(), filter));
      setName('');
      setOpen(false);
    } catch (err) {
      reportError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="inline-form">
      {created && (
        <a className="note" href={routeHash('datasets', created.datasetId)}>
          Dataset created with {created.rows} requests →
        </a>
      )}
      {open ? (
        <form onSubmit={create}>
          <input data-testid="dataset-name" autoFocus placeholder="dataset name" value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit" data-testid="dataset-create" disabled={busy}>
            Create
          </button>
          <button type="button" className="ghost" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" data-testid="dataset-from-filter" onClick={() => setOpen(true)} title="A dataset of the requests matching these filters">
          Dataset from filter
        </button>
      )}
    </div>
  );
}
