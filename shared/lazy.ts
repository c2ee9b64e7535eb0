/**
 * Loading a module on first use instead of at start, for dependencies a default configuration never
 * needs (each costs the process several MiB of RSS once imported).
 */

/**
 * Wraps an async loader (typically `() => import('pkg').then(...)`) so it runs once: every call
 * returns the same promise. A failed load is forgotten, so the next call tries again.
 * @param load the loader; its rejection reaches the callers of that attempt.
 * @returns a function returning the loaded value's promise.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = null;
      throw err;
    }));
}
