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

const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `svc:rltest:${randomUUID()}:`;
const NONE: RateLimitLevel = { perApiKey: null, perUser: null };

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
    const req = { apiKeyHash: 'shared', userId: null, router: null };
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
    const req = { apiKeyHash: 'concurrent', userId: null, router: null };
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).check(req)));
    assert.equal(decisions.filter((d) => d.allowed).length, 10);
    assert.ok(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterMs > 0 && d.policy === 'global-api-key'));
  });

  test('all levels in one atomic script: a router denial consumes nothing globally', async () => {
    const cfg = config({ perApiKey: { capacity: 5, periodMs: 60_000 }, perUser: null }, { r: { perApiKey: null, perUser: { capacity: 1, periodMs: 60_000 } } });
    const l = limiter(cfg);
    const viaRouter = { apiKeyHash: 'atomic', userId: 'u1', router: 'r' };
    assert.equal((await l.check(viaRouter)).allowed, true);
    const denied = await Promise.all(Array.from({ length: 10 }, () => l.check(viaRouter)));
    assert.ok(denied.every((d) => !d.allowed && d.policy === 'router-r-user'));
    const direct = await l.check({ apiKeyHash: 'atomic', userId: 'u1', router: null });
    assert.equal(direct.allowed, true);
    assert.equal(direct.remaining, 3, 'global bucket: 1 admitted via the router + this one');
    assert.equal(await admin.exists(`${PREFIX}router:r:user:u1`), 1);
  });

  test('non-integer emission interval round-trips exactly through Redis (C=3, P=1 s)', async () => {
    const l = limiter(config({ perApiKey: null, perUser: { capacity: 3, periodMs: 1000 } }));
    const req = { apiKeyHash: null, userId: 'thirds', router: null };
    const d = await Promise.all([l.check(req), l.check(req), l.check(req), l.check(req)]);
    assert.equal(d.filter((x) => x.allowed).length, 3);
    const stored = await admin.get(`${PREFIX}global:user:thirds`);
    assert.ok(stored && Number.isFinite(Number(stored)));
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
    for (let i = 0; i < 3; i++) decisions.push(await l.check({ apiKeyHash: 'down', userId: null, router: null }));
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
    const d = await l.check({ apiKeyHash: 'down', userId: null, router: null });
    assert.ok(Date.now() - started < 3000, 'never hangs');
    assert.equal(d.allowed, false);
    assert.equal(d.storeUnavailable, true);
    assert.equal(errors.length, 1);
    assert.deepEqual(rateLimitHeaders(d), { 'retry-after': '1' });
  });

  test('requests without applicable levels resolve without touching Redis', async () => {
    const l = limiter(config(NONE, { r: { perApiKey: { capacity: 1, periodMs: 1000 }, perUser: null } }, { redisUrl: 'redis://127.0.0.1:1' }));
    const d = await l.check({ apiKeyHash: 'x', userId: null, router: null });
    assert.equal(d.allowed, true);
    assert.equal(d.policy, 'none');
  });
});
