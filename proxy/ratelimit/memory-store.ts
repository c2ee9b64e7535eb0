/**
 * The in-memory rate-limit store: one Map from bucket key to its TAT ({@link GcraState}: µs since the
 * epoch on the limiter's monotonic clock, see ./clock.ts, and the fraction of a µs), local to this gateway process. Synchronous on the request path. Buckets whose TAT has passed are full again and
 * equivalent to an absent key, so a periodic sweep removes them and memory stays bounded by the keys
 * active within one refill period plus one cleanup interval.
 */
import { monotonicNowMs } from './clock.ts';
import { gcra, type GcraResult, type GcraState } from './gcra.ts';
import type { Bucket, RateLimitStore } from './store.ts';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Interval of the idle-bucket sweep, in ms; 0 or less disables the timer (tests call {@link MemoryStore.cleanup}). */
  cleanupIntervalMs: number;
  /** The clock the sweep uses, in ms; default {@link monotonicNowMs} (give checks the same clock). */
  clock?: () => number;
}

/** In-memory GCRA store. Check-then-commit is trivially atomic: JavaScript runs it without interleaving. */
export class MemoryStore implements RateLimitStore {
  /**
   * TAT per bucket key. Exposed for tests and metrics; do not write. A bucket's state object is
   * updated in place, so a request on a known bucket allocates nothing here.
   */
  readonly tats = new Map<string, GcraState>();
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.clock ?? monotonicNowMs;
    if (options.cleanupIntervalMs > 0) {
      this.timer = setInterval(() => this.cleanup(this.clock()), options.cleanupIntervalMs);
      this.timer.unref();
    }
  }

  /** Number of buckets held. */
  get size(): number {
    return this.tats.size;
  }

  /** See {@link RateLimitStore.checkAll}; synchronous, never throws for valid limits. */
  checkAll(buckets: readonly Bucket[], cost: number, nowMs: number): GcraResult[] {
    const results: GcraResult[] = new Array(buckets.length);
    const nowUs = Math.floor(nowMs * 1000);
    let allowed = true;
    for (let i = 0; i < buckets.length; i++) {
      const b = buckets[i]!;
      const r = gcra(this.tats.get(b.key), nowUs, b.limit, cost);
      results[i] = r;
      if (!r.allowed) allowed = false;
    }
    if (allowed) {
      for (let i = 0; i < buckets.length; i++) {
        const key = buckets[i]!.key;
        const r = results[i]!;
        const state = this.tats.get(key);
        if (state) {
          state.us = r.tatUs;
          state.rem = r.tatRem;
        } else {
          this.tats.set(key, { us: r.tatUs, rem: r.tatRem });
        }
      }
    }
    return results;
  }

  /**
   * Removes every bucket whose TAT is at or before `nowMs` (a full bucket, same as an absent one).
   * @param nowMs the current time in ms since the epoch; default the store's clock.
   * @returns the number of buckets removed.
   */
  cleanup(nowMs: number = this.clock()): number {
    const nowUs = Math.floor(nowMs * 1000);
    let removed = 0;
    for (const [key, tat] of this.tats) {
      // A fraction of a µs left (rem > 0) is still ahead of a `now` equal to `us`.
      if (tat.us + (tat.rem > 0 ? 1 : 0) <= nowUs) {
        this.tats.delete(key);
        removed++;
      }
    }
    return removed;
  }

  /** Stops the sweep timer and drops all buckets. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.tats.clear();
  }
}
