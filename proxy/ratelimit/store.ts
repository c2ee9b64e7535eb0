/**
 * The small interface both rate-limit stores (in-memory and Redis) implement: check every bucket a
 * request touches, then commit all of them or none.
 */
import type { GcraLimit } from '../../shared/config.ts';
import type { GcraResult } from './gcra.ts';

/**
 * One bucket a request is checked against.
 * - `key`: the bucket's storage key, e.g. `svc:rl:global:key:<hash>` or `svc:rl:router:<name>:user:<id>`.
 * - `limit`: its GCRA limit (burst `capacity`, `periodMs` in ms).
 * - `policy`: the level and kind it stands for, e.g. `global-api-key`, `router-<name>-user`.
 */
export interface Bucket {
  key: string;
  limit: GcraLimit;
  policy: string;
}

/** A rate-limit store: TATs per bucket key. */
export interface RateLimitStore {
  /**
   * Runs GCRA on every bucket, in order, at one instant; if and only if every bucket admits the
   * request, stores every bucket's new TAT (atomically with respect to other checks). Returns one
   * {@link GcraResult} per bucket, in the same order.
   * @param buckets the buckets of the request (non-empty).
   * @param cost the request's weight in cells (≥ 0).
   * @param nowMs the current time in ms since the epoch; a store with its own clock (Redis) ignores it.
   * @throws (or rejects with) an Error when the store cannot answer (Redis down, timeout).
   */
  checkAll(buckets: readonly Bucket[], cost: number, nowMs: number): GcraResult[] | Promise<GcraResult[]>;
  /** Releases timers and connections. Never rejects. */
  close(): Promise<void>;
}
