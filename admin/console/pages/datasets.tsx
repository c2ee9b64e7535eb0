/**
 * Datasets: the organization's datasets (newest first) and the rows of the open one. A dataset is
 * made on the Requests page from its current filter. The open one can be exported (a JSON Lines
 * file, one object per row), renamed and deleted (asked to confirm, in place), and each row removed.
 */
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import type { Dataset, DatasetRow } from '../api.ts';
import { LoadMore } from '../components/load-more.tsx';
import { formatInt, formatTime } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { readWithinBudget, type ReadSize } from '../page-budget.ts';
import { usePagedList } from '../paged-list.ts';
import { navigate, routeHash } from '../router.ts';
import { useSession } from '../session.tsx';

/** How often the list of datasets is read again (ms). */
const REFRESH_MS = 2_000;
/**
 * Dataset rows per page ("Load more" brings the next). Admin bounds the bodies one answer carries,
 * so a page of large requests is read in smaller reads ({@link readWithinBudget}).
 */
const ROWS_PAGE = 500;

/**
 * A dataset row as the table keeps it: its preview, not its bodies (a page of coding-agent
 * requests is hundreds of MB of them). `tooLarge`: the row's bodies alone are more than one answer
 * of admin may carry; position and time are then unknown (null) and the request opens alone.
 */
interface ListedRow {
  request_id: string;
  position: number | null;
  created_at: string | null;
  preview: string;
  tooLarge: boolean;
}

const listed = (r: DatasetRow): ListedRow => ({ request_id: r.request_id, position: r.position, created_at: r.created_at, preview: preview(r.request_body), tooLarge: false });

/** The stand-in of a row too large to list (a 413 named it): shown, with a link to read it alone. */
const tooLargeRow = (requestId: string): ListedRow => ({ request_id: requestId, position: null, created_at: null, preview: 'too large to preview here: open the request', tooLarge: true });

/** A short preview of a request body: its model and the last message's text. */
function preview(body: unknown): string {
  const b = (body ?? {}) as { model?: unknown; messages?: Array<{ content?: unknown }>; input?: unknown };
  const last = Array.isArray(b.messages) ? b.messages[b.messages.length - 1]?.content : b.input;
  const text = typeof last === 'string' ? last : last === undefined ? '' : JSON.stringify(last);
  return `${typeof b.model === 'string' ? b.model + ' · ' : ''}${text.slice(0, 160)}`;
}

/** Saves `blob` as file `fileName` through a temporary link (the browser's download). */
function saveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked later, not at once: some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * The open dataset's heading and actions: Export (downloads its rows as JSON Lines), Rename (in
 * place) and Delete (asked to confirm). `onChanged` after a rename, `onDeleted` after a delete.
 */
function DatasetHead({ id, dataset, onChanged, onDeleted }: { id: string; dataset: Dataset | undefined; onChanged: () => void; onDeleted: () => void }) {
  const { api, reportError } = useSession();
  const [exporting, setExporting] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  // Another dataset opened: no question or form of the previous one stays up.
  useEffect(() => {
    setConfirming(false);
    setRenaming(null);
  }, [id]);

  const exportRows = async () => {
    setExporting(true);
    try {
      const file = await api.exportDataset(id);
      saveFile(file.blob, file.fileName);
    } catch (err) {
      reportError(err);
    } finally {
      setExporting(false);
    }
  };
  const remove = async () => {
    try {
      await api.deleteDataset(id);
      onDeleted();
    } catch (err) {
      reportError(err);
    }
  };
  const rename = async (e: FormEvent) => {
    e.preventDefault();
    const name = (renaming ?? '').trim();
    if (!name) return reportError(new Error('name the dataset'));
    try {
      await api.renameDataset(id, name);
      setRenaming(null);
      reportError(null);
      onChanged();
    } catch (err) {
      reportError(err);
    }
  };

  return (
    <header className="page-head">
      {renaming === null ? (
        <h2 data-testid="dataset-name">{dataset?.name ?? id}</h2>
      ) : (
        <form className="row" onSubmit={rename}>
          <input data-testid="dataset-rename-input" maxLength={200} value={renaming} onChange={(e) => setRenaming(e.target.value)} autoFocus />
          <button type="submit" data-testid="dataset-rename-save">
            Save
          </button>
          <button type="button" className="ghost" onClick={() => setRenaming(null)}>
            Cancel
          </button>
        </form>
      )}
      <button type="button" className="ghost" data-testid="dataset-export" disabled={exporting} onClick={() => void exportRows()}>
        {exporting ? 'Exporting…' : 'Export JSONL'}
      </button>
      {renaming === null && (
        <button type="button" className="ghost" data-testid="dataset-rename" onClick={() => setRenaming(dataset?.name ?? '')}>
          Rename
        </button>
      )}
      {confirming ? (
        <>
          <button type="button" className="danger" data-testid="dataset-delete-confirm" onClick={() => void remove()}>
            Delete dataset now
          </button>
          <button type="button" className="ghost" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </>
      ) : (
        <button type="button" className="ghost" data-testid="dataset-delete" onClick={() => setConfirming(true)}>
          Delete dataset
        </button>
      )}
    </header>
  );
}

/**
 * The dataset's rows, a page at a time. No total is shown: the reference's dataset list has no row
 * count, so the page says how many are shown and, once the last page came, that they are all.
 * Remove takes a row out of the dataset (the request stays logged); the rows are then read again
 * from the first page, since the later ones moved up a position.
 */
function DatasetRows({ id }: { id: string }) {
  const { api, reportError } = useSession();
  const [generation, setGeneration] = useState(0);
  const [removing, setRemoving] = useState<string | null>(null);
  // One read size per listing (see ReadSize): a new dataset or a re-read starts from a whole page.
  const size = useMemo<ReadSize>(() => ({ current: ROWS_PAGE }), [id, generation]); // eslint-disable-line react-hooks/exhaustive-deps
  const list = usePagedList<ListedRow>(
    (offset, limit) => readWithinBudget((o, l) => api.datasetRows(id, o, l).then((rows) => rows.map(listed)), offset, limit, size, tooLargeRow),
    [api, id, generation],
    ROWS_PAGE,
    (r) => r.request_id,
  );
  const removeRow = async (requestId: string) => {
    setRemoving(requestId);
    try {
      await api.removeFromDataset(id, requestId);
      setGeneration((g) => g + 1);
    } catch (err) {
      reportError(err);
    } finally {
      setRemoving(null);
    }
  };
  if (list.rows.length === 0) {
    if (list.loading) return <p className="muted pad">Loading…</p>;
    return list.failed ? null : <p className="muted pad" data-testid="dataset-empty">This dataset holds no requests.</p>;
  }
  return (
    <>
      <p className="muted" data-testid="dataset-shown">
        {list.done ? `all ${formatInt(list.rows.length)} requests shown` : `${formatInt(list.rows.length)} requests shown; Load more for the rest`}
      </p>
      <table className="grid">
        <thead>
          <tr>
            <th>#</th>
            <th>Request</th>
            <th>Created</th>
            <th>Preview</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.rows.map((r) => (
            <tr key={r.request_id} data-testid="dataset-request-row" data-request-id={r.request_id}>
              <td className="num">{r.position ?? '—'}</td>
              <td>
                <a href={routeHash('requests', r.request_id)}>
                  <code>{r.request_id.slice(0, 8)}</code>
                </a>
              </td>
              <td className="muted">{r.created_at ? formatTime(r.created_at) : '—'}</td>
              <td className={r.tooLarge ? 'ellipsis muted' : 'ellipsis'} data-testid="dataset-row-preview">
                {r.preview}
              </td>
              <td className="actions">
                <button type="button" className="ghost" data-testid="dataset-row-remove" disabled={removing !== null} onClick={() => void removeRow(r.request_id)}>
                  {removing === r.request_id ? 'Removing…' : 'Remove'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <LoadMore list={list} testid="dataset-load-more" />
    </>
  );
}

/** Props: the open dataset's id (from the route), if any. */
export function DatasetsPage({ openId }: { openId: string | null }) {
  const { api } = useSession();
  const { data: datasets, reload } = useLoad(() => api.listDatasets(), [api]);
  // A dataset asked for on the Requests page may land after this page opened: keep the list fresh.
  useEffect(() => {
    const t = setInterval(reload, REFRESH_MS);
    return () => clearInterval(t);
  }, [reload]);
  const open = datasets?.find((d) => d.id === openId);
  return (
    <div className="page split">
      <div className="list-pane">
        <header className="page-head">
          <h1>Datasets</h1>
        </header>
        <table className="grid">
          <tbody>
            {(datasets ?? []).map((d) => (
              <tr key={d.id} data-testid="dataset-row" data-dataset-id={d.id} className={d.id === openId ? 'selected clickable' : 'clickable'} onClick={() => navigate('datasets', d.id)}>
                <td>{d.name}</td>
                <td className="muted">{formatTime(d.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {datasets?.length === 0 && <p className="muted pad">No datasets yet: make one from a filter on the Requests page.</p>}
      </div>
      <div className="detail-pane">
        {openId ? (
          <>
            <DatasetHead
              id={openId}
              dataset={open}
              onChanged={reload}
              onDeleted={() => {
                navigate('datasets');
                reload();
              }}
            />
            <DatasetRows id={openId} />
          </>
        ) : (
          <p className="muted pad">Choose a dataset.</p>
        )}
      </div>
    </div>
  );
}
