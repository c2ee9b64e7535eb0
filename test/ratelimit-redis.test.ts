/**
 * The Redis rate-limit store against the real Redis at redis://127.0.0.1:6379. These tests FAIL (not
 * skip) when that Redis is unreachable.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { GatewayConfig, RateLimitLevel } from '../shared/config.ts';
import { createRateLimiter, rateLimitHeaders, type RateLimitDecision, type RateLimiter, type RateLimiterDeps } from '../proxy/ratelimit/index.ts';
import { GCRA_LUA, RedisStore } from '../proxy/ratelimit/redis-store.ts';
import type { Bucket } from '../proxy/ratelimit/store.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `svc:rltest:${randomUUID()}:`;
const NONE: RateLimitLevel = { perApiKey: null, perUser: null };
/** The organization of the requests that do not test organizations. */
const ORG = 'org-1';

function config(
  global: RateLimitLevel,
  routers: Record<string, RateLimitLevel> = {},
  store: Partial<GatewayConfig['rateLimit']> = {},
): GatewayConfig {
  // createRateLimiter reads only `rateLimit` and `routers[*].rateLimit`.
  return {
    rateLimit: { global, store: 'redis', redisUrl: REDIS_URL, failMode: 'open', storeTimeoutMs: 500, cleanupIntervalMs: 0, ...store },
    routers: Object.fromEntries(Object.entries(routers).map(([name, rateLimit]) => [name, { name, rateLimit }])),
  } as unknown as GatewayConfig;
}

const opened: RateLimiter[] = [];
function limiter(cfg: GatewayConfig, deps: RateLimiterDeps = {}): RateLimiter {
  const l = createRateLimiter(cfg, { keyPrefix: PREFIX, ...deps });
  assert.ok(l, 'limits are configured');
  opened.push(l);
  return l;
}

let admin: Redis;

before(async () => {
  admin = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on('error', () => {});
  await admin.connect(); // rejects, failing the suite, when Redis is unreachable
  assert.equal(await admin.ping(), 'PONG');
});

after(async () => {
  await Promise.all(opened.map((l) => l.close()));
  if (admin?.status === 'ready') {
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  } else {
    admin?.disconnect();
  }
});

describe('redis rate-limit store', () => {
  test('two gateway processes share one budget exactly', async () => {
    const cfg = config({ perApiKey: { capacity: 5, periodMs: 60_000 }, perUser: null }); // T = 12 s
    const a = limiter(cfg);
    const b = limiter(cfg);
    const req = { organizationId: ORG, apiKeyHash: 'shared', userId: null, router: null };
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 5; i++) decisions.push(await (i % 2 ? b : a).check(req));
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true]);
    assert.deepEqual(decisions.map((d) => d.remaining), [4, 3, 2, 1, 0]);
    const denied = await b.check(req);
    assert.equal(denied.allowed, false);
    assert.equal(denied.policy, 'global-api-key');
    assert.ok(denied.retryAfterMs > 11_000 && denied.retryAfterMs <= 12_000, `retry-after ${denied.retryAfterMs} ms`);
    assert.equal(rateLimitHeaders(denied)['retry-after'], '12');
    assert.equal((await a.check(req)).allowed, false);
    // The key expires when its TAT passes (≈ 60 s from now).
    const pttl = await admin.pttl(`${PREFIX}global:key:shared`);
    assert.ok(pttl > 55_000 && pttl <= 60_000, `pttl ${pttl}`);
  });

  test('concurrent checks from two processes admit exactly C', async () => {
    const cfg = config({ perApiKey: { capacity: 10, periodMs: 600_000 }, perUser: null });
    const a = limiter(cfg);
    const b = limiter(cfg);
    const req = { organizationId: ORG, apiKeyHash: 'concurrent', userId: null, router: null };
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).check(req)));
    assert.equal(decisions.filter((d) => d.allowed).length, 10);
    assert.ok(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterMs > 0 && d.policy === 'global-api-key'));
  });

  test('all levels in one atomic script: a router denial consumes nothing globally', async () => {
    const cfg = config({ perApiKey: { capacity: 5, periodMs: 60_000 }, perUser: null }, { r: { perApiKey: null, perUser: { capacity: 1, periodMs: 60_000 } } });
    const l = limiter(cfg);
    const viaRouter = { organizationId: ORG, apiKeyHash: 'atomic', userId: 'u1', router: 'r' };
    assert.equal((await l.check(viaRouter)).allowed, true);
    const denied = await Promise.all(Array.from({ length: 10 }, () => l.check(viaRouter)));
    assert.ok(denied.every((d) => !d.allowed && d.policy === 'router-r-user'));
    const direct = await l.check({ organizationId: ORG, apiKeyHash: 'atomic', userId: 'u1', router: null });
    assert.equal(direct.allowed, true);
    assert.equal(direct.remaining, 3, 'global bucket: 1 admitted via the router + this one');
    assert.equal(await admin.exists(`${PREFIX}router:r:user:${ORG}:u1`), 1);
  });

  test('non-integer emission interval round-trips exactly through Redis (C=3, P=1 s)', async () => {
    const l = limiter(config({ perApiKey: null, perUser: { capacity: 3, periodMs: 1000 } }));
    const req = { organizationId: ORG, apiKeyHash: null, userId: 'thirds', router: null };
    const d = await Promise.all([l.check(req), l.check(req), l.check(req), l.check(req)]);
    assert.equal(d.filter((x) => x.allowed).length, 3);
    const stored = await admin.get(`${PREFIX}global:user:${ORG}:thirds`);
    assert.match(stored ?? '', /^\d+:[0-2]$/, 'TAT as µs and thirds of a µs');
  });

  test('fail-open when Redis is unreachable: admitted quickly, onStoreError called, warning logged', async () => {
    const errors: Error[] = [];
    const warnings: object[] = [];
    const l = limiter(config({ perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null }, {}, { redisUrl: 'redis://127.0.0.1:1', storeTimeoutMs: 200 }), {
      onStoreError: (err) => errors.push(err),
      logger: { warn: (obj) => warnings.push(obj) },
    });
    const started = Date.now();
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 3; i++) decisions.push(await l.check({ organizationId: ORG, apiKeyHash: 'down', userId: null, router: null }));
    assert.ok(Date.now() - started < 3000, 'never hangs');
    assert.ok(decisions.every((d) => d.allowed && !d.storeUnavailable && d.policy === 'store-unavailable'));
    assert.equal(errors.length, 3);
    assert.ok(warnings.length >= 1 && warnings.length <= 2, `warnings are throttled (${warnings.length})`);
    assert.deepEqual(rateLimitHeaders(decisions[0]!), {});
  });

  test('fail-closed denies with storeUnavailable', async () => {
    const errors: Error[] = [];
    const l = limiter(
      config({ perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null }, {}, { redisUrl: 'redis://127.0.0.1:1', storeTimeoutMs: 200, failMode: 'closed' }),
      { onStoreError: (err) => errors.push(err) },
    );
    const started = Date.now();
    const d = await l.check({ organizationId: ORG, apiKeyHash: 'down', userId: null, router: null });
    assert.ok(Date.now() - started < 3000, 'never hangs');
    assert.equal(d.allowed, false);
    assert.equal(d.storeUnavailable, true);
    assert.equal(errors.length, 1);
    assert.deepEqual(rateLimitHeaders(d), { 'retry-after': '1' });
  });

  test('requests without applicable levels resolve without touching Redis', async () => {
    const l = limiter(config(NONE, { r: { perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null } }, { redisUrl: 'redis://127.0.0.1:1' }));
    const d = await l.check({ organizationId: ORG, apiKeyHash: 'x', userId: null, router: null });
    assert.equal(d.allowed, true);
    assert.equal(d.policy, 'none');
  });
});

/** A realistic instant, in µs since the epoch, for the frozen clock. */
const T0_US = 1_750_000_000_000_000;
const CLOCK_KEY = `${PREFIX}clock`;
const openedStores: RedisStore[] = [];

/**
 * A RedisStore whose script reads the Redis hash {@link CLOCK_KEY} (fields s, us: seconds and
 * microseconds, as TIME answers) instead of TIME, so the test decides the instant. Redis expires keys
 * on its own clock, which the test does not stop, so the keys' PX becomes 10 minutes (a burst of
 * 50,000 checks takes longer than the 1 s a bucket lives). Everything else is the store's own script
 * and code.
 */
async function frozenStore(): Promise<{ store: RedisStore; at(us: number): Promise<void> }> {
  const PX = 'local px = math.floor((newUs[i] - now) / 1000) + 1';
  assert.equal(GCRA_LUA.split("redis.call('TIME')").length, 2, 'the script reads TIME once');
  assert.equal(GCRA_LUA.split(PX).length, 2, 'the script computes PX once');
  const store = new RedisStore({ url: REDIS_URL, timeoutMs: 30_000 }); // a burst queues tens of thousands of checks
  openedStores.push(store);
  const at = async (us: number) => void (await admin.hset(CLOCK_KEY, 's', String(Math.floor(us / 1e6)), 'us', String(us % 1e6)));
  await at(T0_US);
  await store.checkAll([{ key: `${PREFIX}warm-up`, limit: { capacity: 1, periodMs: 1 }, policy: 'p' }], 0, 0); // connected, script defined
  const lua = GCRA_LUA.replace("redis.call('TIME')", `redis.call('HMGET', '${CLOCK_KEY}', 's', 'us')`).replace(PX, 'local px = 600000');
  store.redis!.defineCommand('svcGcra', { lua });
  return { store, at };
}

/** Runs `n` checks of one bucket concurrently (one connection: Redis runs them one after another). */
async function burst(store: RedisStore, bucket: Bucket, n: number) {
  const results = await Promise.all(Array.from({ length: n }, () => store.checkAll([bucket], 1, 0)));
  return results.map((r) => r[0]!);
}

describe('redis rate-limit store: exact capacity and rate (frozen clock)', () => {
  after(async () => {
    await Promise.all(openedStores.map((s) => s.close()));
  });

  for (const capacity of [3000, 50_000]) {
    test(`${capacity} per 1 s: exactly ${capacity} at one instant, then exactly ${capacity} per second`, async () => {
      const { store, at } = await frozenStore();
      const bucket: Bucket = { key: `${PREFIX}exact:${capacity}`, limit: { capacity, periodMs: 1000 }, policy: 'global-api-key' };
      const first = await burst(store, bucket, capacity + 50);
      assert.equal(first.filter((r) => r.allowed).length, capacity, 'the burst');
      assert.equal(first[0]!.remaining, capacity - 1, 'remaining after the first request');
      assert.ok(first.every((r) => r.remaining <= capacity - 1), 'remaining never above the limit');
      // 1 ms later: capacity / 1000 cells back, exactly.
      await at(T0_US + 1000);
      assert.equal((await burst(store, bucket, capacity / 1000 + 5)).filter((r) => r.allowed).length, capacity / 1000);
      for (let s = 1; s <= 2; s++) {
        await at(T0_US + s * 1_000_000);
        const got = (await burst(store, bucket, capacity + 50)).filter((r) => r.allowed).length;
        assert.equal(got, s === 1 ? capacity - capacity / 1000 : capacity, `second ${s}`);
      }
      // Same TAT in JavaScript and in the script: the denial's wait is one emission interval.
      const denied = (await burst(store, bucket, 1))[0]!;
      assert.equal(denied.allowed, false);
      assert.ok(Math.abs(denied.retryAfterMs - 1000 / capacity) < 1e-6, `retry after ${denied.retryAfterMs} ms`);
    });
  }
});

describe('redis rate-limit store: organizations and the real clock', () => {
  test('two gateways of two organizations on one Redis: per-user buckets apart, per-key buckets by key hash', async () => {
    const cfg = config({ perApiKey: { capacity: 10, periodMs: 3_600_000 }, perUser: { capacity: 4, periodMs: 3_600_000 } });
    const a = limiter(cfg);
    const b = limiter(cfg);
    const ofA = { organizationId: 'org-a', apiKeyHash: 'key-a', userId: 'alice', router: null };
    for (let i = 0; i < 4; i++) assert.equal((await a.check(ofA)).allowed, true);
    const deniedA = await a.check(ofA);
    assert.equal(deniedA.allowed, false);
    assert.equal(deniedA.policy, 'global-user');
    const ofB = await b.check({ organizationId: 'org-b', apiKeyHash: 'key-b', userId: 'alice', router: null });
    assert.equal(ofB.allowed, true, "org B's alice has her own bucket");
    assert.equal(ofB.remaining, 3);
    assert.equal(await admin.exists(`${PREFIX}global:user:org-a:alice`), 1);
    assert.equal(await admin.exists(`${PREFIX}global:user:org-b:alice`), 1);
    assert.equal(await admin.exists(`${PREFIX}global:key:key-a`), 1);
  });

  for (const capacity of [3000, 50_000]) {
    test(`${capacity} per 1 s on Redis's clock: remaining starts at ${capacity - 1}, never more than the burst plus what refilled`, async () => {
      const l = limiter(config({ perApiKey: { capacity, periodMs: 1000 }, perUser: null }, {}, { storeTimeoutMs: 30_000 }));
      const req = { organizationId: ORG, apiKeyHash: `real-${capacity}`, userId: null, router: null };
      const [s0, us0] = await admin.time();
      const decisions = await Promise.all(Array.from({ length: capacity + 2000 }, () => l.check(req)));
      const [s1, us1] = await admin.time();
      const elapsedUs = (Number(s1) - Number(s0)) * 1e6 + (Number(us1) - Number(us0));
      const admitted = decisions.filter((d) => d.allowed).length;
      assert.equal(decisions[0]!.remaining, capacity - 1);
      assert.ok(decisions.every((d) => d.remaining <= capacity - 1), 'remaining never above the limit');
      assert.ok(admitted >= capacity, `${admitted} admitted`);
      const bound = capacity + Math.floor((elapsedUs * capacity) / 1e6);
      assert.ok(admitted <= bound, `${admitted} admitted in ${elapsedUs} µs, at most ${bound}`);
    });
  }
});
