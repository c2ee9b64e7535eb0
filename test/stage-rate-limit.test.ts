/** Stage rate-limit: GCRA over the in-memory store admits, then denies with the rate-limit headers; a blank user id is no user. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { buildConfig } from '../shared/config.ts';
import { GatewayError } from '../proxy/errors.ts';
import { logHeaders, userIdOf } from '../proxy/pipeline/headers.ts';
import { createRateLimiter } from '../proxy/ratelimit/index.ts';
import { rateLimit } from '../proxy/stages/rate-limit.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime } from './support/stage-context.ts';

// Rate limits are per key or user, so they need keys (svc.features auth).
const doc = { svc: { features: 'auth' }, global: { 'rate-limit': { 'per-user': { capacity: 2, 'refill-frequency': '1m' } } } };
const rateLimiter = createRateLimiter(buildConfig(doc, {}), {});
const gw = makeRuntime({ doc, rateLimiter, controlPlane: fakeControlPlane() });
after(() => closeRuntime(gw));

test('the stage is composed only with a limiter', () => {
  assert.ok(gw.pipeline.stages.includes(rateLimit));
  const without = makeRuntime({});
  assert.ok(!without.pipeline.stages.includes(rateLimit));
  return closeRuntime(without);
});

test('the in-memory store decides synchronously: two admitted with their headers, the third is a 429', () => {
  const headers = { 'Svc-User-Id': 'user-a' };
  const first = makeContext(gw, { headers });
  assert.equal(rateLimit(first), undefined, 'no promise for the in-memory store');
  assert.ok(first.rateLimitHeaders);
  assert.equal(first.rateLimitHeaders['x-ratelimit-limit'], '2');
  assert.equal(first.rateLimitHeaders['x-ratelimit-remaining'], '1');
  const second = makeContext(gw, { headers });
  rateLimit(second);
  assert.equal(second.rateLimitHeaders?.['x-ratelimit-remaining'], '0');
  const third = makeContext(gw, { headers });
  assert.throws(
    () => rateLimit(third),
    (e: unknown) => e instanceof GatewayError && e.status === 429 && e.code === 'rate_limit_exceeded' && Number(e.headers['retry-after']) > 0 && /global-user/.test(e.message),
  );
  assert.equal(third.rateLimitHeaders, null);
  // Another user has a bucket of its own.
  const other = makeContext(gw, { headers: { 'Svc-User-Id': 'user-b' } });
  rateLimit(other);
  assert.ok(other.rateLimitHeaders);
});

test('an empty or blank Svc-User-Id is no user: no shared per-user bucket, no user in the log', () => {
  // Node strips spaces and tabs, so "   " arrives as ""; U+00A0 (obs-text) is left and is blank too.
  for (const value of ['', '\u00a0', '\u00a0\u00a0']) {
    for (let i = 0; i < 3; i++) {
      const ctx = makeContext(gw, { headers: { 'Svc-User-Id': value } });
      rateLimit(ctx);
      assert.deepEqual(ctx.rateLimitHeaders, {}, `${JSON.stringify(value)} request ${i + 1}: no bucket applied`);
    }
    assert.equal(logHeaders(makeContext(gw, { headers: { 'Svc-User-Id': value } }).req).userId, null, JSON.stringify(value));
  }
  // A real id is kept as sent, by both.
  assert.equal(logHeaders(makeContext(gw, { headers: { 'Svc-User-Id': '\u00a0user-c' } }).req).userId, '\u00a0user-c');
  assert.equal(userIdOf('user-c'), 'user-c');
  assert.equal(userIdOf(null), null);
});

test("per-user buckets belong to the key's organization: the same Svc-User-Id in two organizations is two users", () => {
  const withKey = (organizationId: string) => {
    const ctx = makeContext(gw, { headers: { 'Svc-User-Id': 'alice' } });
    ctx.key = { hash: `hash-${organizationId}`, keyId: `key-${organizationId}`, organizationId };
    ctx.keyHash = ctx.key.hash;
    return ctx;
  };
  rateLimit(withKey('org-a'));
  rateLimit(withKey('org-a'));
  assert.throws(() => rateLimit(withKey('org-a')), (e: unknown) => e instanceof GatewayError && e.status === 429);
  const other = withKey('org-b');
  rateLimit(other);
  assert.equal(other.rateLimitHeaders?.['x-ratelimit-remaining'], '1', "org B's alice starts full");
});
