/**
 * "New dataset" on the Requests page: a name and how many of the newest matching requests to take
 * (the API takes at most {@link DATASET_MAX_ROWS}), then `POST /v1/experiment/dataset` with the
 * page's current filter. Before and after, it says how many requests match, so a dataset of the
 * newest 1,000 of 45,544 is never mistaken for all of them.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { DATASET_DEFAULT_ROWS, DATASET_MAX_ROWS } from '../api.ts';
import type { FilterNode } from '../filters.ts';
import { formatInt } from '../format.ts';
import { routeHash } from '../router.ts';
import { useSession } from '../session.tsx';

/** "the newest 1,000 of 45,544 matching requests", or "all 12 matching requests" when none is left out. */
function describeTake(taken: number, matching: number | null): string {
  if (matching === null) return `the newest ${formatInt(taken)} matching requests`;
  if (taken >= matching) return `all ${formatInt(matching)} matching requests`;
  return `the newest ${formatInt(taken)} of ${formatInt(matching)} matching requests`;
}

/** Props: the filter the dataset is made from. */
export function DatasetFromFilter({ filter }: { filter: FilterNode }) {
  const { api, reportError } = useSession();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [limit, setLimit] = useState(String(DATASET_DEFAULT_ROWS));
  const [matching, setMatching] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ datasetId: string; rows: number; matching: number | null } | null>(null);

  // The count is asked for when the form opens (and the filter changes under it), not on every render.
  useEffect(() => {
    if (!open) return;
    let live = true;
    setMatching(null);
    api.countRequests(filter).then((n) => live && setMatching(n), () => live && setMatching(null));
    return () => {
      live = false;
    };
  }, [open, filter, api]);

  const n = Number(limit);
  const limitOk = Number.isInteger(n) && n >= 1 && n <= DATASET_MAX_ROWS;

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return reportError(new Error('name the dataset'));
    if (!limitOk) return reportError(new Error(`the number of requests must be a whole number from 1 to ${formatInt(DATASET_MAX_ROWS)}`));
    setBusy(true);
    try {
      const made = await api.createDataset(name.trim(), filter, n);
      setCreated({ ...made, matching });
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
        <a className="note" data-testid="dataset-created" href={routeHash('datasets', created.datasetId)}>
          Dataset created with {describeTake(created.rows, created.matching)} →
        </a>
      )}
      {open ? (
        <form onSubmit={create}>
          <input data-testid="dataset-name" autoFocus placeholder="dataset name" value={name} onChange={(e) => setName(e.target.value)} />
          <label className="check" title={`At most ${formatInt(DATASET_MAX_ROWS)}`}>
            newest
            <input data-testid="dataset-limit" type="number" min={1} max={DATASET_MAX_ROWS} step={1} value={limit} onChange={(e) => setLimit(e.target.value)} style={{ width: '7em' }} />
          </label>
          <span className="muted" data-testid="dataset-take">
            {limitOk ? `takes ${describeTake(matching === null ? n : Math.min(n, matching), matching)}` : `1 to ${formatInt(DATASET_MAX_ROWS)}`}
          </span>
          <button type="submit" data-testid="dataset-create" disabled={busy}>
            Create
          </button>
          <button type="button" className="ghost" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" data-testid="dataset-from-filter" onClick={() => setOpen(true)} title="A dataset of the newest requests matching these filters">
          Dataset from filter
        </button>
      )}
    </div>
  );
}
