/**
 * The in-memory rate limiter across a backward clock step (NTP step, VM restore): a bucket used
 * before the step must not be refused for the length of the step, and the limiter's own clock must
 * not follow the wall clock at all (it is monotonic). Also the configuration defaults of the
 * rate-limit store (fail-mode local, timeout 1 s).
 */
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig, type GatewayConfig, type RateLimitLevel } from '../shared/config.ts';
import { createRateLimiter, gcra, type RateLimitDecision, type RateLimiter } from '../proxy/ratelimit/index.ts';
import { MemoryStore } from '../proxy/ratelimit/memory-store.ts';
import type { Bucket } from '../proxy/ratelimit/store.ts';

const HOUR_MS = 3_600_000;
const T0 = 1_800_000_000_000; // ms since the epoch, an arbitrary instant
const REQ = { organizationId: 'org-1', apiKeyHash: 'k1', userId: null, router: null };

function config(global: RateLimitLevel): GatewayConfig {
  return {
    rateLimit: { global, store: 'in-memory', redisUrl: null, failMode: 'local', storeTimeoutMs: 1000, cleanupIntervalMs: 0 },
    routers: {},
  } as unknown as GatewayConfig;
}

function sync(d: RateLimitDecision | Promise<RateLimitDecision>): RateLimitDecision {
  assert.ok(!(d instanceof Promise), 'the in-memory limiter answers synchronously');
  return d;
}

const realDateNow = Date.now;
afterEach(() => {
  Date.now = realDateNow;
});

describe('gcra: a TAT further ahead than the whole tolerance', () => {
  test('is treated as now (a fresh bucket), for an exact and a fractional TAT', () => {
    const limit = { capacity: 3, periodMs: 1000 };
    const nowUs = T0 * 1000;
    const fresh = gcra(undefined, nowUs, limit);
    for (const tat of [{ us: nowUs + HOUR_MS * 1000, rem: 0 }, { us: nowUs + 1_000_000, rem: 1 }]) {
      const r = gcra(tat, nowUs, limit);
      assert.deepEqual(r, fresh, `TAT ${tat.us - nowUs} µs + ${tat.rem}/3 ahead`);
    }
    // exactly the tolerance ahead (an empty bucket) is kept: refused
    assert.equal(gcra({ us: nowUs + 1_000_000, rem: 0 }, nowUs, limit).allowed, false);
  });
});

describe('memory store, injected clock stepped back 1 h', () => {
  test('the next request is admitted as a fresh bucket would be, and the bucket is swept later', () => {
    let now = T0;
    const store = new MemoryStore({ cleanupIntervalMs: 0, clock: () => now });
    const bucket: Bucket = { key: 'k', limit: { capacity: 5, periodMs: 10_000 }, policy: 'global-api-key' };
    for (let i = 0; i < 5; i++) assert.equal(store.checkAll([bucket], 1, now)[0]!.allowed, true);
    assert.equal(store.checkAll([bucket], 1, now)[0]!.allowed, false, 'the burst is spent');
    now -= HOUR_MS;
    const fresh = new MemoryStore({ cleanupIntervalMs: 0 }).checkAll([bucket], 1, now)[0]!;
    const r = store.checkAll([bucket], 1, now)[0]!;
    assert.deepEqual(r, fresh);
    assert.equal(r.retryAfterMs, 0);
    now += 10_000;
    assert.equal(store.cleanup(), 1, 'the bucket is full again one period later and removed');
  });

  test('through the limiter: allowed, not retryAfterMs ≈ 1 h', () => {
    let now = T0;
    const l = createRateLimiter(config({ perApiKey: { capacity: 100, periodMs: 10_000 }, perUser: null }), { clock: () => now }) as RateLimiter;
    for (let i = 0; i < 100; i++) sync(l.check(REQ));
    assert.equal(sync(l.check(REQ)).allowed, false);
    now -= HOUR_MS;
    const d = sync(l.check(REQ));
    assert.equal(d.allowed, true, `retryAfterMs ${d.retryAfterMs}`);
    assert.equal(d.remaining, 99);
  });
});

describe('the limiter default clock', () => {
  test('does not follow a wall-clock step back', async () => {
    let offset = 0;
    Date.now = () => realDateNow() + offset;
    const l = createRateLimiter(config({ perApiKey: { capacity: 2, periodMs: HOUR_MS }, perUser: null })) as RateLimiter;
    try {
      assert.equal(sync(l.check(REQ)).allowed, true);
      assert.equal(sync(l.check(REQ)).allowed, true);
      const before = sync(l.check(REQ));
      assert.equal(before.allowed, false);
      offset = -HOUR_MS;
      const after = sync(l.check(REQ));
      assert.equal(after.allowed, false, 'still within the period: the bucket is still spent');
      assert.ok(after.retryAfterMs <= before.retryAfterMs + 1000, `retryAfterMs ${after.retryAfterMs} did not grow by the step`);
    } finally {
      await l.close();
    }
  });
});

describe('rate-limit-store defaults', () => {
  test('fail-mode local and a 1 s timeout unless set; open and closed only when set', () => {
    const c = buildConfig({}, {});
    assert.equal(c.rateLimit.failMode, 'local');
    assert.equal(c.rateLimit.storeTimeoutMs, 1000);
    for (const mode of ['open', 'closed', 'local'] as const) {
      const set = buildConfig({ 'rate-limit-store': { type: 'redis', url: 'redis://127.0.0.1:6379', 'fail-mode': mode, timeout: '250ms' } }, {});
      assert.equal(set.rateLimit.failMode, mode);
      assert.equal(set.rateLimit.storeTimeoutMs, 250);
    }
  });
});
