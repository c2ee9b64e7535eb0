/**
 * "Add to dataset" in a request's detail: choose one of the organization's datasets and append the
 * request to it (`POST /v1/experiment/dataset/{id}/request`); a request already in it is left where
 * it is, and the note says so.
 */
import { useEffect, useState } from 'react';
import { useLoad } from '../hooks.ts';
import { useSession } from '../session.tsx';

/** Props: the open request's id. Renders nothing while the organization has no dataset. */
export function AddToDataset({ requestId }: { requestId: string }) {
  const { api, reportError } = useSession();
  const { data: datasets } = useLoad(() => api.listDatasets(), [api]);
  const [chosen, setChosen] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Another request opened: the note spoke of the previous one.
  useEffect(() => setNote(null), [requestId]);
  if (!datasets || datasets.length === 0) return null;
  const target = datasets.find((d) => d.id === chosen);

  const add = async () => {
    if (!target) return;
    setBusy(true);
    try {
      const r = await api.addToDataset(target.id, [requestId]);
      setNote(r.added > 0 ? `added to ${target.name} (${r.rows} requests)` : `already in ${target.name}`);
    } catch (err) {
      reportError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    // A strip under the detail's header (styles.css has no class for it; the header row is full).
    <div className="row" data-testid="add-to-dataset" style={{ margin: 0, padding: '6px 12px', borderBottom: '1px solid var(--line)' }}>
      <select aria-label="Dataset" data-testid="add-to-dataset-select" value={chosen} onChange={(e) => (setChosen(e.target.value), setNote(null))}>
        <option value="">Add to dataset…</option>
        {datasets.map((d) => (
          <option key={d.id} value={d.id}>
            {d.name}
          </option>
        ))}
      </select>
      <button type="button" className="ghost" data-testid="add-to-dataset-add" disabled={!target || busy} onClick={() => void add()}>
        Add
      </button>
      {note && (
        <span className="muted" data-testid="add-to-dataset-note">
          {note}
        </span>
      )}
    </div>
  );
}
