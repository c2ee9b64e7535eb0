/**
 * Pages and panels loaded on first use (React `lazy`), with one more try when their chunk cannot be
 * fetched: admin restarting under an open page answers nothing for a moment, and Chromium fetches a
 * failed module again on the next `import()`. A chunk that stays missing (admin upgraded: the build
 * names its chunks by content hash) fails again and reaches components/load-boundary.tsx.
 */
import { lazy, type ComponentType } from 'react';

/** How long before the one retry (ms): long enough for a restarting admin to listen again. */
const RETRY_AFTER_MS = 1_000;

/**
 * `lazy()` of the component `pick` takes from the module `load` imports, imported a second time
 * {@link RETRY_AFTER_MS} after a first failure.
 */
export function lazyWithRetry<M, P extends object>(load: () => Promise<M>, pick: (m: M) => ComponentType<P>) {
  return lazy(async () => {
    let module: M;
    try {
      module = await load();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
      module = await load();
    }
    return { default: pick(module) };
  });
}
