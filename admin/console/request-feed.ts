/**
 * The Requests page's rows, newest created first: keyset pages going back in time (`before` = the
 * last row of the last page) as the table scrolls, and a poll every {@link POLL_MS} for the rows
 * admin stored since, so new requests appear without a reload. Rows are kept slim (no bodies): a
 * million of them must fit.
 *
 * The poll reads by `updated_at` (when admin stored the row, PostgreSQL's now()), not by
 * `created_at`: a request is stored when it ends, and the gateway bounds no answer's duration, so
 * an agent's stream of ten minutes is stored with a `created_at` ten minutes older than rows shown
 * long ago, which no look-back on `created_at` covers. Such a row goes to its place by created_at
 * among the rows held (below the last row loaded when it is older than all of them; scrolling
 * then skips it, held by id).
 *
 * Pages are read without bodies (`bodies: false`, see Api.queryRequests): the table shows none, and
 * a page of coding-agent requests (50 KB–1 MB each) with them is over what one answer of admin may
 * carry (`admin.max-page-body-bytes`, a 413). The detail view reads one request whole.
 *
 * What a poll reads (the count is what keeps a quiet poll small):
 * 1. `POST /v1/request/count` of the rows stored in the look-back ({@link STORE_LOOKBACK_MS}
 *    before the newest `updated_at` held). No more than the rows held of that window: nothing new,
 *    and the poll ends there (a number, however many rows the page holds).
 * 2. Else the rows stored after the newest `updated_at` held, keyset page after keyset page until
 *    a page comes back short, so a burst of any size between two polls is read whole.
 * 3. Only when rows of the window are still missing after that (a storing statement that started
 *    before the newest row held committed after it), the whole window the same way.
 * Rows already held are dropped by id, or replace the row shown when they changed.
 * Known limit: a row deleted from the window (retention or an API delete, seconds after it was
 * stored) while another is stored into it can hide the new one from the count until it moves on.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type Api, type Cursor, type SvcRequest } from './api.ts';
import { storedSince, type FilterNode } from './filters.ts';
import { useSession } from './session.tsx';

/** Rows per keyset page. */
export const PAGE_SIZE = 200;
/** How often new rows are asked for (ms); the brief allows at most 2 s until a new row shows. */
export const POLL_MS = 1_000;
/**
 * How far before the newest `updated_at` held the poll looks (ms). `updated_at` is the start of the
 * statement that stored the row, which is seen only once it commits: a COPY that started before a
 * row shown may commit after it. Admin's COPYs of 500 rows take tens of ms (admin/request-log-copy.ts),
 * so 5 s covers them many times over; rows of a COPY slower than that (its limit, COPY_TIMEOUT_MS,
 * is 30 s) committing after the feed moved on show on reload.
 */
export const STORE_LOOKBACK_MS = 5_000;

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

/** Merges `fresh` rows into `rows` (both newest first) in one pass; new rows usually all go on top, a page at the bottom. */
function mergeRows(rows: RequestRow[], fresh: RequestRow[]): RequestRow[] {
  if (fresh.length === 0) return rows;
  fresh.sort(compareRows);
  if (rows.length === 0 || compareRows(fresh[fresh.length - 1]!, rows[0]!) <= 0) return fresh.concat(rows);
  if (compareRows(rows[rows.length - 1]!, fresh[0]!) <= 0) return rows.concat(fresh);
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

/** Mutable state the poll and the pager read without re-rendering; one per filter generation. */
interface FeedState {
  /** A filter change starts a new generation; answers of an older one are dropped. */
  gen: number;
  filter: FilterNode;
  /** Newest created first. */
  rows: RequestRow[];
  /** The rows held, by id: a row comes once, and a changed one replaces it. */
  byId: Map<string, RequestRow>;
  paging: boolean;
  /** The oldest row is loaded. */
  done: boolean;
  /** The first page came: the poll may run. */
  started: boolean;
  /** The last row of the last keyset page, where scrolling goes on (the poll may hold older rows). */
  frontier: Cursor | null;
  /** The newest `updated_at` of a row received (ms since the epoch, PostgreSQL's clock), null before one came. */
  storedHigh: number | null;
  /** The rows held stored at most {@link STORE_LOOKBACK_MS} before `storedHigh`: id → `updated_at` (ms). */
  recent: Map<string, number>;
}

function freshState(gen: number, filter: FilterNode): FeedState {
  return { gen, filter, rows: [], byId: new Map(), paging: false, done: false, started: false, frontier: null, storedHigh: null, recent: new Map() };
}

const cursorOf = (r: RequestRow): Cursor => ({ created_at: r.request_created_at, request_id: r.request_id });
const isoOf = (ms: number): string => new Date(ms).toISOString();

/** Takes rows `page` answered: the newest `updated_at`, the look-back's ids; drops from it what fell out of it. */
function noteStored(s: FeedState, page: readonly RequestRow[]): void {
  for (const r of page) {
    const at = Date.parse(r.updated_at);
    if (s.storedHigh === null || at > s.storedHigh) s.storedHigh = at;
  }
  if (s.storedHigh === null) return;
  const from = s.storedHigh - STORE_LOOKBACK_MS;
  for (const r of page) {
    const at = Date.parse(r.updated_at);
    if (at >= from) s.recent.set(r.request_id, at);
  }
  for (const [id, at] of s.recent) if (at < from) s.recent.delete(id);
}

/** How many rows held were stored at or after `fromMs`. */
function heldSince(s: FeedState, fromMs: number): number {
  let n = 0;
  for (const at of s.recent.values()) if (at >= fromMs) n++;
  return n;
}

/**
 * Takes in an answer's rows: new ones are merged in their place (created_at order), held ones that
 * changed replace the row shown. @returns how many were new.
 */
function absorb(s: FeedState, answer: readonly SvcRequest[]): number {
  const page = answer.map(slim);
  noteStored(s, page);
  const fresh: RequestRow[] = [];
  const changed = new Map<string, RequestRow>();
  for (const r of page) {
    const held = s.byId.get(r.request_id);
    if (!held) fresh.push(r);
    else if (JSON.stringify(held) !== JSON.stringify(r)) changed.set(r.request_id, r);
    s.byId.set(r.request_id, r);
  }
  if (changed.size > 0) s.rows = s.rows.map((r) => changed.get(r.request_id) ?? r);
  s.rows = mergeRows(s.rows, fresh);
  return fresh.length;
}

/**
 * Reads every row of `filter` (keyset pages until one comes back short) into `s`.
 * @returns how many were new, or null when the filter changed meanwhile (nothing taken in then).
 */
async function readAll(api: Api, s: FeedState, filter: FilterNode, isCurrent: () => boolean): Promise<number | null> {
  let added = 0;
  let before: Cursor | undefined;
  for (;;) {
    const page = await api.queryRequests(filter, PAGE_SIZE, before);
    if (!isCurrent()) return null;
    added += absorb(s, page);
    if (page.length < PAGE_SIZE) return added;
    before = cursorOf(page[page.length - 1]!);
  }
}

/**
 * One poll (the steps are in the module's comment).
 * @returns how many rows were new, or null when the filter changed meanwhile.
 * @throws the {@link ApiError} of a failed call.
 */
async function pollOnce(api: Api, s: FeedState, isCurrent: () => boolean): Promise<number | null> {
  const high = s.storedHigh;
  // Nothing held yet, so no `updated_at` to go from: whether anything matches at all.
  if (high === null) {
    const any = await api.countRequests(s.filter);
    if (!isCurrent()) return null;
    return any > 0 ? readAll(api, s, s.filter, isCurrent) : 0;
  }
  const from = high - STORE_LOOKBACK_MS;
  const windowFilter = storedSince(s.filter, isoOf(from));
  const stored = await api.countRequests(windowFilter);
  if (!isCurrent()) return null;
  if (stored <= heldSince(s, from)) return 0;
  // From the ms after the newest held: a storing statement gives all its rows one updated_at, so
  // `>= high` would read again every row of the last batch shown; one of that ms still missing is step 3's.
  const added = await readAll(api, s, storedSince(s.filter, isoOf(high + 1)), isCurrent);
  if (added === null || heldSince(s, from) >= stored) return added;
  const late = await readAll(api, s, windowFilter, isCurrent);
  return late === null ? null : added + late;
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
        const page = await api.queryRequests(s.filter, PAGE_SIZE, s.frontier ?? undefined);
        // The filter changed meanwhile: this page belongs to a listing no longer shown.
        if (gen !== state.current.gen) return;
        absorb(s, page);
        if (page.length > 0) s.frontier = cursorOf(page[page.length - 1]!);
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

  const poll = useCallback(
    async (gen: number) => {
      const s = state.current;
      if (!s.started) return;
      const before = s.rows;
      const added = await pollOnce(api, s, () => gen === state.current.gen);
      if (added === null || s.rows === before) return;
      setRows(s.rows);
      if (added > 0) setTotal((t) => (t === null ? t : t + added));
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
      // One poll at a time, and none while a page is coming or the tab is hidden.
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
    s.byId.set(id, s.rows[at]!);
    setRows(s.rows);
  }, []);
  return { rows, total, loading, done, loadMore, patch };
}
