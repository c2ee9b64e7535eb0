/**
 * The generic cell rate algorithm (GCRA), "virtual scheduling" form, as a pure function.
 *
 * Source: ITU-T Recommendation I.371 (Traffic control and congestion control in B-ISDN), Annex A,
 * and the ATM Forum Traffic Management Specification 4.0, section 4.4.2 ("virtual scheduling
 * algorithm"). A readable secondary source is Brandur Leach, "Rate limiting, cells, and GCRA"
 * (https://brandur.org/rate-limiting), which is also the model of redis-cell and throttled.
 *
 * Terms, with a {@link GcraLimit} of burst `capacity` C refilled fully over `periodMs` P:
 * - emission interval T = P / C: the steady-state spacing of requests (ms);
 * - tolerance τ = P: how far ahead of `now` the theoretical arrival time may run (ms), which is what
 *   allows a burst of C requests;
 * - TAT, the theoretical arrival time of the key's next request (ms since the epoch); an unknown key
 *   has TAT = now (a full bucket).
 *
 * A request of weight `cost` computes TAT' = max(TAT, now) + T·cost. It is admitted iff
 * TAT' − τ ≤ now; an admitted request stores TAT', a denied one changes nothing.
 *
 * Exactness: times are floats in ms, but epoch-ms values (~1.7e12) only carry about 2.4e-4 ms of
 * resolution, so repeatedly adding a non-representable T (e.g. 1000/3) would drift and turn the last
 * request of a burst, or the boundary instant, into a denial. To keep every sum and comparison exact,
 * `now`, T and τ are quantised down to multiples of {@link TIME_QUANTUM_MS} (2^-10 ms, ~1 µs): sums of
 * such values below 2^43 ms (the year 2248) are exact in IEEE doubles, in JavaScript and in Redis Lua
 * alike. Rounding T down makes the admitted rate at most ~1 µs per emission faster than configured and
 * guarantees a full burst of C is always admitted (C·T ≤ τ).
 */
import type { GcraLimit } from '../../shared/config.ts';

/** Resolution of every time the algorithm computes with: 2^-10 ms (≈ 0.98 µs). */
export const TIME_QUANTUM_MS = 1 / 1024;
const PER_MS = 1024;

/** A bucket's stored state: its theoretical arrival time (TAT), in ms since the epoch. */
export interface GcraState {
  tat: number;
}

/**
 * The outcome of one GCRA step. All durations in ms, measured from the (quantised) `nowMs`.
 * - `allowed`: whether the request is admitted.
 * - `newTat`: when allowed, the TAT to store (TAT'); when denied, the TAT unchanged (the `tat`
 *   argument, or `nowMs` for an unknown key) — a denial must not be stored.
 * - `remaining`: how many more cost-1 requests would be admitted right after this one,
 *   floor((τ − (TAT' − now)) / T), clamped ≥ 0; 0 on a denial.
 * - `retryAfterMs`: 0 when allowed; otherwise how long until this same request would be admitted
 *   (TAT' − τ − now, > 0), or `Infinity` when `cost` exceeds the capacity (it can never be admitted).
 * - `resetAfterMs`: how long until the bucket is full again (the stored TAT − now, ≥ 0).
 */
export interface GcraResult {
  allowed: boolean;
  newTat: number;
  remaining: number;
  retryAfterMs: number;
  resetAfterMs: number;
}

/** Rounds a time or duration (ms) down to a multiple of {@link TIME_QUANTUM_MS}. */
export function quantizeMs(ms: number): number {
  return Math.floor(ms * PER_MS) / PER_MS;
}

/**
 * The emission interval T of a limit, in ms: `periodMs / capacity` rounded down to
 * {@link TIME_QUANTUM_MS}, and never below one quantum.
 */
export function emissionIntervalMs(limit: GcraLimit): number {
  return Math.max(TIME_QUANTUM_MS, quantizeMs(limit.periodMs / limit.capacity));
}

/**
 * The tolerance τ of a limit, in ms: `periodMs` rounded down to {@link TIME_QUANTUM_MS}, raised to
 * C·T if needed so that a full burst of `capacity` always fits.
 */
export function toleranceMs(limit: GcraLimit): number {
  return Math.max(quantizeMs(limit.periodMs), emissionIntervalMs(limit) * limit.capacity);
}

/**
 * One GCRA step for one bucket. Pure: it reads nothing but its arguments and stores nothing.
 *
 * @param tat the bucket's stored TAT in ms since the epoch, or `undefined` for an unknown (full)
 *   bucket. A TAT in the past is treated as `nowMs`.
 * @param nowMs the current time in ms since the epoch (any float; quantised down to 2^-10 ms).
 * @param limit burst `capacity` (requests, > 0) refilled fully over `periodMs` (ms, > 0).
 * @param cost the request's weight in cells, default 1; 0 only inspects.
 * @returns the verdict and the new state; see {@link GcraResult}.
 * @throws {RangeError} when `cost` is negative or not finite, or the limit's capacity or period is
 *   not a positive finite number.
 */
export function gcra(tat: number | undefined, nowMs: number, limit: GcraLimit, cost = 1): GcraResult {
  if (!Number.isFinite(cost) || cost < 0) throw new RangeError(`gcra: cost must be a finite number >= 0, got ${cost}`);
  if (!(limit.capacity > 0) || !(limit.periodMs > 0) || !Number.isFinite(limit.capacity) || !Number.isFinite(limit.periodMs)) {
    throw new RangeError(`gcra: capacity and periodMs must be positive, got ${limit.capacity} / ${limit.periodMs} ms`);
  }
  const t = emissionIntervalMs(limit);
  const tau = toleranceMs(limit);
  const now = quantizeMs(nowMs);
  // `!(tat >= now)` also maps NaN and undefined to `now`.
  const base = tat !== undefined && tat >= now ? tat : now;
  const increment = t * cost;
  const newTat = base + increment;
  const allowAt = newTat - tau;
  if (allowAt <= now) {
    const resetAfterMs = newTat - now;
    return { allowed: true, newTat, remaining: Math.max(0, Math.floor((tau - resetAfterMs) / t)), retryAfterMs: 0, resetAfterMs };
  }
  return {
    allowed: false,
    newTat: tat ?? now,
    remaining: 0,
    retryAfterMs: increment > tau ? Infinity : allowAt - now,
    resetAfterMs: base - now,
  };
}
