/**
 * End-to-end: a provider's own rate-limit headers and the gateway's (proxy/ratelimit/index.ts `rateLimitHeaders`)
 * at the client (proxy/upstream/response.ts). When the gateway's limiter sets a header, the provider's header of
 * that exact name is not also forwarded, so the client reads one value (Node's fetch joined the two: "77, 100000");
 * a provider header of another name (OpenAI's `x-ratelimit-limit-requests`) is forwarded untouched, and a request
 * no limit applies to gets the provider's headers as sent.
 *
 * test/support/hostile-provider-stub.ts (`ratelimit-headers`) plays OpenAI and Anthropic, sending
 * `X-RateLimit-Limit: 100000`, `-Remaining: 99999`, `-Reset: 60`, `RateLimit` and `x-ratelimit-limit-requests: 5000`.
 * Router `limited` has a per-key limit (in-memory store); `/ai/…` has none. Admin on the real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStubbedStack, type Stack, type StubbedStack } from './support/stack.ts';

const CAPACITY = 1000;

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/hostile-provider-stub.ts', (stub) => ({
    providers: { openai: { 'base-url': `${stub}/v1` }, anthropic: { 'base-url': `${stub}/v1` } },
    routers: {
      limited: {
        'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'anthropic'] } },
        'rate-limit': { 'per-api-key': { capacity: CAPACITY, 'refill-frequency': '1h' } },
      },
    },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** Posts a chat request for `model` at `path` and reads its answer. */
async function chat(path: string, model: string): Promise<Response> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  assert.equal(res.status, 200);
  return res;
}

/** The gateway's headers win: one value each, the gateway's; the provider's other names kept. */
function assertGatewayValues(res: Response, via: string): void {
  const limit = res.headers.get('x-ratelimit-limit');
  assert.equal(limit, String(CAPACITY), `${via}: x-ratelimit-limit is the gateway's alone`);
  const remaining = Number(res.headers.get('x-ratelimit-remaining'));
  assert.ok(Number.isInteger(remaining) && remaining < CAPACITY, `${via}: x-ratelimit-remaining is the gateway's alone: ${res.headers.get('x-ratelimit-remaining')}`);
  assert.doesNotMatch(res.headers.get('x-ratelimit-reset') ?? '', /,/, `${via}: x-ratelimit-reset once`);
  assert.match(res.headers.get('ratelimit') ?? '', /^"[^"]+";r=\d+;t=\d+$/, `${via}: ratelimit is the gateway's alone`);
  assert.doesNotMatch(res.headers.get('ratelimit') ?? '', /provider/, via);
  assert.equal(res.headers.get('x-ratelimit-limit-requests'), '5000', `${via}: a provider header of another name is forwarded`);
}

test('passed through (OpenAI): the gateway limiter’s rate-limit headers replace the provider’s of the same name', async () => {
  const res = await chat('/router/limited/chat/completions', 'openai/ratelimit-headers');
  assert.equal(res.headers.get('svc-provider'), 'openai');
  assertGatewayValues(res, 'passthrough');
});

test('mapped (chat → Anthropic): the same', async () => {
  const res = await chat('/router/limited/chat/completions', 'anthropic/ratelimit-headers');
  assert.equal(res.headers.get('svc-provider'), 'anthropic');
  assertGatewayValues(res, 'mapped');
});

test('no limit applies (/ai): the provider’s rate-limit headers as it sent them', async () => {
  const res = await chat('/ai/chat/completions', 'openai/ratelimit-headers');
  assert.equal(res.headers.get('x-ratelimit-limit'), '100000');
  assert.equal(res.headers.get('x-ratelimit-remaining'), '99999');
  assert.equal(res.headers.get('x-ratelimit-reset'), '60');
  assert.equal(res.headers.get('ratelimit'), '"provider";r=99999;t=60');
  assert.equal(res.headers.get('x-ratelimit-limit-requests'), '5000');
});
