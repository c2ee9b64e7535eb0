/** Small React hooks shared by the pages. */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSession } from './session.tsx';

/** `value`, settled: it changes only once `value` has stayed the same for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/**
 * Loads with `load` whenever `deps` change (the latest call wins; an older answer is dropped) and
 * reports failures to the error banner. `reload` runs it again.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; loading: boolean; reload: () => void } {
  const { reportError } = useSession();
  const [data, setData] = useState<T | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const id = ++latest.current;
    setLoading(true);
    load().then(
      (d) => {
        if (id === latest.current) setData(d);
      },
      (err) => {
        if (id === latest.current) reportError(err);
      },
    ).finally(() => {
      if (id === latest.current) setLoading(false);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, loading, reload };
}

/** Runs `handler` for keydown events on the window while mounted. */
export function useKeydown(handler: (e: KeyboardEvent) => void): void {
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => {
    const on = (e: KeyboardEvent) => ref.current(e);
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, []);
}
