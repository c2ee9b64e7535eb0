/**
 * The `latency` load-balance strategy: per provider a peak-EWMA estimate of latency, and the
 * power of two choices — two distinct random candidates, the one with the lower
 * estimate × (in-flight + 1) wins.
 *
 * Sources: Finagle's "Peak EWMA" load balancer (Twitter, 2016; `com.twitter.finagle.loadbalancer.
 * PeakEwma`), as described in Buoyant's "Beyond Round Robin: Load Balancing for Latency" (2016) and
 * implemented by linkerd2-proxy/tower-balance; Mitzenmacher, "The Power of Two Choices in Randomized
 * Load Balancing", IEEE TPDS 12(10), 2001.
 *
 * Peak EWMA: on each observed latency `rtt` (ms) at time `now` (ms): when `rtt` exceeds the current
 * estimate the estimate jumps to it (the peak); otherwise it decays toward it with weight
 * w = exp(−Δt/τ), estimate = estimate·w + rtt·(1 − w). τ (decay time) defaults to 10 s.
 *
 * Failures ({@link LatencyBalancer.fail}): a failed attempt is observed as a penalty, never as its
 * own (often short) time — a provider answering 500 at once would otherwise look like the fastest and
 * draw every request until health ejection. The penalty follows ServiceTalk's peak-EWMA tracker
 * (Apple, `io.servicetalk.loadbalancer.DefaultRequestTracker`, `DEFAULT_ERROR_PENALTY = 10`: an error
 * is observed as max(estimate, latency) × 10); the same fault in EWMA balancers is described in
 * kubernetes/ingress-nginx#9882 and #5540 (fast failures skew traffic to the failing backend).
 * Finagle and linkerd2's tower PeakEwma time failures like successes and leave them to failure
 * accrual; the router's health does that here too, but only after `health.min-requests`.
 */

/** Per-provider state of the latency balancer. */
export interface LatencyStats {
  /** Current peak-EWMA latency estimate (ms). */
  ewmaMs: number;
  /** Time of the last update (ms, monotonic clock). */
  lastUpdateMs: number;
  /** Requests sent to this provider that have not finished. */
  inFlight: number;
}

/** Options of {@link LatencyBalancer}. */
export interface LatencyBalancerOptions {
  /** Decay time τ of the EWMA (ms). Default 10,000. */
  decayMs?: number;
  /** Estimate of a provider with no observation yet (ms). Default 100. */
  defaultRttMs?: number;
  /** Random source in [0, 1); injectable for tests. */
  random?: () => number;
  /** Monotonic clock (ms); injectable for tests. */
  now?: () => number;
}

/**
 * How many times its estimate a failed attempt counts (see the file's comment: ServiceTalk's
 * `DEFAULT_ERROR_PENALTY`). With the default estimate of 100 ms a first failure observes 1,000 ms,
 * which decays below a healthy 150 ms provider's estimate after about 29 s (τ = 10 s): the failing
 * provider is probed again about as often as the router's health cool-down (30 s) would.
 */
export const FAILURE_PENALTY = 10;

/** Peak-EWMA + power-of-two-choices balancer over a fixed list of candidates (provider names). */
export class LatencyBalancer<K extends string = string> {
  private readonly stats = new Map<K, LatencyStats>();
  private readonly decayMs: number;
  private readonly defaultRttMs: number;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(
    readonly candidates: readonly K[],
    options: LatencyBalancerOptions = {},
  ) {
    if (candidates.length === 0) throw new Error('LatencyBalancer needs at least one candidate');
    this.decayMs = options.decayMs ?? 10_000;
    this.defaultRttMs = options.defaultRttMs ?? 100;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => performance.now());
    for (const c of candidates) this.stats.set(c, { ewmaMs: this.defaultRttMs, lastUpdateMs: this.now(), inFlight: 0 });
  }

  /** The load score of a candidate: decayed estimate × (in-flight + 1). Lower is better. */
  score(candidate: K): number {
    const s = this.stats.get(candidate)!;
    return this.decayed(s) * (s.inFlight + 1);
  }

  private decayed(s: LatencyStats): number {
    // Without new observations the estimate decays toward the default, so a provider that was slow
    // once gets probed again eventually.
    const elapsed = Math.max(0, this.now() - s.lastUpdateMs);
    const w = Math.exp(-elapsed / this.decayMs);
    return s.ewmaMs * w + this.defaultRttMs * (1 - w);
  }

  /**
   * Picks a candidate among `allowed` (default: all) by the power of two choices.
   * @returns the chosen candidate, or null when `allowed` is empty.
   */
  pick(allowed: readonly K[] = this.candidates): K | null {
    const n = allowed.length;
    if (n === 0) return null;
    if (n === 1) return allowed[0]!;
    const i = Math.floor(this.random() * n);
    let j = Math.floor(this.random() * (n - 1));
    if (j >= i) j++;
    const a = allowed[i]!;
    const b = allowed[j]!;
    return this.score(a) <= this.score(b) ? a : b;
  }

  /** Marks a request to `candidate` as started (in-flight + 1). */
  start(candidate: K): void {
    const s = this.stats.get(candidate);
    if (s) s.inFlight++;
  }

  /**
   * Records a finished request: in-flight − 1 and, when `rttMs` is given (time to response
   * headers, ms), the peak-EWMA update.
   */
  finish(candidate: K, rttMs: number | null): void {
    const s = this.stats.get(candidate);
    if (!s) return;
    if (s.inFlight > 0) s.inFlight--;
    if (rttMs !== null) this.observe(s, rttMs);
  }

  /**
   * Records a failed request (connection error, timeout, 429, 5xx): in-flight − 1 and the peak-EWMA
   * update with the penalty max(current estimate, elapsedMs) × {@link FAILURE_PENALTY}, capped at
   * `capMs` but never below the current estimate: a failure never makes a provider look faster.
   * The current estimate is the decayed one the choice uses ({@link score} without the load), so a
   * provider probed again once its penalty decayed is penalised from there, not from the old peak.
   * @param elapsedMs time from sending to the failure (ms).
   * @param capMs the largest penalty (ms); the router passes the upstream timeout, the longest a
   *   provider may hold a request anyway, so a burst of failures does not push it out for minutes.
   */
  fail(candidate: K, elapsedMs: number, capMs = Infinity): void {
    const s = this.stats.get(candidate);
    if (!s) return;
    if (s.inFlight > 0) s.inFlight--;
    const current = this.decayed(s);
    let penalty = (current > elapsedMs ? current : elapsedMs) * FAILURE_PENALTY;
    if (penalty > capMs) penalty = capMs > current ? capMs : current;
    this.observe(s, penalty);
  }

  /** The peak-EWMA update of `s` with one observation (ms). */
  private observe(s: LatencyStats, rttMs: number): void {
    const now = this.now();
    if (rttMs > s.ewmaMs) {
      s.ewmaMs = rttMs;
    } else {
      const w = Math.exp(-Math.max(0, now - s.lastUpdateMs) / this.decayMs);
      s.ewmaMs = s.ewmaMs * w + rttMs * (1 - w);
    }
    s.lastUpdateMs = now;
  }

  /** A copy of a candidate's state (for tests and /health). */
  snapshot(candidate: K): LatencyStats | undefined {
    const s = this.stats.get(candidate);
    return s ? { ...s } : undefined;
  }
}
