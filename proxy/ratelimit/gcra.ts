/**
 * The generic cell rate algorithm (GCRA), "virtual scheduling" form, as a pure function.
 *
 * Source: ITU-T Recommendation I.371 (Traffic control and congestion control in B-ISDN), Annex A,
 * and the ATM Forum Traffic Management Specification 4.0, section 4.4.2 ("virtual scheduling
 * algorithm"). A readable secondary source is Brandur Leach, "Rate limiting, cells, and GCRA"
 * (https://brandur.org/rate-limiting), which is also the model of redis-cell and throttled.
 *
 * Terms, with a {@link GcraLimit} of burst `capacity` C refilled fully over the period P:
 * - emission interval T = P / C: the steady-state spacing of requests;
 * - tolerance τ = T·(C − 1) (I.371's limit L): how far ahead of `now` the theoretical arrival time
 *   may be when a request arrives, which is what allows a burst of exactly C;
 * - TAT, the theoretical arrival time of the key's next request; an unknown key has TAT = now (a
 *   full bucket).
 *
 * A request of weight `cost` computes TAT' = max(TAT, now) + T·cost. It is admitted iff
 * TAT' − now ≤ τ + T = C·T = P (for cost 1, I.371's TAT ≤ now + τ); an admitted request stores TAT',
 * a denied one changes nothing. A fresh bucket therefore admits exactly C at one instant, and then
 * one per T.
 *
 * Exactness: T = P / C is seldom a whole number of any time unit (1 s / 3000 = 333.3… µs), and
 * rounding it makes the sustained rate wrong (rounded down to ~1 µs, 50,000 per second admitted
 * 51,200). So times are integers in µs, and a TAT carries the fraction of a µs as a count of
 * 1/C µs: TAT = `us` + `rem`/C µs with 0 ≤ `rem` < C. In those ticks T is exactly P (in µs) ticks and
 * C·T exactly P µs, so every sum and comparison is integer arithmetic: exact in IEEE doubles below
 * 2^53 (µs since the epoch: until the year 2255), in JavaScript and in the Redis Lua script alike
 * (redis-store.ts runs the same steps). The period is rounded to a whole µs.
 */
import type { GcraLimit } from '../../shared/config.ts';

/**
 * A bucket's stored state, its theoretical arrival time: `us` µs since the epoch (an integer) plus
 * `rem` / capacity µs (an integer, 0 ≤ rem < capacity, as {@link gcra} leaves it).
 */
export interface GcraState {
  us: number;
  rem: number;
}

/**
 * The outcome of one GCRA step. Durations in ms (fractional), measured from `nowUs`.
 * - `allowed`: whether the request is admitted.
 * - `tatUs`, `tatRem`: the state to store ({@link GcraState}) when allowed (TAT'); when denied, the
 *   state given unchanged (`nowUs`, 0 for an unknown key) — a denial must not be stored.
 * - `remaining`: how many more cost-1 requests would be admitted right after this one,
 *   floor((P − (TAT' − now)) / T), between 0 and C − 1 after an admitted request of cost ≥ 1;
 *   0 on a denial.
 * - `retryAfterMs`: 0 when allowed; otherwise how long until this same request would be admitted
 *   (TAT' − P − now, > 0), or `Infinity` when `cost` exceeds the capacity (it can never be admitted).
 * - `resetAfterMs`: how long until the bucket is full again (the stored TAT − now, ≥ 0).
 */
export interface GcraResult {
  allowed: boolean;
  tatUs: number;
  tatRem: number;
  remaining: number;
  retryAfterMs: number;
  resetAfterMs: number;
}

/** The period P of a limit in whole µs (at least 1): T is P ticks of 1/capacity µs. */
export function periodUs(limit: GcraLimit): number {
  return Math.max(1, Math.round(limit.periodMs * 1000));
}

/**
 * One GCRA step for one bucket. Pure: it reads nothing but its arguments and stores nothing.
 *
 * @param tat the bucket's stored state, or `undefined` for an unknown (full) bucket. A TAT in the
 *   past, or more than the period P ahead of `nowUs` (the clock stepped back), is treated as `nowUs`.
 * @param nowUs the current time in µs since the epoch (rounded down to an integer).
 * @param limit burst `capacity` (an integer > 0) refilled fully over `periodMs` (ms, > 0).
 * @param cost the request's weight in cells, default 1; 0 only inspects. A fractional cost is
 *   rounded up to a whole tick (1/capacity µs).
 * @returns the verdict and the new state; see {@link GcraResult}.
 * @throws {RangeError} when `cost` is negative or not finite, the capacity is not a positive
 *   integer, or the period not a positive finite number.
 */
export function gcra(tat: GcraState | undefined, nowUs: number, limit: GcraLimit, cost = 1): GcraResult {
  if (!Number.isFinite(cost) || cost < 0) throw new RangeError(`gcra: cost must be a finite number >= 0, got ${cost}`);
  const c = limit.capacity;
  if (!Number.isInteger(c) || c <= 0 || !(limit.periodMs > 0) || !Number.isFinite(limit.periodMs)) {
    throw new RangeError(`gcra: capacity must be a positive integer and periodMs positive, got ${c} / ${limit.periodMs} ms`);
  }
  const p = periodUs(limit);
  const now = Math.floor(nowUs);
  // An unknown key or a TAT in the past is a full bucket: base = now. (`!(us >= now)` also maps NaN to now.)
  // So is a TAT more than the whole tolerance C·T = P ahead, which no admitted request stores: the
  // clock stepped back since (NTP step, VM restore), and keeping it would refuse the key for the step.
  const past = tat === undefined || !(tat.us >= now) || tat.us - now > p || (tat.us - now === p && tat.rem > 0);
  const baseUs = past ? now : tat.us;
  const baseRem = past ? 0 : tat.rem;
  // T·cost in ticks of 1/c µs; the carry moves whole µs out of the remainder.
  const total = baseRem + Math.ceil(p * cost);
  const carry = Math.floor(total / c);
  const newUs = baseUs + carry;
  const newRem = total - carry * c;
  const aheadUs = newUs - now; // TAT' − now, whole µs (plus newRem / c)
  if (aheadUs < p || (aheadUs === p && newRem === 0)) {
    // floor((P − (TAT' − now)) / T) in ticks; at most C, and below C once a cell is taken.
    const remaining = Math.floor(((p - aheadUs) * c - newRem) / p);
    return { allowed: true, tatUs: newUs, tatRem: newRem, remaining: Math.min(c, Math.max(0, remaining)), retryAfterMs: 0, resetAfterMs: (aheadUs + newRem / c) / 1000 };
  }
  return {
    allowed: false,
    tatUs: tat === undefined ? now : tat.us,
    tatRem: tat === undefined ? 0 : tat.rem,
    remaining: 0,
    retryAfterMs: cost > c ? Infinity : (aheadUs - p + newRem / c) / 1000,
    resetAfterMs: (baseUs - now + baseRem / c) / 1000,
  };
}
