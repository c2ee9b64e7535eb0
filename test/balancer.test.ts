/** Unit tests: the latency strategy (peak EWMA + power of two choices). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyBalancer } from '../proxy/balancer/latency.ts';

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('the peak is taken at once, lower samples decay in', () => {
  const c = clock();
  const b = new LatencyBalancer(['a', 'b'], { now: c.now, decayMs: 1000, defaultRttMs: 100 });
  b.start('a');
  b.finish('a', 500);
  assert.equal(b.snapshot('a')!.ewmaMs, 500);
  c.advance(1000);
  b.start('a');
  b.finish('a', 100);
  const w = Math.exp(-1);
  assert.ok(Math.abs(b.snapshot('a')!.ewmaMs - (500 * w + 100 * (1 - w))) < 1e-9);
});

test('two choices: the lower estimate × (in-flight + 1) wins', () => {
  const c = clock();
  const seq = [0, 0]; // picks index 0, then index 1 (j ≥ i shifts)
  let k = 0;
  const b = new LatencyBalancer(['fast', 'slow'], { now: c.now, random: () => seq[k++ % 2]!, defaultRttMs: 100 });
  b.start('slow');
  b.finish('slow', 900);
  assert.equal(b.pick(), 'fast');
  // Load on the fast one shifts the choice: 100 × 11 > 900 × 1.
  for (let i = 0; i < 10; i++) b.start('fast');
  assert.equal(b.pick(), 'slow');
});

test('in-flight counts go down on finish and never below zero', () => {
  const b = new LatencyBalancer(['a']);
  b.start('a');
  b.finish('a', null);
  b.finish('a', null);
  assert.equal(b.snapshot('a')!.inFlight, 0);
  assert.equal(b.pick(), 'a');
  assert.equal(b.pick([]), null);
});

test('load spreads: under equal latency both providers get traffic', () => {
  const b = new LatencyBalancer(['a', 'b', 'c']);
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  for (let i = 0; i < 3000; i++) {
    const p = b.pick()!;
    counts[p]!++;
    b.start(p);
    b.finish(p, 100);
  }
  for (const n of Object.values(counts)) assert.ok(n > 600, JSON.stringify(counts));
});
