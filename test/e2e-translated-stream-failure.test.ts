/**
 * End-to-end: a translated stream that fails while the provider is still sending (a malformed event, then more
 * events for 20 s, from test/support/hostile-provider-stub.ts `malformed-then-trickle`) ends the client's stream with
 * the dialect's error at once and stops the provider's answer, rather than holding the client, and the provider's
 * generation the organization pays for, until the provider's own end. Admin on the real PostgreSQL and the proxy run
 * as their own processes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStubbedStack, waitFor, type Stack, type StubbedStack } from './support/stack.ts';

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/hostile-provider-stub.ts', (stub) => ({
    providers: {
      openai: { 'base-url': `${stub}/v1` },
      groq: { 'base-url': `${stub}/openai/v1` },
      anthropic: { 'base-url': `${stub}/v1` },
    },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** How many trickling streams the stub saw closed before their end. */
async function cutCount(): Promise<number> {
  const res = await fetch(`${stubbed.stubUrl}/__cut`, { method: 'POST', body: '{}' });
  return ((await res.json()) as { cut: number }).cut;
}

const ROUTES: Array<{ name: string; path: string; body: Record<string, unknown>; failure: RegExp }> = [
  {
    name: 'Messages → OpenAI chat',
    path: '/v1/messages',
    body: { model: 'openai/malformed-then-trickle', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    failure: /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The openai sent a malformed stream event"/,
  },
  {
    name: 'chat → Anthropic',
    path: '/ai/chat/completions',
    body: { model: 'anthropic/malformed-then-trickle', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    failure: /data: \{"error":\{"message":"anthropic sent a malformed stream event"/,
  },
  {
    name: 'Responses → Groq chat',
    path: '/ai/responses',
    body: { model: 'groq/malformed-then-trickle', stream: true, input: 'hi' },
    failure: /event: response\.failed\n[^\n]*"message":"The groq sent a malformed stream event"/,
  },
  {
    name: 'Responses → Anthropic',
    path: '/ai/responses',
    body: { model: 'anthropic/malformed-then-trickle', stream: true, input: 'hi' },
    failure: /event: response\.failed\n/,
  },
];

describe('a translated stream that fails mid-way ends at once and stops the provider', () => {
  for (const route of ROUTES) {
    test(`${route.name}: the error event ends the client's stream, and the provider's answer is closed`, async () => {
      const before = await cutCount();
      const started = performance.now();
      const res = await fetch(`${stack.gatewayUrl}${route.path}`, {
        method: 'POST',
        body: JSON.stringify(route.body),
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      });
      assert.equal(res.status, 200);
      const text = await res.text();
      const tookMs = performance.now() - started;
      assert.match(text, route.failure);
      // The provider's stream lasts 20 s; the client's must not wait for it (a bound for telling the two apart only).
      assert.ok(tookMs < 10_000, `the client's stream ended after ${Math.round(tookMs)} ms, with the provider's`);
      assert.ok(!text.includes('more'), 'nothing the provider sent after the failure reaches the client');
      await waitFor(async () => (await cutCount()) > before, 5_000);
      const record = await fetchRecord(stack, res.headers.get('svc-id')!);
      assert.equal(record.response_status ?? record.status, 200);
    });
  }
});
