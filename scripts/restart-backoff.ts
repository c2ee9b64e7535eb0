/**
 * When `npm start` restarts a child that exited without being asked (scripts/supervisor.ts): after
 * an exponential delay, 1 s, 2 s, 4 s … capped at 30 s, that starts over once the child has run
 * for a minute after becoming ready; and not at all once it has failed to become ready 5 times in
 * a row (a broken setup, which restarting cannot mend: `npm start` then stops with code 1).
 * Pure bookkeeping, times passed in, so the policy is tested without processes.
 */

/** The policy's parameters, in ms and counts. */
export interface RestartPolicy {
  /** Delay before the first restart. */
  firstDelayMs: number;
  /** Most delay between restarts. */
  maxDelayMs: number;
  /** A child that ran this long after becoming ready counts as stable: the delay starts over. */
  stableAfterMs: number;
  /** This many exits in a row before becoming ready: give up. */
  maxFailedStarts: number;
}

/** The defaults: 1 s doubling to 30 s, stable after 60 s, give up after 5 failed starts. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = { firstDelayMs: 1_000, maxDelayMs: 30_000, stableAfterMs: 60_000, maxFailedStarts: 5 };

/** The restart bookkeeping of one child. */
export class RestartBackoff {
  /** Unrequested exits since the child last ran stably. */
  private crashes = 0;
  /** Unrequested exits in a row before becoming ready. */
  private failedStarts = 0;

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {}

  /**
   * Records an exit nobody asked for and says what to do.
   * @param readyForMs how long the child had been ready when it exited (ms), or null when it exited
   *   before becoming ready.
   * @returns the delay before restarting it (ms), or null to give up (too many failed starts).
   */
  crashed(readyForMs: number | null): number | null {
    if (readyForMs === null) this.failedStarts++;
    else this.failedStarts = 0;
    if (readyForMs !== null && readyForMs >= this.policy.stableAfterMs) this.crashes = 0;
    this.crashes++;
    if (this.failedStarts >= this.policy.maxFailedStarts) return null;
    // The exponent is capped so the power stays finite however long a child keeps crashing.
    const exponent = Math.min(this.crashes - 1, 30);
    return Math.min(this.policy.firstDelayMs * 2 ** exponent, this.policy.maxDelayMs);
  }

  /** Exits in a row before becoming ready (for the log line). */
  get failedStartsInARow(): number {
    return this.failedStarts;
  }
}
