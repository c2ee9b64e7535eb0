/**
 * What the rate limiter does while its shared store (Redis) cannot answer a check (timeout,
 * connection down or refused), per `rate-limit-store.fail-mode`:
 * - `local` (the default): the request is checked by a GCRA store in this process's memory with the
 *   same buckets and limits. Each proxy then enforces the full limit on its own, so N proxies admit
 *   at most N times the limit, instead of every request (open) or none (closed). The local buckets
 *   start full at the first failure and are kept for the next outage.
 * - `open`: admitted without a limit; `closed`: refused (503, Retry-After).
 * The caller counts every failed check (`onStoreError`, the store-errors metric); this module logs:
 * in `local` mode once when an outage starts (at most one start per {@link STORE_WARN_INTERVAL_MS},
 * should the store flap) and once when it answers again; the other warnings (connection errors, open
 * and closed modes) at most one per {@link STORE_WARN_INTERVAL_MS}.
 */
import type { GatewayConfig } from '../../shared/config.ts';
import type { GcraResult } from './gcra.ts';
import { MemoryStore } from './memory-store.ts';
import type { Bucket } from './store.ts';

/** Minimum interval between two store warnings in the log, in ms. */
export const STORE_WARN_INTERVAL_MS = 5000;

/** The log the handler writes to (pino's shape); `info` falls back to `warn` when absent. */
export interface StoreFailureLogger {
  warn(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
}

/** Throttled store warnings and, in `local` mode, the local fallback store and the outage's log. */
export class StoreFailure {
  /** True from a failed check in `local` mode until the store answers again. */
  inOutage = false;
  private local: MemoryStore | null = null;
  private outageStartedAt = 0;
  private outageChecks = 0;
  private outageLogged = false;
  private lastWarnAt = -Infinity;
  private suppressed = 0;
  /** When an outage's start was last logged: a store that flaps logs at most one per interval. */
  private lastOutageLogAt = -Infinity;

  /**
   * @param rl the `rateLimit` configuration (`store`, `failMode`, `cleanupIntervalMs`).
   * @param logger where warnings go; none: nothing is logged.
   * @param clock the local store's clock in ms (monotonic, ./clock.ts), also passed to each check.
   */
  constructor(
    private readonly rl: GatewayConfig['rateLimit'],
    private readonly logger: StoreFailureLogger | undefined,
    private readonly clock: () => number,
  ) {}

  /**
   * Logs `what` with the error, unless another warning was logged less than
   * {@link STORE_WARN_INTERVAL_MS} ago (then counts it in the next one's `suppressed`).
   * @returns whether it was logged.
   */
  warn(err: Error, what: string): boolean {
    const now = Date.now();
    if (now - this.lastWarnAt < STORE_WARN_INTERVAL_MS) {
      this.suppressed++;
      return false;
    }
    this.lastWarnAt = now;
    this.logger?.warn({ err: err.message, store: this.rl.store, failMode: this.rl.failMode, suppressed: this.suppressed }, what);
    this.suppressed = 0;
    return true;
  }

  /**
   * Checks `buckets` in the local store (`local` mode) after the shared store failed with `err`;
   * the first failure of an outage is logged.
   * @param nowMs the time on the limiter's clock, in ms.
   * @returns one {@link GcraResult} per bucket, as {@link MemoryStore.checkAll}.
   */
  limitLocally(err: Error, buckets: readonly Bucket[], cost: number, nowMs: number): GcraResult[] {
    if (!this.inOutage) {
      this.inOutage = true;
      this.outageStartedAt = Date.now();
      this.outageChecks = 0;
      // Its own throttle: connection errors logged through warn() must not hide the outage's start.
      this.outageLogged = this.outageStartedAt - this.lastOutageLogAt >= STORE_WARN_INTERVAL_MS;
      if (this.outageLogged) {
        this.lastOutageLogAt = this.outageStartedAt;
        this.logger?.warn(
          { err: err.message, store: this.rl.store, failMode: this.rl.failMode },
          'rate-limit store unavailable; limiting locally: each proxy enforces the full limit on its own until the store answers again',
        );
      }
    }
    this.outageChecks++;
    this.local ??= new MemoryStore({ cleanupIntervalMs: this.rl.cleanupIntervalMs, clock: this.clock });
    return this.local.checkAll(buckets, cost, nowMs);
  }

  /** Ends an outage: the store answered a check again. Logged when its start was. */
  recovered(): void {
    this.inOutage = false;
    if (!this.outageLogged || !this.logger) return;
    const obj = { store: this.rl.store, failMode: this.rl.failMode, outageMs: Date.now() - this.outageStartedAt, checkedLocally: this.outageChecks };
    const msg = 'rate-limit store answers again; limiting through it';
    if (this.logger.info) this.logger.info(obj, msg);
    else this.logger.warn(obj, msg);
  }

  /** Stops the local store's sweep and drops its buckets. Never rejects. */
  async close(): Promise<void> {
    await this.local?.close();
    this.local = null;
  }
}
