/**
 * Per-request deadlines without a timer per request.
 *
 * Each in-flight request carries a deadline (ms on the `performance.now()` clock, `Infinity` when
 * nothing is awaited). One interval timer sweeps the tracked requests every `tickMs` and hands the
 * ones whose deadline has passed to `onExpired`. A request costs an array push and a swap-remove
 * plus a number written whenever its deadline moves (a body chunk, an upstream chunk), where a Node
 * timer per request would cost a timer-list insert and removal each time.
 *
 * The tracked items sit in a plain array, each knowing its own slot. (A `Set` was measured keeping
 * finished requests reachable past V8's young-generation collections: ~2.5 MB promoted to the old
 * generation per scavenge under load, ~8 µs of GC per request.)
 *
 * Precision: a deadline fires between 0 and `tickMs` late.
 */

/**
 * Anything with a deadline: `deadlineMs` on the `performance.now()` clock (ms), `Infinity` for
 * none, and `deadlineSlot`, which only {@link Deadlines} writes (start it at -1: not tracked).
 */
export interface HasDeadline {
  deadlineMs: number;
  deadlineSlot: number;
}

/** The tracked requests and the sweep timer. */
export class Deadlines<T extends HasDeadline> {
  private readonly items: T[] = [];
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

  /** Starts watching `item`'s deadline (no-op when it is already tracked). */
  track(item: T): void {
    if (item.deadlineSlot >= 0 && this.items[item.deadlineSlot] === item) return;
    item.deadlineSlot = this.items.length;
    this.items.push(item);
  }

  /** Stops watching `item` (no-op when it is not tracked). */
  untrack(item: T): void {
    const slot = item.deadlineSlot;
    if (slot < 0 || this.items[slot] !== item) return;
    const last = this.items.pop()!;
    if (last !== item) {
      this.items[slot] = last;
      last.deadlineSlot = slot;
    }
    item.deadlineSlot = -1;
  }

  /**
   * A copy of the tracked items, for the rare walk over all of them (a graceful stop cutting what
   * is left); the copy lets the caller untrack while it walks.
   */
  snapshot(): T[] {
    return this.items.slice();
  }

  /** How many items are tracked. */
  get size(): number {
    return this.items.length;
  }

  /** Checks every tracked item now (also run by the timer). */
  sweep(nowMs: number = performance.now()): void {
    // Backwards: an item `onExpired` untracks is replaced by the last one, which was already checked.
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item !== undefined && item.deadlineMs <= nowMs) this.onExpired(item, nowMs);
    }
  }

  /** Stops the sweep timer and forgets every item. */
  close(): void {
    clearInterval(this.timer);
    for (const item of this.items) item.deadlineSlot = -1;
    this.items.length = 0;
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
