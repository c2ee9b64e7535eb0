/**
 * Per-request deadlines without a timer per request.
 *
 * Each in-flight request carries a deadline (ms on the `performance.now()` clock, `Infinity` when
 * nothing is awaited). One interval timer sweeps the tracked requests every `tickMs` and hands the
 * ones whose deadline has passed to `onExpired`. A request costs a Set insert and delete plus a
 * number written whenever its deadline moves (a body chunk, an upstream chunk), where a Node timer
 * per request would cost a timer-list insert and removal each time.
 *
 * Precision: a deadline fires between 0 and `tickMs` late.
 */

/** Anything with a deadline: `deadlineMs` on the `performance.now()` clock (ms), `Infinity` for none. */
export interface HasDeadline {
  deadlineMs: number;
}

/** The set of tracked requests and the sweep timer. */
export class Deadlines<T extends HasDeadline> {
  private readonly tracked = new Set<T>();
  private readonly timer: NodeJS.Timeout;

  /**
   * @param tickMs sweep interval (ms, ≥ 1); the timer is unref'd, so it never keeps the process alive.
   * @param onExpired called once per sweep for each tracked item whose deadline has passed; it must
   *   move the deadline (or untrack the item), or it is called again on the next sweep.
   */
  constructor(tickMs: number, private readonly onExpired: (item: T, nowMs: number) => void) {
    this.timer = setInterval(() => this.sweep(), Math.max(1, tickMs));
    this.timer.unref();
  }

  /** Starts watching `item`'s deadline. */
  track(item: T): void {
    this.tracked.add(item);
  }

  /** Stops watching `item` (no-op when it is not tracked). */
  untrack(item: T): void {
    this.tracked.delete(item);
  }

  /** How many items are tracked. */
  get size(): number {
    return this.tracked.size;
  }

  /** Checks every tracked item now (also run by the timer). */
  sweep(nowMs: number = performance.now()): void {
    for (const item of this.tracked) {
      if (item.deadlineMs <= nowMs) this.onExpired(item, nowMs);
    }
  }

  /** Stops the sweep timer. */
  close(): void {
    clearInterval(this.timer);
    this.tracked.clear();
  }
}

/**
 * The sweep interval for a set of timeouts: an eighth of the shortest, between 10 and 250 ms, so a
 * timeout fires at most 12.5 % (and at most 250 ms) late.
 * @param timeoutsMs the timeouts the deadlines implement (ms).
 */
export function sweepIntervalMs(...timeoutsMs: number[]): number {
  return Math.min(250, Math.max(10, Math.floor(Math.min(...timeoutsMs) / 8)));
}
