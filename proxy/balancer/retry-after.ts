/**
 * How long a router leaves a provider out after its 429: the provider's `Retry-After`, read as RFC 9110
 * §10.2.3 defines it (`delay-seconds`, or an `HTTP-date`: IMF-fixdate, and the obsolete RFC 850 and
 * asctime forms a recipient must also accept, §5.6.7), and capped at the router's `health.cool-down`
 * (30 s by default), the longest the router's health takes a failing provider out for. Uncapped, one
 * 429 saying `Retry-After: 100000` took the provider out of every model's pool for 27 hours; the
 * cap keeps a rate limit from outlasting the cool-down of a provider that fails outright, and the
 * probe sent after it finds out whether the limit still holds (a second 429 takes it out again).
 */

/** `delay-seconds`: digits (a fraction is accepted: some providers send `1.5`). */
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;
/** IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`). */
const GMT_DATE = /^[a-z]{3,9}, \d{2}[ -][a-z]{3}[ -]\d{2,4} \d{2}:\d{2}:\d{2} GMT$/i;
/** asctime (`Sun Nov  6 08:49:37 1994`): no zone written, and it is GMT. */
const ASCTIME = /^[a-z]{3} [a-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/i;

/**
 * The delay a `Retry-After` value asks for, at most `capMs`.
 * @param value the header's value as received, or undefined when absent.
 * @param nowMs the wall clock (ms since the epoch, `Date.now()`), against which an HTTP-date is read.
 * @param capMs the longest delay returned (ms): the router's `health.cool-down`.
 * @returns the delay in ms (0 for a date already past), or null when the value is absent or neither
 *   form (the router's default applies: 1 s).
 */
export function retryAfterMs(value: string | undefined, nowMs: number, capMs: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  let ms: number;
  if (DELAY_SECONDS.test(v)) ms = Number(v) * 1000;
  else if (GMT_DATE.test(v)) ms = Date.parse(v) - nowMs;
  else if (ASCTIME.test(v)) ms = Date.parse(`${v} GMT`) - nowMs;
  else return null;
  if (Number.isNaN(ms)) return null;
  return Math.min(Math.max(ms, 0), capMs);
}
