/**
 * The clock of the in-memory rate limiting: monotonic, so a wall-clock step (NTP step, VM restore,
 * an operator's `date -s`) neither refuses a key for the length of a backward step nor refills every
 * bucket on a forward one.
 */

/**
 * The current time in ms (fractional): the process's start on the wall clock
 * (`performance.timeOrigin`, read once) plus the monotonic time since (`performance.now()`). It looks
 * like ms since the epoch (so µs stay integers below 2^53 as gcra.ts needs) but never goes back and
 * does not follow steps of the wall clock after the process started; it may drift from `Date.now()`.
 */
export function monotonicNowMs(): number {
  return performance.timeOrigin + performance.now();
}
