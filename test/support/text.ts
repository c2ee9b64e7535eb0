/**
 * Deterministic text for token-count tests and the estimator's benchmark (bench/estimate.ts).
 */

/**
 * A seeded pseudo-random generator (32-bit LCG, Numerical Recipes constants): the same `seed`
 * gives the same sequence of numbers in [0, 1).
 */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** English function words and the project's own vocabulary, the words {@link prose} draws from. */
const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her ' +
  'gateway provider request token limit model context window message system user assistant tool function estimate count ' +
  'encoding budget chunk sample latency throughput server client header response stream error retry fallback truncate ' +
  'middle conversation history summary analysis report quarterly revenue growth market customer product engineering team ' +
  'although however therefore meanwhile nevertheless approximately significantly particularly internationalization'
).split(' ');

/**
 * Deterministic ASCII prose of exactly `chars` characters (words, commas, full stops, numbers below
 * `maxNumber`, paragraph breaks).
 * @param seed the generator's seed; the same arguments give the same text.
 */
export function prose(chars: number, seed = 1, maxNumber = 10_000): string {
  const r = rng(seed);
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    let w = WORDS[Math.floor(r() * WORDS.length)]!;
    const x = r();
    if (x < 0.06) w += ',';
    else if (x < 0.1) w += '.';
    else if (x < 0.12) w = String(Math.floor(r() * maxNumber));
    else if (x < 0.13) w += '\n\n';
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ').slice(0, chars);
}
