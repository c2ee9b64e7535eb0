/**
 * End-to-end: a provider's 429 `Retry-After` takes it out of a router's pool (proxy/balancer/retry-after.ts), read in
 * both of RFC 9110 §10.2.3's forms, for at most the router's `health.cool-down` (here 10 s; 30 s by default): one 429
 * with `Retry-After: 100000` no longer takes a provider out for 27 hours, and an HTTP-date is no longer taken for 1 s.
 * The ejection is read on `GET /health` (`routers.<name>[].ejectedForMs`). test/support/hostile-provider-stub.ts plays
 * OpenAI and Groq (the model picks the Retry-After); admin on the real PostgreSQL and the proxy run as processes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startStubbedStack, type Stack, type StubbedStack } from './support/stack.ts';

const COOL_DOWN_MS = 10_000;

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/hostile-provider-stub.ts', (stub) => ({
    providers: { openai: { 'base-url': `${stub}/v1` }, groq: { 'base-url': `${stub}/openai/v1` } },
    routers: {
      // One member per router: the 429 is that provider's, whichever the latency strategy would pick.
      seconds: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } }, health: { 'cool-down': `${COOL_DOWN_MS}ms` } },
      date: { 'load-balance': { chat: { strategy: 'latency', providers: ['groq'] } }, health: { 'cool-down': `${COOL_DOWN_MS}ms` } },
      small: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } },
    },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** Sends a chat request to router `name` with `model` (which picks the stub's Retry-After). */
async function rateLimited(name: string, model: string): Promise<void> {
  const res = await fetch(`${stack.gatewayUrl}/router/${name}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  assert.equal(res.status, 429);
}

/** How long router `name` keeps its one provider out, per GET /health (ms). */
async function ejectedForMs(name: string): Promise<number> {
  const health = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { routers: Record<string, Array<{ ejectedForMs: number }>> };
  return health.routers[name]![0]!.ejectedForMs;
}

test('Retry-After: 100000 (seconds) ejects the provider for at most health.cool-down', async () => {
  await rateLimited('seconds', 'retry-after-100000');
  const ms = await ejectedForMs('seconds');
  assert.ok(ms > COOL_DOWN_MS - 2000 && ms <= COOL_DOWN_MS, `ejected for ${ms} ms`);
});

test('Retry-After as an HTTP-date 6 s ahead ejects the provider until then', async () => {
  await rateLimited('date', 'retry-after-date-6');
  const ms = await ejectedForMs('date');
  // The date has a resolution of one second: 5–6 s from the moment it was written.
  assert.ok(ms > 3500 && ms <= 6000, `ejected for ${ms} ms`);
});

test('Retry-After below the cap is kept as the provider asked (default cool-down: 30 s)', async () => {
  await rateLimited('small', 'retry-after-20');
  const ms = await ejectedForMs('small');
  assert.ok(ms > 18_000 && ms <= 20_000, `ejected for ${ms} ms`);
});
