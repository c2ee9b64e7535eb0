/**
 * End-to-end: an empty or blank `Svc-User-Id` is no user, through a running gateway with a per-user
 * limit of one request per hour (in-memory store): such requests share no per-user bucket (before the
 * fix every `Svc-User-Id: ""` caller shared the bucket `global-user` of the user ""), and the log
 * record's user id is null, as without the header. A real user id is still limited and logged.
 *
 * Per-user buckets belong to an organization: two gateways of two organizations on one Redis (the
 * real one at 127.0.0.1:6379, default prefix `svc:rl:`, user ids made for this run, their keys
 * deleted afterwards) keep the same `Svc-User-Id` apart (before the fix organization A exhausting
 * `alice` got organization B's first request a 429 `global-user`).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { defaultConfig, fetchRecord, PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, writeConfig, type Stack } from './support/stack.ts';

const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] };

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({ ...defaultConfig(stubUrl), global: { 'rate-limit': { 'per-user': { capacity: 1, 'refill-frequency': '1h' } } } }),
  });
});
after(async () => {
  await stack?.stop();
});

/**
 * POSTs a chat completion with `Svc-User-Id: userId` (to the stack's gateway with its key unless
 * told); the answer's status, `RateLimit` policy name and remaining count, and request id.
 */
async function post(userId: string, gatewayUrl = stack.gatewayUrl, apiKey = stack.apiKey): Promise<{ status: number; policy: string | undefined; remaining: string | undefined; id: string }> {
  const res = await fetch(`${gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'svc-user-id': userId },
    body: JSON.stringify(CHAT),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  const rl = /^"([^"]+)";r=(\d+)/.exec(res.headers.get('ratelimit') ?? '');
  return { status: res.status, policy: rl?.[1], remaining: rl?.[2], id: res.headers.get('svc-id')! };
}

test('Svc-User-Id "" or only whitespace: no per-user bucket, and no user in the record', async () => {
  // fetch strips spaces and tabs as Node does; U+00A0 is sent as the byte 0xA0 and stays.
  for (const value of ['', '   ', '\u00a0']) {
    const answers = [await post(value), await post(value), await post(value)];
    for (const [i, a] of answers.entries()) {
      assert.equal(a.status, 200, `${JSON.stringify(value)}, request ${i + 1}`);
      assert.equal(a.policy, undefined, `${JSON.stringify(value)}, request ${i + 1}: no bucket applied`);
    }
    const rec = await fetchRecord(stack, answers[0]!.id);
    assert.equal(rec.request_user_id, null, JSON.stringify(value));
  }
});

test('a real user id is limited (one per hour) and logged as sent', async () => {
  const user = `u-${randomBytes(4).toString('hex')}`;
  const first = await post(user);
  assert.equal(first.status, 200);
  assert.equal(first.policy, 'global-user');
  const second = await post(user);
  assert.equal(second.status, 429);
  assert.equal(second.policy, 'global-user');
  assert.equal((await fetchRecord(stack, first.id)).request_user_id, user);
});

test('two organizations on one Redis: the same Svc-User-Id is two users', async () => {
  const run = randomBytes(6).toString('hex');
  const user = `alice-${run}`;
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect(); // rejects, failing the test, when Redis is unreachable
  const config = writeConfig({
    ...defaultConfig(stack.stubUrl),
    global: { 'rate-limit': { 'per-user': { capacity: 4, 'refill-frequency': '1h' } } },
    'rate-limit-store': { type: 'redis', url: 'redis://127.0.0.1:6379', timeout: '1s' },
  });
  const orgB = await createOrganization(stack.db.sql, `rate limit ${run}`);
  const keyB = await createApiKey(stack.db.sql, orgB, 'org B');
  const [gatewayA, gatewayB] = await Promise.all([
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: config, env: PROVIDER_KEYS }),
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: keyB.key, configFile: config, env: PROVIDER_KEYS }),
  ]);
  try {
    for (let i = 0; i < 4; i++) assert.equal((await post(user, gatewayA.url)).status, 200, `org A request ${i + 1}`);
    const deniedA = await post(user, gatewayA.url);
    assert.equal(deniedA.status, 429);
    assert.equal(deniedA.policy, 'global-user');
    const firstB = await post(user, gatewayB.url, keyB.key);
    assert.equal(firstB.status, 200, "org B's first request for the same user id");
    assert.equal(firstB.policy, 'global-user');
    assert.equal(firstB.remaining, '3');
  } finally {
    await stopProcess(gatewayA);
    await stopProcess(gatewayB);
    const mine: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'svc:rl:*', 'COUNT', 1000);
      cursor = next;
      for (const k of keys) if (k.includes(run)) mine.push(k);
    } while (cursor !== '0');
    if (mine.length) await redis.del(...mine);
    await redis.quit();
  }
});
