/**
 * The Redis rate-limit store when it fails or lags, against the real Redis at redis://127.0.0.1:6379
 * (keys under a unique prefix, removed at the end; nothing else is touched). A failed check is
 * limited by a local in-memory GCRA with the same limits (fail-mode `local`, the default), not
 * admitted; event-loop lag alone does not trip the default timeout; a TAT further ahead of Redis's
 * clock than the bucket's whole tolerance (Redis's clock stepped back) is a fresh bucket.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { buildConfig, type GatewayConfig, type RateLimitLevel } from '../shared/config.ts';
import { createRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimiterDeps } from '../proxy/ratelimit/index.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `svc:rltest-fallback:${randomUUID()}:`;
const ORG = 'org-1';
const LIMIT5: RateLimitLevel = { perApiKey: { capacity: 5, periodMs: 10_000 }, perUser: null };

function config(global: RateLimitLevel, store: Partial<GatewayConfig['rateLimit']> = {}): GatewayConfig {
  return {
    rateLimit: { global, store: 'redis', redisUrl: REDIS_URL, failMode: 'local', storeTimeoutMs: 1000, cleanupIntervalMs: 0, ...store },
    routers: {},
  } as unknown as GatewayConfig;
}

const opened: RateLimiter[] = [];
function limiter(cfg: GatewayConfig, deps: RateLimiterDeps = {}): RateLimiter {
  const l = createRateLimiter(cfg, { keyPrefix: PREFIX, ...deps });
  assert.ok(l, 'limits are configured');
  opened.push(l);
  return l;
}

const req = (apiKeyHash: string) => ({ organizationId: ORG, apiKeyHash, userId: null, router: null });

/**
 * Sends `n` checks of `apiKeyHash` at once, then blocks the event loop for `ms` as a loaded proxy
 * does, in a check-phase turn after the commands are written: the replies arrive meanwhile, and the
 * next turn runs the expired timers (timers phase) before it reads the socket (poll phase).
 */
function burstUnderLag(l: RateLimiter, n: number, apiKeyHash: string, ms: number): Promise<RateLimitDecision[]> {
  return new Promise((resolve) =>
    setImmediate(async () => {
      const pending = Array.from({ length: n }, () => l.check(req(apiKeyHash)));
      for (let i = 0; i < 20; i++) await null; // the checks' commands are written by then
      const end = performance.now() + ms;
      while (performance.now() < end) {
        /* busy */
      }
      resolve(Promise.all(pending));
    }),
  );
}

async function connected(l: RateLimiter): Promise<void> {
  await l.check(req(`warmup-${randomUUID()}`)); // starts ioredis loading and connecting
  for (let i = 0; i < 200 && !l.storeState().available; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(l.storeState().available, 'connected to Redis');
}

let admin: Redis;

before(async () => {
  admin = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on('error', () => {});
  await admin.connect();
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

describe('redis store failing: the local fallback limits', () => {
  test('connection down: a burst of 6 on capacity 5 has its 6th refused; every failure counted, one warning', async () => {
    const errors: Error[] = [];
    const warnings: { obj: object; msg?: string }[] = [];
    const l = limiter(config(LIMIT5, { redisUrl: 'redis://127.0.0.1:1', storeTimeoutMs: 200 }), {
      onStoreError: (err) => errors.push(err),
      logger: { warn: (obj, msg) => warnings.push({ obj, msg }) },
    });
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 6 }, () => l.check(req('down'))));
    assert.deepEqual(burst.map((d) => d.allowed), [true, true, true, true, true, false]);
    assert.equal(burst[5]!.limit, 5);
    assert.equal(burst[5]!.storeUnavailable, undefined, 'a local refusal is a 429, not a 503');
    assert.ok(burst[5]!.retryAfterMs > 0 && burst[5]!.retryAfterMs <= 2000, `retryAfterMs ${burst[5]!.retryAfterMs}`);
    for (let i = 0; i < 20; i++) assert.equal((await l.check(req('down'))).allowed, false);
    assert.ok(Date.now() - started < 5000, 'never hangs');
    assert.equal(errors.length, 26, 'every check the store could not answer is counted');
    const outage = warnings.filter((w) => /limiting locally/.test(w.msg ?? ''));
    assert.equal(outage.length, 1, `one warning for the outage: ${JSON.stringify(warnings)}`);
  });

  test('commands timed out (tiny timeout, event loop blocked): limited locally, not admitted', async () => {
    const errors: Error[] = [];
    const logged: { level: string; msg?: string }[] = [];
    const l = limiter(config(LIMIT5, { storeTimeoutMs: 5 }), {
      onStoreError: (err) => errors.push(err),
      logger: { warn: (_obj, msg) => logged.push({ level: 'warn', msg }), info: (_obj, msg) => logged.push({ level: 'info', msg }) },
    });
    await connected(l); // the warm-up check may itself have timed out: an outage, logged
    errors.length = 0;
    const burst = await burstUnderLag(l, 6, 'lagged', 100); // the command timers expire before the replies are read
    assert.ok(errors.length >= 1, 'the timeouts happened');
    assert.equal(burst.filter((d) => d.allowed).length, 5, JSON.stringify(burst.map((d) => [d.allowed, d.policy])));
    // the outage ends with the first check Redis answers (a 5 ms timeout can still trip now and then)
    for (let i = 0; i < 50 && !logged.some((x) => x.level === 'info'); i++) await l.check(req(`after-${i}`));
    // one outage (from the warm-up or the burst): its start and its end, nothing per request
    const levels = logged.map((x) => x.level);
    assert.ok(levels.length <= 4 && levels.at(-1) === 'info' && levels.filter((x) => x === 'warn').length <= 2, JSON.stringify(logged));
    assert.match(logged.find((x) => x.level === 'warn')?.msg ?? '', /limiting locally/);
    assert.match(logged.at(-1)!.msg ?? '', /answers again/);
  });
});

describe('redis store under event-loop lag with the default timeout', () => {
  test('a 150 ms lag is not a store failure: no error, Redis decides (5 of 6)', async () => {
    const cfg = buildConfig(
      {
        global: { 'rate-limit': { 'per-api-key': { capacity: 5, 'refill-frequency': '10s' } } },
        'rate-limit-store': { type: 'redis', url: REDIS_URL },
      },
      {},
    );
    const errors: Error[] = [];
    const l = limiter(cfg, { onStoreError: (err) => errors.push(err) });
    await connected(l);
    const burst = await burstUnderLag(l, 6, 'default-timeout', 150);
    assert.equal(errors.length, 0, errors.map((e) => e.message).join('; '));
    assert.equal(burst.filter((d) => d.allowed).length, 5);
  });
});

describe('redis clock stepped back', () => {
  test('a TAT 1 h ahead of Redis TIME is a fresh bucket', async () => {
    const l = limiter(config(LIMIT5));
    await connected(l);
    const [sec, usec] = await admin.time();
    const nowUs = Number(sec) * 1_000_000 + Number(usec);
    await admin.set(`${PREFIX}global:key:stepped`, `${nowUs + 3_600_000_000}:0`, 'PX', 3_700_000);
    const d = await l.check(req('stepped'));
    assert.equal(d.allowed, true, `retryAfterMs ${d.retryAfterMs}`);
    assert.equal(d.remaining, 4);
    const stored = await admin.get(`${PREFIX}global:key:stepped`);
    const storedUs = Number(stored!.split(':')[0]);
    assert.ok(storedUs - nowUs < 10_000_000, `the stored TAT is from now, not the stepped one (${storedUs - nowUs} µs ahead)`);
    assert.ok((await admin.pttl(`${PREFIX}global:key:stepped`)) <= 2100, 'its expiry is the new TAT');
  });
});
