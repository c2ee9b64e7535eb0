/**
 * The Requests page's rows: keyset pages going back in time (`before` = the last row shown) as the
 * table scrolls, and a poll every {@link POLL_MS} for rows newer than the newest shown, so new
 * requests appear without a reload. Rows are kept slim (no bodies): a million of them must fit.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type Api, type SvcRequest } from './api.ts';
import { newerThan, type FilterNode } from './filters.ts';
import { useSession } from './session.tsx';

/** Rows per keyset page. */
export const PAGE_SIZE = 200;
/** How often new rows are asked for (ms); the brief allows at most 2 s until a new row shows. */
export const POLL_MS = 1_000;
/**
 * How far before the newest row shown the poll looks (ms): a request is logged when it ends, so a
 * long one started before the newest row shown arrives late with an older `created_at`.
 */
const POLL_OVERLAP_MS = 60_000;

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

/** The rows of `filter` (re-read from the start whenever `filterKey` changes). */
export function useRequestFeed(filter: FilterNode, filterKey: string): RequestFeed {
  const { api, reportError } = useSession();
  const [rows, setRows] = useState<RequestRow[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [loading, setLoading] = useState(false);
  const [done, setDone] = useState(false);
  // Mutable state the poll and the pager read without re-rendering: the current generation (a
  // filter change starts a new one and drops older answers), the ids held, and the rows.
  const state = useRef({ gen: 0, ids: new Set<string>(), rows: [] as RequestRow[], paging: false, done: false, filter });

  const loadPage = useCallback(
    async (gen: number) => {
      const s = state.current;
      if (s.paging || s.done) return;
      s.paging = true;
      setLoading(true);
      const last = s.rows[s.rows.length - 1];
      try {
        const page = await api.queryRequests(s.filter, PAGE_SIZE, last ? { created_at: last.request_created_at, request_id: last.request_id } : undefined);
        // The filter changed meanwhile: this page belongs to a listing no longer shown.
        if (gen !== state.current.gen) return;
        const fresh = page.filter((r) => !s.ids.has(r.request_id)).map(slim);
        for (const r of fresh) s.ids.add(r.request_id);
        s.rows = s.rows.concat(fresh);
        s.done = page.length < PAGE_SIZE;
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

  const poll = useCallback(
    async (gen: number) => {
      const s = state.current;
      const newest = s.rows[0];
      const since = newest ? new Date(Date.parse(newest.request_created_at) - POLL_OVERLAP_MS).toISOString() : null;
      const page = await api.queryRequests(since ? newerThan(s.filter, since) : s.filter, PAGE_SIZE);
      if (gen !== state.current.gen) return;
      const fresh = page.filter((r) => !s.ids.has(r.request_id)).map(slim);
      if (fresh.length === 0) return;
      for (const r of fresh) s.ids.add(r.request_id);
      s.rows = mergeRows(s.rows, fresh);
      setRows(s.rows);
      setTotal((t) => (t === null ? t : t + fresh.length));
    },
    [api],
  );

  useEffect(() => {
    const gen = ++state.current.gen;
    state.current = { gen, ids: new Set(), rows: [], paging: false, done: false, filter };
    setRows([]);
    setDone(false);
    setTotal(null);
    void loadPage(gen);
    void countOrNull(api, filter).then((n) => gen === state.current.gen && setTotal(n));
    let polling = false;
    const timer = setInterval(() => {
      // One poll at a time, and none while the first page is still coming or the tab is hidden.
      if (polling || document.hidden || state.current.paging) return;
      polling = true;
      poll(gen)
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
