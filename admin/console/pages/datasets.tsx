/**
 * Datasets: the organization's datasets (newest first) and the rows of the open one. A dataset is
 * made on the Requests page from its current filter.
 */
import { useEffect } from 'react';
import type { DatasetRow } from '../api.ts';
import { LoadMore } from '../components/load-more.tsx';
import { formatInt, formatTime } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { usePagedList } from '../paged-list.ts';
import { navigate, routeHash } from '../router.ts';
import { useSession } from '../session.tsx';

/** How often the list of datasets is read again (ms). */
const REFRESH_MS = 2_000;
/** Dataset rows per page ("Load more" brings the next). */
const ROWS_PAGE = 500;

/** A short preview of a request body: its model and the last message's text. */
function preview(body: unknown): string {
  const b = (body ?? {}) as { model?: unknown; messages?: Array<{ content?: unknown }>; input?: unknown };
  const last = Array.isArray(b.messages) ? b.messages[b.messages.length - 1]?.content : b.input;
  const text = typeof last === 'string' ? last : last === undefined ? '' : JSON.stringify(last);
  return `${typeof b.model === 'string' ? b.model + ' · ' : ''}${text.slice(0, 160)}`;
}

/**
 * The dataset's rows, a page at a time. No total is shown: the reference's dataset list has no row
 * count, so the page says how many are shown and, once the last page came, that they are all.
 */
function DatasetRows({ id }: { id: string }) {
  const { api } = useSession();
  const list = usePagedList<DatasetRow>((offset, limit) => api.datasetRows(id, offset, limit), [api, id], ROWS_PAGE, (r) => r.request_id);
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
          </tr>
        </thead>
        <tbody>
          {list.rows.map((r) => (
            <tr key={r.request_id} data-testid="dataset-request-row" data-request-id={r.request_id}>
              <td className="num">{r.position}</td>
              <td>
                <a href={routeHash('requests', r.request_id)}>
                  <code>{r.request_id.slice(0, 8)}</code>
                </a>
              </td>
              <td className="muted">{formatTime(r.created_at)}</td>
              <td className="ellipsis">{preview(r.request_body)}</td>
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
            <h2>{open?.name ?? openId}</h2>
            <DatasetRows id={openId} />
          </>
        ) : (
          <p className="muted pad">Choose a dataset.</p>
        )}
      </div>
    </div>
  );
}
