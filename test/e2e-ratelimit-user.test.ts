/**
 * End-to-end: an empty or blank `Svc-User-Id` is no user, through a running gateway with a per-user
 * limit of one request per hour (in-memory store): such requests share no per-user bucket (before the
 * fix every `Svc-User-Id: ""` caller shared the bucket `global-user` of the user ""), and the log
 * record's user id is null, as without the header. A real user id is still limited and logged.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, type Stack } from './support/stack.ts';

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

/** POSTs a chat completion with `Svc-User-Id: userId`; the answer's status, `RateLimit` policy name and request id. */
async function post(userId: string): Promise<{ status: number; policy: string | undefined; id: string }> {
  const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-user-id': userId },
    body: JSON.stringify(CHAT),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return { status: res.status, policy: /^"([^"]+)"/.exec(res.headers.get('ratelimit') ?? '')?.[1], id: res.headers.get('svc-id')! };
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
