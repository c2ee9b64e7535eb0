/**
 * The Requests page's rows: keyset pages going back in time (`before` = the last row of the last
 * page) as the table scrolls, and a poll every {@link POLL_MS} for the rows admin stored since, so
 * new requests appear without a reload. Rows are kept slim (no bodies): a million of them must fit.
 *
 * Why the poll reads by `updated_at` and not by `created_at`: a request is stored when it ends, and
 * the gateway bounds no answer's duration (gateway.yaml: "an answer, however long it streams, is not
 * bounded"), so a request that streamed for ten minutes arrives with a `created_at` ten minutes
 * older than rows already shown; no look-back on `created_at` is long enough. `updated_at` is
 * PostgreSQL's now() when the row was stored (the ingestion order; migration 00011 indexes it). A
 * row becomes visible when its COPY commits, and a COPY that started earlier may commit after a
 * later one, so the poll looks back {@link STORE_OVERLAP_MS} (the longest a COPY runs) before the
 * newest `updated_at` held, pages through everything that matches (not just the newest page), and
 * drops the rows it already holds by id.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type Api, type Cursor, type SvcRequest } from './api.ts';
import { storedAfter, type FilterNode } from './filters.ts';
import { useSession } from './session.tsx';

/** Rows per keyset page. */
export const PAGE_SIZE = 200;
/** How often new rows are asked for (ms); the brief allows at most 2 s until a new row shows. */
export const POLL_MS = 1_000;
/**
 * How far before the newest `updated_at` held the poll looks (ms): admin/request-log-copy.ts
 * COPY_TIMEOUT_MS, the longest a COPY storing rows runs (its rows carry its start time).
 */
const STORE_OVERLAP_MS = 30_000;

/** A row as the table keeps it: the request without its bodies. */
export type RequestRow = Omit<SvcRequest, 'request_body' | 'response_body' | 'llmSchema'>;

function slim(r: SvcRequest): RequestRow {
  const { request_body: _a, response_body: _b, llmSchema: _c, ...rest } = r;
  return rest;
}

/** Newest first; ties by id descending, as the keyset order of the API. */
function compareRows(a: RequestRow, b: RequestRow): number {
  if (a.request_created_at !== b.request_created_at) return a.request_created_at < b.request_created_at ? 1 : -1;
  return a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0;
}

/** Merges `fresh` rows into `rows` (both newest first) in one pass; new rows usually all go on top. */
function mergeRows(rows: RequestRow[], fresh: RequestRow[]): RequestRow[] {
  fresh.sort(compareRows);
  if (rows.length === 0 || compareRows(fresh[fresh.length - 1]!, rows[0]!) <= 0) return fresh.concat(rows);
  const out: RequestRow[] = [];
  let i = 0;
  let j = 0;
  while (i < rows.length || j < fresh.length) {
    if (j >= fresh.length || (i < rows.length && compareRows(rows[i]!, fresh[j]!) <= 0)) out.push(rows[i++]!);
    else out.push(fresh[j++]!);
  }
  return out;
}

/** What {@link useRequestFeed} gives the page. */
export interface RequestFeed {
  rows: RequestRow[];
  /** Rows matching the filter in all (from `POST /v1/request/count`), null while unknown. */
  total: number | null;
  loading: boolean;
  /** True once the oldest row is loaded. */
  done: boolean;
  loadMore: () => void;
  /** Changes the members `patch` names on the row `id` (a rating given in the detail), if it is listed. */
  patch: (id: string, patch: Partial<RequestRow>) => void;
}

async function countOrNull(api: Api, filter: FilterNode): Promise<number | null> {
  try {
    return await api.countRequests(filter);
  } catch {
    return null; // The count is a nicety: the rows still show without it.
  }
}

/** Mutable state the poll and the pager read without re-rendering. */
interface FeedState {
  /** A filter change starts a new generation; answers of an older one are dropped. */
  gen: number;
  ids: Set<string>;
  rows: RequestRow[];
  paging: boolean;
  /** The oldest row is loaded. */
  done: boolean;
  /** The first page came: the poll may run (without it, it would read the whole filter). */
  started: boolean;
  /** The last row of the last keyset page: where scrolling goes on (rows the poll adds may be older). */
  frontier: RequestRow | null;
  /** The newest `updated_at` of any row received (ISO-8601, PostgreSQL's clock), null before one came. */
  storedHigh: string | null;
  /** Rows were added since the count was asked for: count again once the arrivals settle. */
  recount: boolean;
  filter: FilterNode;
}

function freshState(gen: number, filter: FilterNode): FeedState {
  // recount starts true: a row stored between the first count and the first page is in neither's figure.
  return { gen, ids: new Set(), rows: [], paging: false, done: false, started: false, frontier: null, storedHigh: null, recount: true, filter };
}

function noteStored(s: FeedState, page: readonly SvcRequest[]): void {
  for (const r of page) if (r.updated_at && (s.storedHigh === null || r.updated_at > s.storedHigh)) s.storedHigh = r.updated_at;
}

const cursorOf = (r: { request_created_at: string; request_id: string }): Cursor => ({ created_at: r.request_created_at, request_id: r.request_id });

/**
 * One poll: every row matching the filter stored since {@link STORE_OVERLAP_MS} before the newest
 * held, keyset-paged to the end, merged in. A new row older than the scroll frontier is left for
 * scrolling to bring (merging it would move the frontier past rows not yet loaded).
 * @returns how many rows were added, or null when the filter changed meanwhile.
 */
async function pollOnce(api: Api, s: FeedState, current: () => FeedState): Promise<number | null> {
  const since = s.storedHigh ? new Date(Date.parse(s.storedHigh) - STORE_OVERLAP_MS).toISOString() : null;
  const filter = since ? storedAfter(s.filter, since) : s.filter;
  const fresh: RequestRow[] = [];
  let before: Cursor | undefined;
  for (;;) {
    const page = await api.queryRequests(filter, PAGE_SIZE, before);
    if (current() !== s) return null;
    noteStored(s, page);
    for (const r of page) {
      if (s.ids.has(r.request_id)) continue;
      if (!s.done && s.frontier && compareRows(r, s.frontier) > 0) continue;
      s.ids.add(r.request_id);
      fresh.push(slim(r));
    }
    if (page.length < PAGE_SIZE) break;
    before = cursorOf(page[page.length - 1]!);
  }
  if (fresh.length > 0) s.rows = mergeRows(s.rows, fresh);
  return fresh.length;
}

/** The rows of `filter` (re-read from the start whenever `filterKey` changes). */
export function useRequestFeed(filter: FilterNode, filterKey: string): RequestFeed {
  const { api, reportError } = useSession();
  const [rows, setRows] = useState<RequestRow[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [done, setDone] = useState(false);
  const state = useRef<FeedState>(freshState(0, filter));

  const loadPage = useCallback(
    async (gen: number) => {
      const s = state.current;
      if (s.paging || s.done) return;
      s.paging = true;
      setLoading(true);
      try {
        const page = await api.queryRequests(s.filter, PAGE_SIZE, s.frontier ? cursorOf(s.frontier) : undefined);
        // The filter changed meanwhile: this page belongs to a listing no longer shown.
        if (gen !== state.current.gen) return;
        noteStored(s, page);
        const fresh = page.filter((r) => !s.ids.has(r.request_id)).map(slim);
        for (const r of fresh) s.ids.add(r.request_id);
        s.rows = s.rows.concat(fresh);
        if (page.length > 0) s.frontier = slim(page[page.length - 1]!);
        s.done = page.length < PAGE_SIZE;
        s.started = true;
        setRows(s.rows);
        setDone(s.done);
      } catch (err) {
        if (gen === state.current.gen) {
          s.done = true; // Stop the scroll from retrying a failing query in a loop.
          setDone(true);
          reportError(err);
        }
      } finally {
        s.paging = false;
        if (gen === state.current.gen) setLoading(false);
      }
    },
    [api, reportError],
  );

  // One tick: the poll; when it found nothing new after rows came, the count is asked again, so the
  // figure shown between (the last count plus the rows added since) ends up exact.
  const tick = useCallback(
    async (gen: number) => {
      const s = state.current;
      if (!s.started) return;
      const added = await pollOnce(api, s, () => state.current);
      if (added === null) return;
      if (added > 0) {
        s.recount = true;
        setRows(s.rows);
        setTotal((t) => (t === null ? t : t + added));
        return;
      }
      if (!s.recount) return;
      s.recount = false;
      const n = await countOrNull(api, s.filter);
      if (gen === state.current.gen && n !== null) setTotal(n);
    },
    [api],
  );

  useEffect(() => {
    const gen = state.current.gen + 1;
    state.current = freshState(gen, filter);
    setRows([]);
    setDone(false);
    setTotal(null);
    void loadPage(gen);
    void countOrNull(api, filter).then((n) => gen === state.current.gen && setTotal(n));
    let polling = false;
    const timer = setInterval(() => {
      // One poll at a time, and none while a page is still coming or the tab is hidden.
      if (polling || document.hidden || state.current.paging) return;
      polling = true;
      tick(gen)
        // A failed poll is retried on the next tick; only a refused key is said (it ends the session).
        .catch((err) => err instanceof ApiError && err.status === 401 && reportError(err))
        .finally(() => (polling = false));
    }, POLL_MS);
    return () => clearInterval(timer);
    // The filter object is rebuilt on each render; `filterKey` says when it really changed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filterKey, api, reportError]);

  const loadMore = useCallback(() => void loadPage(state.current.gen), [loadPage]);
  const patch = useCallback((id: string, changes: Partial<RequestRow>) => {
    const s = state.current;
    const at = s.rows.findIndex((r) => r.request_id === id);
    if (at < 0) return;
    // A new array and a new row object, so the table re-renders that row.
    s.rows = s.rows.slice();
    s.rows[at] = { ...s.rows[at]!, ...changes };
    setRows(s.rows);
  }, []);
  return { rows, total, loading, done, loadMore, patch };
}
