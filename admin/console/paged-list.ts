/**
 * A list read in offset pages (`limit` + `offset`), for the APIs that page that way (sessions and
 * a session's requests): the first page when the inputs change, the next one on "Load more".
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSession } from './session.tsx';

/** What {@link usePagedList} gives a page. */
export interface PagedList<T> {
  rows: T[];
  loading: boolean;
  /** True once a page came back shorter than asked: nothing more to load. */
  done: boolean;
  /** A page failed (shown in the error banner): the list is not known to be empty. */
  failed: boolean;
  loadMore: () => void;
}

/**
 * The rows `load(offset, limit)` answers, `pageSize` at a time, read from the start whenever `deps`
 * change. Failures go to the error banner and stop the paging.
 * @param idOf a row's identity: a row already held is not added twice (an offset page overlaps the
 *   one before when rows were added at the top in between).
 */
export function usePagedList<T>(load: (offset: number, limit: number) => Promise<T[]>, deps: unknown[], pageSize: number, idOf: (row: T) => string): PagedList<T> {
  const { reportError } = useSession();
  const [rows, setRows] = useState<T[]>([]);
  // Loading from the start: the first page is asked for at once, and no empty state may flash first.
  const [loading, setLoading] = useState(true);
  const [done, setDone] = useState(false);
  const [failed, setFailed] = useState(false);
  // The generation drops answers of a listing no longer shown; `load` is the latest render's, so
  // a page asked for after the inputs changed reads the new ones.
  const state = useRef({ gen: 0, rows: [] as T[], ids: new Set<string>(), paging: false, done: false });
  const loadRef = useRef(load);
  loadRef.current = load;

  const loadPage = useCallback(
    async (gen: number) => {
      const s = state.current;
      if (s.paging || s.done) return;
      s.paging = true;
      setLoading(true);
      try {
        const page = await loadRef.current(s.rows.length, pageSize);
        if (gen !== state.current.gen) return;
        const fresh = page.filter((r) => !s.ids.has(idOf(r)));
        for (const r of fresh) s.ids.add(idOf(r));
        s.rows = s.rows.concat(fresh);
        s.done = page.length < pageSize;
        setRows(s.rows);
        setDone(s.done);
      } catch (err) {
        if (gen !== state.current.gen) return;
        s.done = true; // A failing query is not retried by every "Load more".
        setDone(true);
        setFailed(true);
        reportError(err);
      } finally {
        s.paging = false;
        if (gen === state.current.gen) setLoading(false);
      }
    },
    // idOf is a pure accessor; a new one per render must not restart anything.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [pageSize, reportError],
  );

  useEffect(() => {
    const gen = state.current.gen + 1;
    state.current = { gen, rows: [], ids: new Set(), paging: false, done: false };
    setRows([]);
    setDone(false);
    setFailed(false);
    void loadPage(gen);
    // Unmounted or inputs changed: a page still on its way belongs to no list shown (no banner, no state).
    return () => {
      if (state.current.gen === gen) state.current.gen = gen + 1;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, loadPage]);

  const loadMore = useCallback(() => void loadPage(state.current.gen), [loadPage]);
  return { rows, loading, done, failed, loadMore };
}
