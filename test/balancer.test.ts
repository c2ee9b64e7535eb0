/** Unit tests: the latency strategy (peak EWMA + power of two choices), failures as penalties; a 429's Retry-After. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FAILURE_PENALTY, LatencyBalancer } from '../proxy/balancer/latency.ts';
import { retryAfterMs } from '../proxy/balancer/retry-after.ts';
import type { RequestContext } from '../proxy/pipeline/context.ts';
import { failBalancer, settleBalancer } from '../proxy/upstream/balancer.ts';

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

describe('a failed attempt is a penalty, never a fast sample', () => {
  test('a fast failure raises the estimate to max(estimate, elapsed) × FAILURE_PENALTY', () => {
    const c = clock();
    const b = new LatencyBalancer(['a'], { now: c.now, decayMs: 10_000, defaultRttMs: 100 });
    b.start('a');
    b.fail('a', 2);
    assert.equal(b.snapshot('a')!.ewmaMs, 100 * FAILURE_PENALTY);
    assert.equal(b.snapshot('a')!.inFlight, 0);
    // A slow failure counts from its own time when that is larger.
    b.fail('a', 5_000);
    assert.equal(b.snapshot('a')!.ewmaMs, 5_000 * FAILURE_PENALTY);
  });

  test('the cap bounds the penalty, but never below the current estimate', () => {
    const c = clock();
    const b = new LatencyBalancer(['a'], { now: c.now, defaultRttMs: 100 });
    b.fail('a', 2, 500);
    assert.equal(b.snapshot('a')!.ewmaMs, 500);
    b.finish('a', 800);
    b.fail('a', 2, 500);
    assert.equal(b.snapshot('a')!.ewmaMs, 800, 'a cap below the estimate does not lower it');
  });

  test('the tester\'s case: a provider failing at once loses to one answering in 150 ms after one try', () => {
    const c = clock();
    const b = new LatencyBalancer(['failing', 'healthy'], { now: c.now });
    const sent: string[] = [];
    for (let i = 0; i < 14; i++) {
      const p = b.pick()!;
      sent.push(p);
      b.start(p);
      if (p === 'failing') {
        c.advance(2);
        b.fail(p, 2, 600_000);
      } else {
        c.advance(150);
        b.finish(p, 150);
      }
    }
    assert.ok(sent.filter((p) => p === 'failing').length <= 1, sent.join(' '));
  });

  test('the failing provider is tried again once its penalty has decayed (about 29 s at τ = 10 s)', () => {
    const c = clock();
    const b = new LatencyBalancer(['failing', 'healthy'], { now: c.now });
    b.finish('healthy', 150);
    b.fail('failing', 2);
    c.advance(20_000);
    b.finish('healthy', 150);
    assert.ok(b.score('failing') > b.score('healthy'), 'still out after 20 s');
    c.advance(10_000);
    b.finish('healthy', 150);
    assert.ok(b.score('failing') < b.score('healthy'), 'probed again after 30 s');
  });
});

describe('the router\'s outcomes: settleBalancer', () => {
  /** The fields settleBalancer reads of a request, around a real balancer. */
  function attempt(b: LatencyBalancer) {
    b.start('a');
    return { balancerOpen: true, provider: 'a', router: { latency: b }, gw: { config: { server: { upstreamTimeoutMs: 600_000 } } } } as unknown as RequestContext;
  }

  test('an answer below 400 is a sample; 5xx and 429 a penalty; another 4xx says nothing of speed', () => {
    const c = clock();
    const b = new LatencyBalancer(['a'], { now: c.now, defaultRttMs: 100 });
    c.advance(10_000);
    settleBalancer(attempt(b), 200, 40);
    const afterOk = b.snapshot('a')!.ewmaMs;
    assert.ok(Math.abs(afterOk - (100 * Math.exp(-1) + 40 * (1 - Math.exp(-1)))) < 1e-9, `a success is a sample: ${afterOk}`);
    for (const status of [400, 401, 403, 404, 413, 422]) {
      settleBalancer(attempt(b), status, 1);
      assert.equal(b.snapshot('a')!.ewmaMs, afterOk, `${status} leaves the estimate`);
      assert.equal(b.snapshot('a')!.inFlight, 0, `${status} ends the count`);
    }
    settleBalancer(attempt(b), 500, 1);
    assert.ok(Math.abs(b.snapshot('a')!.ewmaMs - afterOk * FAILURE_PENALTY) < 1e-9, `500: ${b.snapshot('a')!.ewmaMs}`);
    const after500 = b.snapshot('a')!.ewmaMs;
    settleBalancer(attempt(b), 429, 1);
    assert.ok(b.snapshot('a')!.ewmaMs > after500, '429 is a failure too');
    assert.equal(b.snapshot('a')!.inFlight, 0);
  });

  test('the penalty is capped at the upstream timeout; a connection failure counts as one', () => {
    const b = new LatencyBalancer(['a'], { now: () => 0 });
    const ctx = attempt(b);
    failBalancer(ctx, 600_000);
    assert.equal(b.snapshot('a')!.ewmaMs, 600_000);
    failBalancer(ctx, 1);
    assert.equal(b.snapshot('a')!.inFlight, 0, 'an attempt is ended once');
  });
});

describe("Retry-After: how long a router leaves a provider out after its 429 (proxy/balancer/retry-after.ts)", () => {
  const NOW = Date.parse('2025-06-01T12:00:00Z');
  const CAP = 30_000;

  test('delay-seconds, a fraction accepted', () => {
    assert.equal(retryAfterMs('20', NOW, CAP), 20_000);
    assert.equal(retryAfterMs(' 0 ', NOW, CAP), 0);
    assert.equal(retryAfterMs('1.5', NOW, CAP), 1500);
  });

  test('capped at the cool-down: Retry-After 100000 is not 27 hours', () => {
    assert.equal(retryAfterMs('100000', NOW, CAP), CAP);
    assert.equal(retryAfterMs('100000', NOW, 5000), 5000);
  });

  test('an HTTP-date in each of the three forms RFC 9110 §5.6.7 has a recipient accept, read as GMT', () => {
    assert.equal(retryAfterMs('Sun, 01 Jun 2025 12:00:20 GMT', NOW, CAP), 20_000);
    assert.equal(retryAfterMs('Sunday, 01-Jun-25 12:00:20 GMT', NOW, CAP), 20_000);
    assert.equal(retryAfterMs('Sun Jun  1 12:00:20 2025', NOW, CAP), 20_000);
    assert.equal(retryAfterMs(new Date(NOW + 7000).toUTCString(), NOW, CAP), 7000);
  });

  test('a date far ahead is capped, one already past is no delay', () => {
    assert.equal(retryAfterMs('Mon, 02 Jun 2025 12:00:00 GMT', NOW, CAP), CAP);
    assert.equal(retryAfterMs('Sat, 31 May 2025 12:00:00 GMT', NOW, CAP), 0);
  });

  test('absent or neither form: null (the router waits its default 1 s)', () => {
    for (const v of [undefined, '', 'soon', '-5', '1e3', '0x10', '120 seconds', 'Sun, 01 Jun 2025 12:00:20', 'Sun, 99 Foo 2025 12:00:20 GMT']) {
      assert.equal(retryAfterMs(v, NOW, CAP), null, String(v));
    }
  });
});
