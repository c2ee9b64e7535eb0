import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig, type GatewayConfig, type GcraLimit, type RateLimitLevel } from '../shared/config.ts';
import { gcra, type GcraResult, type GcraState } from '../proxy/ratelimit/gcra.ts';
import { MemoryStore } from '../proxy/ratelimit/memory-store.ts';
import { createRateLimiter, rateLimitHeaders, type RateLimitDecision, type RateLimiter, type RateLimitRequest } from '../proxy/ratelimit/index.ts';

/** A realistic epoch-ms instant, so float resolution matters as in production. */
const T0 = 1_750_000_000_000;
const NONE: RateLimitLevel = { perApiKey: null, perUser: null };
/** The organization of the requests that do not test organizations. */
const ORG = 'org-1';

/** An instant in ms as the stores pass it to gcra: whole µs, rounded down. */
const us = (ms: number): number => Math.floor(ms * 1000);
/** A TAT at a whole-µs instant in ms. */
const at = (ms: number): GcraState => ({ us: us(ms), rem: 0 });
/** The stored state of a result. */
const stateOf = (r: GcraResult): GcraState => ({ us: r.tatUs, rem: r.tatRem });
/** The pure step on an instant in ms. */
const step = (tat: GcraState | undefined, nowMs: number, limit: GcraLimit, cost?: number): GcraResult => gcra(tat, us(nowMs), limit, cost);

/** Runs a sequence of requests (instants in ms) on one bucket, storing the TAT only when allowed (as the stores do). */
function run(limit: GcraLimit, times: number[], cost = 1, start?: GcraState): { results: GcraResult[]; tat: GcraState | undefined } {
  let tat = start;
  const results: GcraResult[] = [];
  for (const now of times) {
    const r = step(tat, now, limit, cost);
    if (r.allowed) tat = stateOf(r);
    results.push(r);
  }
  return { results, tat };
}

function config(global: RateLimitLevel, routers: Record<string, RateLimitLevel> = {}): GatewayConfig {
  // createRateLimiter reads only `rateLimit` and `routers[*].rateLimit`.
  return {
    rateLimit: { global, store: 'in-memory', redisUrl: null, failMode: 'open', storeTimeoutMs: 100, cleanupIntervalMs: 0 },
    routers: Object.fromEntries(Object.entries(routers).map(([name, rateLimit]) => [name, { name, rateLimit }])),
  } as unknown as GatewayConfig;
}

function syncCheck(limiter: RateLimiter, req: RateLimitRequest, now: number): RateLimitDecision {
  const d = limiter.check(req, now);
  assert.ok(!(d instanceof Promise), 'the in-memory limiter answers synchronously');
  return d as RateLimitDecision;
}

describe('gcra (pure algorithm)', () => {
  const C10: GcraLimit = { capacity: 10, periodMs: 1000 }; // T = 100 ms, τ = 1000 ms

  test('vector table', () => {
    const vectors: { name: string; limit: GcraLimit; tat: GcraState | undefined; now: number; cost?: number; want: Partial<GcraResult> }[] = [
      { name: 'unknown key', limit: C10, tat: undefined, now: T0, want: { allowed: true, tatUs: us(T0 + 100), tatRem: 0, remaining: 9, retryAfterMs: 0, resetAfterMs: 100 } },
      { name: 'TAT in the past = unknown key', limit: C10, tat: at(T0 - 5000), now: T0, want: { allowed: true, tatUs: us(T0 + 100), tatRem: 0, remaining: 9 } },
      { name: 'last of the burst', limit: C10, tat: at(T0 + 900), now: T0, want: { allowed: true, tatUs: us(T0 + 1000), tatRem: 0, remaining: 0, resetAfterMs: 1000 } },
      { name: 'burst exhausted', limit: C10, tat: at(T0 + 1000), now: T0, want: { allowed: false, tatUs: us(T0 + 1000), tatRem: 0, remaining: 0, retryAfterMs: 100, resetAfterMs: 1000 } },
      { name: 'boundary instant admitted', limit: C10, tat: at(T0 + 1000), now: T0 + 100, want: { allowed: true, tatUs: us(T0 + 1100), tatRem: 0, remaining: 0 } },
      { name: 'just before the boundary', limit: C10, tat: at(T0 + 1000), now: T0 + 99.9, want: { allowed: false, retryAfterMs: 0.1 } }, // now is rounded down to a whole µs: ≈ 0.1
      { name: 'cost fits', limit: C10, tat: undefined, now: T0, cost: 10, want: { allowed: true, tatUs: us(T0 + 1000), tatRem: 0, remaining: 0 } },
      { name: 'cost above capacity', limit: C10, tat: undefined, now: T0, cost: 11, want: { allowed: false, tatUs: us(T0), tatRem: 0, retryAfterMs: Infinity, remaining: 0 } },
      { name: 'cost 0 only inspects', limit: C10, tat: at(T0 + 500), now: T0, cost: 0, want: { allowed: true, tatUs: us(T0 + 500), tatRem: 0, remaining: 5 } },
    ];
    for (const v of vectors) {
      const got = step(v.tat, v.now, v.limit, v.cost);
      for (const [k, want] of Object.entries(v.want)) {
        const value = got[k as keyof GcraResult] as number | boolean;
        if (k === 'retryAfterMs' && typeof want === 'number' && Number.isFinite(want) && want % 1 !== 0) {
          assert.ok(Math.abs((value as number) - want) < 0.002, `${v.name}: ${k} = ${value}, want ≈ ${want}`);
        } else {
          assert.equal(value, want, `${v.name}: ${k}`);
        }
      }
    }
  });

  test('a burst of C, then a denial with the exact retry-after', () => {
    const { results, tat } = run(C10, Array(11).fill(T0));
    assert.deepEqual(results.slice(0, 10).map((r) => r.allowed), Array(10).fill(true));
    assert.deepEqual(results.slice(0, 10).map((r) => r.remaining), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const denied = results[10]!;
    assert.equal(denied.allowed, false);
    assert.equal(denied.retryAfterMs, 100);
    assert.equal(denied.resetAfterMs, 1000);
    assert.deepEqual(tat, at(T0 + 1000));
    // Waiting exactly retryAfterMs admits it.
    assert.equal(step(tat, T0 + denied.retryAfterMs, C10).allowed, true);
  });

  test('a steady rate of one per T is never denied', () => {
    const times = Array.from({ length: 5000 }, (_, i) => T0 + i * 100);
    const { results } = run(C10, times);
    assert.ok(results.every((r) => r.allowed && r.remaining === 9));
  });

  test('partial refill', () => {
    let { tat } = run(C10, Array(10).fill(T0));
    // 250 ms later, 2.5 cells have refilled: two requests pass, the third waits 50 ms.
    const r = run(C10, [T0 + 250, T0 + 250, T0 + 250], 1, tat);
    assert.deepEqual(r.results.map((x) => x.allowed), [true, true, false]);
    assert.equal(r.results[2]!.retryAfterMs, 50);
    tat = r.tat;
    assert.deepEqual(tat, at(T0 + 1200));
  });

  test('non-integer emission interval (C=3, P=1 s)', () => {
    const limit: GcraLimit = { capacity: 3, periodMs: 1000 };
    const burst = run(limit, Array(4).fill(T0));
    assert.deepEqual(burst.results.map((r) => r.allowed), [true, true, true, false]);
    assert.deepEqual(burst.results.map((r) => r.remaining), [2, 1, 0, 0]);
    const retry = burst.results[3]!.retryAfterMs;
    assert.ok(Math.abs(retry - 1000 / 3) < 1e-9, `retry-after ${retry}`);
    // The TAT is 1000 ms + 1/3 µs ahead: whole µs 1000 ms (rem 1 of 3).
    assert.deepEqual(burst.tat, { us: us(T0 + 1000), rem: 0 });
    assert.equal(gcra(burst.tat, us(T0) + 333_334, limit).allowed, true, 'admitted at the first whole µs after retry-after');
    assert.equal(gcra(burst.tat, us(T0) + 333_333, limit).allowed, false, 'denied just before');
    // Steady at exactly 3 per second for a long while, on float instants: never denied, no drift. (An
    // instant is rounded down to a whole µs while the TAT keeps its thirds, so the TAT may be up to
    // 1 µs more than T ahead of it: remaining then reads 1, not 2.)
    const steady = run(limit, Array.from({ length: 30_000 }, (_, i) => T0 + (i * 1000) / 3));
    assert.ok(steady.results.every((r) => r.allowed && r.remaining >= 1));
    const last = steady.results.at(-1)!;
    assert.ok(last.resetAfterMs <= 1000 / 3 + 0.001, `no drift: the TAT is ${last.resetAfterMs} ms ahead`);
    // Bursts of 3 every second for a long while, on the same TAT chain: always exactly 3.
    let tat: GcraState | undefined;
    for (let s = 0; s < 2000; s++) {
      const r = run(limit, Array(4).fill(T0 + s * 1000), 1, tat);
      assert.deepEqual(r.results.map((x) => x.allowed), [true, true, true, false], `second ${s}`);
      tat = r.tat;
    }
  });

  test('denials consume nothing', () => {
    let { tat } = run(C10, Array(10).fill(T0));
    for (let i = 0; i < 50; i++) {
      const r = step(tat, T0 + i, C10);
      assert.equal(r.allowed, false);
      assert.deepEqual(stateOf(r), tat);
      if (r.allowed) tat = stateOf(r);
    }
    assert.equal(step(tat, T0 + 100, C10).allowed, true);
  });

  test('a cost larger than C is always denied and never consumes', () => {
    const limit: GcraLimit = { capacity: 5, periodMs: 1000 };
    for (const tat of [undefined, at(T0 - 10_000), at(T0 + 200)]) {
      const r = step(tat, T0, limit, 6);
      assert.equal(r.allowed, false);
      assert.equal(r.retryAfterMs, Infinity);
      assert.deepEqual(stateOf(r), tat ?? at(T0));
    }
    const after = step(undefined, T0 + 1e9, limit, 6);
    assert.equal(after.allowed, false, 'even after any wait');
  });

  test('invalid arguments throw RangeError', () => {
    assert.throws(() => step(undefined, T0, C10, -1), RangeError);
    assert.throws(() => step(undefined, T0, C10, NaN), RangeError);
    assert.throws(() => step(undefined, T0, { capacity: 0, periodMs: 1000 }), RangeError);
    assert.throws(() => step(undefined, T0, { capacity: 2.5, periodMs: 1000 }), RangeError);
  });
});

describe('in-memory limiter', () => {
  test('null when no limits are configured anywhere', () => {
    assert.equal(createRateLimiter(config(NONE, { r: NONE }), {}), null);
  });

  test('global first, then the router; the tightest level decides', async () => {
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 2, periodMs: 1000 }, perUser: null }, { r: { perApiKey: { capacity: 5, periodMs: 1000 }, perUser: null } }), {})!;
    const req = { organizationId: ORG, apiKeyHash: 'h1', userId: null, router: 'r' };
    const d1 = syncCheck(limiter, req, T0);
    assert.equal(d1.allowed, true);
    assert.equal(d1.policy, 'global-api-key');
    assert.equal(d1.limit, 2);
    assert.equal(d1.remaining, 1);
    assert.equal(syncCheck(limiter, req, T0).allowed, true);
    const d3 = syncCheck(limiter, req, T0);
    assert.equal(d3.allowed, false);
    assert.equal(d3.policy, 'global-api-key');
    assert.equal(d3.retryAfterMs, 500);
    // The router bucket kept 3 of 5: the global denial consumed nothing from it.
    const viaRouterOnly = createRateLimiter(config(NONE, { r: { perApiKey: { capacity: 5, periodMs: 1000 }, perUser: null } }), {})!;
    assert.equal(syncCheck(viaRouterOnly, req, T0).remaining, 4);
    await limiter.close();
    await viaRouterOnly.close();
  });

  test('a request denied at the router level consumes nothing globally', async () => {
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 5, periodMs: 1000 }, perUser: null }, { r: { perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null } }), {})!;
    const viaRouter = { organizationId: ORG, apiKeyHash: 'h', userId: null, router: 'r' };
    const direct = { organizationId: ORG, apiKeyHash: 'h', userId: null, router: null };
    assert.equal(syncCheck(limiter, viaRouter, T0).allowed, true); // global 4 left, router 0
    for (let i = 0; i < 10; i++) {
      const d = syncCheck(limiter, viaRouter, T0);
      assert.equal(d.allowed, false);
      assert.equal(d.policy, 'router-r-api-key');
      assert.equal(d.retryAfterMs, 1000);
    }
    const d = syncCheck(limiter, direct, T0);
    assert.equal(d.allowed, true);
    assert.equal(d.remaining, 3, 'global budget untouched by the 10 router denials');
    await limiter.close();
  });

  test('when several levels deny, the longest wait decides', async () => {
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null }, { r: { perApiKey: null, perUser: { capacity: 1, periodMs: 10_000 } } }), {})!;
    const req = { organizationId: ORG, apiKeyHash: 'h', userId: 'u', router: 'r' };
    assert.equal(syncCheck(limiter, req, T0).allowed, true);
    const d = syncCheck(limiter, req, T0);
    assert.equal(d.allowed, false);
    assert.equal(d.policy, 'router-r-user');
    assert.equal(d.retryAfterMs, 10_000);
    await limiter.close();
  });

  test('per-user buckets are keyed separately; null ids skip their levels', async () => {
    const limiter = createRateLimiter(config({ perApiKey: null, perUser: { capacity: 1, periodMs: 1000 } }), {})!;
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'h', userId: 'alice', router: null }, T0).allowed, true);
    const denied = syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'h', userId: 'alice', router: null }, T0);
    assert.equal(denied.allowed, false);
    assert.equal(denied.policy, 'global-user');
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'h', userId: 'bob', router: null }, T0).allowed, true);
    const noUser = syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'h', userId: null, router: null }, T0);
    assert.equal(noUser.allowed, true);
    assert.equal(noUser.policy, 'none');
    assert.deepEqual(rateLimitHeaders(noUser), {});
    // A long user id is hashed into the key, still separately from others.
    const long = 'x'.repeat(10_000);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: null, userId: long, router: null }, T0).allowed, true);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: null, userId: long, router: null }, T0).allowed, false);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: null, userId: long + 'y', router: null }, T0).allowed, true);
    await limiter.close();
  });

  test('api keys are keyed separately; unknown router has no router levels', async () => {
    const limiter = createRateLimiter(config(NONE, { r: { perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null } }), {})!;
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'a', userId: null, router: 'r' }, T0).allowed, true);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'a', userId: null, router: 'r' }, T0).allowed, false);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'b', userId: null, router: 'r' }, T0).allowed, true);
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: 'a', userId: null, router: 'other' }, T0).policy, 'none');
    assert.equal(syncCheck(limiter, { organizationId: ORG, apiKeyHash: null, userId: null, router: 'r' }, T0).policy, 'none');
    await limiter.close();
  });

  test('uses the injected clock when nowMs is omitted; cost is honoured', async () => {
    let now = T0;
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 4, periodMs: 1000 }, perUser: null }), { clock: () => now })!;
    const req = { organizationId: ORG, apiKeyHash: 'h', userId: null, router: null, cost: 3 };
    assert.equal((limiter.check(req) as RateLimitDecision).remaining, 1);
    assert.equal((limiter.check(req) as RateLimitDecision).allowed, false);
    now += 400; // 1.6 cells back, 3 needed: wait 100 ms more
    const denied = limiter.check(req) as RateLimitDecision;
    assert.equal(denied.allowed, false);
    assert.equal(denied.retryAfterMs, 100);
    now += 100;
    const d = limiter.check(req) as RateLimitDecision;
    assert.equal(d.allowed, true);
    assert.equal(d.remaining, 0);
    assert.throws(() => limiter.check({ ...req, cost: -1 }), RangeError);
    await limiter.close();
  });

  test('built from a gateway.yaml document', async () => {
    const cfg = buildConfig(
      {
        global: { 'rate-limit': { 'per-api-key': { capacity: 3, 'refill-frequency': '1s' } } },
        routers: {
          team: {
            'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } },
            'rate-limit': { 'per-user': { capacity: 2, 'refill-frequency': '1m' } },
          },
        },
      },
      {},
    );
    const limiter = createRateLimiter(cfg, {})!;
    const req = { organizationId: ORG, apiKeyHash: 'k', userId: 'u', router: 'team' };
    assert.equal(syncCheck(limiter, req, T0).allowed, true);
    assert.equal(syncCheck(limiter, req, T0).allowed, true);
    const d = syncCheck(limiter, req, T0);
    assert.equal(d.allowed, false);
    assert.equal(d.policy, 'router-team-user');
    assert.equal(d.retryAfterMs, 30_000);
    await limiter.close();
  });
});

describe('in-memory limiter: organizations and exact capacity', () => {
  test('per-user buckets belong to an organization: one exhausting "alice" leaves another organization\'s "alice" alone', async () => {
    const perUser: RateLimitLevel = { perApiKey: null, perUser: { capacity: 4, periodMs: 3_600_000 } };
    // The global level, then a router's alone.
    for (const [limiter, router] of [[createRateLimiter(config(perUser), {})!, null], [createRateLimiter(config(NONE, { r: perUser }), {})!, 'r']] as const) {
      const a = { organizationId: 'org-a', apiKeyHash: 'ka', userId: 'alice', router };
      for (let i = 0; i < 4; i++) assert.equal(syncCheck(limiter, a, T0).allowed, true, `org A request ${i + 1}`);
      assert.equal(syncCheck(limiter, a, T0).allowed, false, 'org A: the fifth is denied');
      const b = syncCheck(limiter, { organizationId: 'org-b', apiKeyHash: 'kb', userId: 'alice', router }, T0);
      assert.equal(b.allowed, true, `org B's alice is not org A's (router ${router})`);
      assert.equal(b.remaining, 3);
      assert.equal(b.policy, router === null ? 'global-user' : 'router-r-user');
      await limiter.close();
    }
  });

  for (const capacity of [3000, 50_000, 100_000]) {
    test(`${capacity} per 1 s: a fresh bucket admits exactly ${capacity} at one instant, remaining counts down from ${capacity - 1}`, async () => {
      const limiter = createRateLimiter(config({ perApiKey: { capacity, periodMs: 1000 }, perUser: null }), {})!;
      const req = { organizationId: ORG, apiKeyHash: `burst-${capacity}`, userId: null, router: null };
      let admitted = 0;
      let expected = capacity - 1;
      for (let i = 0; i < capacity + 100; i++) {
        const d = syncCheck(limiter, req, T0);
        if (!d.allowed) continue;
        admitted++;
        if (d.remaining !== expected) assert.fail(`request ${i + 1}: remaining ${d.remaining}, want ${expected} (limit ${d.limit})`);
        expected--;
      }
      assert.equal(admitted, capacity);
      await limiter.close();
    });
  }

  for (const capacity of [3000, 50_000]) {
    test(`${capacity} per 1 s sustained: after the burst, exactly ${capacity} per second, counted at every ms`, async () => {
      const limiter = createRateLimiter(config({ perApiKey: { capacity, periodMs: 1000 }, perUser: null }), {})!;
      const req = { organizationId: ORG, apiKeyHash: `sustained-${capacity}`, userId: null, router: null };
      let admitted = 0;
      for (let ms = 0; ms <= 2000; ms++) {
        // As many as are admitted at this instant, then one denial.
        for (;;) {
          const d = syncCheck(limiter, req, T0 + ms);
          if (!d.allowed) {
            if (d.retryAfterMs <= 0) assert.fail(`${ms} ms: a denial without a wait`);
            break;
          }
          admitted++;
        }
        const want = capacity + Math.floor((ms * capacity) / 1000);
        if (admitted !== want) assert.fail(`${ms} ms after the burst: ${admitted} admitted, want ${want}`);
      }
      await limiter.close();
    });
  }

  test('Retry-After and the rate-limit headers of an exhausted 3000 per 1 s bucket', async () => {
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 3000, periodMs: 1000 }, perUser: null }), {})!;
    const req = { organizationId: ORG, apiKeyHash: 'headers-3000', userId: null, router: null };
    const first = rateLimitHeaders(syncCheck(limiter, req, T0));
    assert.equal(first['ratelimit'], '"global-api-key";r=2999;t=1');
    assert.equal(first['x-ratelimit-remaining'], '2999');
    for (let i = 1; i < 3000; i++) syncCheck(limiter, req, T0);
    const denied = syncCheck(limiter, req, T0);
    assert.equal(denied.allowed, false);
    assert.ok(Math.abs(denied.retryAfterMs - 1 / 3) < 1e-9, `retry after ${denied.retryAfterMs} ms: one emission interval`);
    assert.equal(denied.resetAfterMs, 1000);
    assert.deepEqual(rateLimitHeaders(denied), {
      'retry-after': '1',
      'ratelimit-policy': '"global-api-key";q=3000;w=1',
      ratelimit: '"global-api-key";r=0;t=1',
      'x-ratelimit-limit': '3000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1',
    });
    // Instants a double holds exactly at epoch scale: 1/4 ms is before one emission interval (1/3 ms), 1/2 ms after.
    assert.equal(syncCheck(limiter, req, T0 + 0.25).allowed, false, 'denied before its retry time');
    assert.equal(syncCheck(limiter, req, T0 + 0.5).allowed, true, 'admitted once one emission interval has passed');
    await limiter.close();
  });
});

describe('in-memory store cleanup', () => {
  const limit: GcraLimit = { capacity: 10, periodMs: 1000 };

  test('removes buckets whose TAT has passed, keeps the others', () => {
    let now = T0;
    const store = new MemoryStore({ cleanupIntervalMs: 0, clock: () => now });
    store.checkAll([{ key: 'a', limit, policy: 'p' }], 1, T0); // TAT T0+100
    store.checkAll([{ key: 'b', limit, policy: 'p' }], 5, T0); // TAT T0+500
    assert.equal(store.size, 2);
    now = T0 + 100;
    assert.equal(store.cleanup(), 1);
    assert.deepEqual([...store.tats.keys()], ['b']);
    assert.equal(store.cleanup(T0 + 499), 0);
    assert.equal(store.cleanup(T0 + 500), 1);
    assert.equal(store.size, 0);
  });

  test('a denied multi-bucket check stores nothing', () => {
    const store = new MemoryStore({ cleanupIntervalMs: 0 });
    const small: GcraLimit = { capacity: 1, periodMs: 1000 };
    store.checkAll([{ key: 'small', limit: small, policy: 'p' }], 1, T0);
    const r = store.checkAll([{ key: 'fresh', limit, policy: 'p' }, { key: 'small', limit: small, policy: 'p' }], 1, T0);
    assert.deepEqual(r.map((x) => x.allowed), [true, false]);
    assert.equal(store.tats.has('fresh'), false);
  });

  test('memory stays flat under many distinct keys', () => {
    const store = new MemoryStore({ cleanupIntervalMs: 0 });
    for (let round = 0; round < 3; round++) {
      const start = T0 + round * 10_000;
      for (let i = 0; i < 200_000; i++) store.checkAll([{ key: `k${round}:${i}`, limit, policy: 'p' }], 1, start);
      assert.equal(store.size, 200_000);
      store.cleanup(start + 1000);
      assert.equal(store.size, 0);
    }
  });

  test('the cleanup timer is unref()ed and stopped by close()', async () => {
    const store = new MemoryStore({ cleanupIntervalMs: 10 });
    store.checkAll([{ key: 'a', limit, policy: 'p' }], 1, Date.now() - 5000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(store.size, 0, 'the timer swept the idle bucket');
    await store.close();
  });
});

describe('rateLimitHeaders', () => {
  test('denied: Retry-After rounds up, IETF and X- fields', () => {
    const d: RateLimitDecision = { allowed: false, limit: 10, remaining: 0, resetAfterMs: 1000, retryAfterMs: 100, policy: 'global-api-key', windowMs: 1000 };
    assert.deepEqual(rateLimitHeaders(d), {
      'retry-after': '1',
      'ratelimit-policy': '"global-api-key";q=10;w=1',
      ratelimit: '"global-api-key";r=0;t=1',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1',
    });
    assert.equal(rateLimitHeaders({ ...d, retryAfterMs: 1000 })['retry-after'], '1');
    assert.equal(rateLimitHeaders({ ...d, retryAfterMs: 1000.5 })['retry-after'], '2');
    assert.equal(rateLimitHeaders({ ...d, retryAfterMs: 333.33 })['retry-after'], '1');
    assert.equal(rateLimitHeaders({ ...d, retryAfterMs: Infinity })['retry-after'], undefined);
  });

  test('admitted: limit and remaining, no Retry-After', () => {
    const limiter = createRateLimiter(config({ perApiKey: { capacity: 10, periodMs: 60_000 }, perUser: null }), {})!;
    const req = { organizationId: ORG, apiKeyHash: 'h', userId: null, router: null };
    syncCheck(limiter, req, T0);
    const h = rateLimitHeaders(syncCheck(limiter, req, T0));
    assert.deepEqual(h, {
      'ratelimit-policy': '"global-api-key";q=10;w=60',
      ratelimit: '"global-api-key";r=8;t=12',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '8',
      'x-ratelimit-reset': '12',
    });
    void limiter.close();
  });

  test('fail-closed decision: only Retry-After', () => {
    assert.deepEqual(
      rateLimitHeaders({ allowed: false, limit: Infinity, remaining: 0, resetAfterMs: 0, retryAfterMs: 1000, policy: 'store-unavailable', storeUnavailable: true }),
      { 'retry-after': '1' },
    );
  });
});
