/**
 * The `weighted` load-balance strategy: each provider is chosen with probability proportional to
 * its configured weight (among the providers currently allowed).
 */

/** Weighted random choice over a fixed candidate list. */
export class WeightedBalancer<K extends string = string> {
  private readonly weights: Map<K, number>;

  /**
   * @param entries candidates with positive weights.
   * @param random random source in [0, 1); injectable for tests.
   */
  constructor(
    entries: ReadonlyArray<{ provider: K; weight: number }>,
    private readonly random: () => number = Math.random,
  ) {
    if (entries.length === 0) throw new Error('WeightedBalancer needs at least one candidate');
    this.weights = new Map(entries.map((e) => [e.provider, e.weight]));
  }

  /** Picks one of `allowed` by weight; null when `allowed` is empty. Unknown names weigh 0. */
  pick(allowed: readonly K[]): K | null {
    let total = 0;
    for (const k of allowed) total += this.weights.get(k) ?? 0;
    if (total <= 0) return allowed[0] ?? null;
    let r = this.random() * total;
    for (const k of allowed) {
      r -= this.weights.get(k) ?? 0;
      if (r < 0) return k;
    }
    return allowed[allowed.length - 1]!;
  }
}
