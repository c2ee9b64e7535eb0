/**
 * End-to-end: a provider's 429 `Retry-After` takes it out of a router's pool (proxy/balancer/retry-after.ts), read in
 * both of RFC 9110 §10.2.3's forms, for at most the router's `health.cool-down` (here 10 s; 30 s by default): one 429
 * with `Retry-After: 100000` no longer takes a provider out for 27 hours, and an HTTP-date is no longer taken for 1 s.
 * The ejection is read on `GET /health` (`routers.<name>[].ejectedForMs`). test/support/hostile-provider-stub.ts plays
 * OpenAI and Groq (the model picks the Retry-After); admin on the real PostgreSQL and the proxy run as processes.
 *
 * Router retries (`retries`) honour it too: a retry to a provider that asked to wait waits at least that long (at most
 * `retries.max-delay`), and when no member may be tried within `max-delay` the provider's 429 is the answer. Before,
 * a pinned provider answering `Retry-After: 2` was sent 3 attempts within 25 ms, and with every member answering 429
 * the router went back to the first 40 ms after it said to wait 2 s. The stub counts the attempts (`GET /__requests`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { clearStubRequests, startStubbedStack, stubRequests, type Stack, type StubbedStack } from './support/stack.ts';

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
      // Retries: a short backoff, so what the retries wait is the providers' Retry-After.
      'one-member': { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } }, retries: { 'max-retries': 1, 'min-delay': '10ms', 'max-delay': '5s' } },
      pinned: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } }, retries: { 'max-retries': 1, 'min-delay': '10ms', 'max-delay': '5s' } },
      'short-max': { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } }, retries: { 'max-retries': 2, 'min-delay': '10ms', 'max-delay': '500ms' } },
      'all-limited': { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } }, retries: { 'max-retries': 2, 'min-delay': '10ms', 'max-delay': '5s' } },
    },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** Sends a chat request to router `name` with `model` (which picks the stub's Retry-After); the 429's headers. */
async function rateLimited(name: string, model: string): Promise<Headers> {
  const res = await fetch(`${stack.gatewayUrl}/router/${name}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  assert.equal(res.status, 429);
  return res.headers;
}

/** The provider of each request the stub received since it was last cleared, in order (by its path). */
async function attempts(): Promise<string[]> {
  return (await stubRequests(stubbed.stubUrl)).map((r) => (String(r.url).startsWith('/openai/') ? 'groq' : 'openai'));
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

test('retries: a router of one member whose 429 says Retry-After: 2 retries it no sooner than 2 s later', async () => {
  await clearStubRequests(stubbed.stubUrl);
  const t0 = performance.now();
  await rateLimited('one-member', 'retry-after-2');
  const elapsed = performance.now() - t0;
  assert.deepEqual(await attempts(), ['openai', 'openai']);
  assert.ok(elapsed >= 2000, `the retry waited the provider's Retry-After: answered after ${elapsed} ms`);
});

test('retries: a pinned provider (openai/… on a router of two) whose 429 says Retry-After: 2 is retried no sooner than 2 s later', async () => {
  await clearStubRequests(stubbed.stubUrl);
  const t0 = performance.now();
  await rateLimited('pinned', 'openai/retry-after-2');
  const elapsed = performance.now() - t0;
  assert.deepEqual(await attempts(), ['openai', 'openai']);
  assert.ok(elapsed >= 2000, `the retry waited the provider's Retry-After: answered after ${elapsed} ms`);
});

test('retries: a Retry-After beyond retries.max-delay (500 ms) is not retried: the provider’s 429 with its Retry-After is the answer', async () => {
  await clearStubRequests(stubbed.stubUrl);
  const headers = await rateLimited('short-max', 'retry-after-2');
  assert.deepEqual(await attempts(), ['openai'], 'one attempt, no retry into the wait');
  assert.equal(headers.get('retry-after'), '2');
});

test('retries: every member answering 429 Retry-After: 2 — the other member at once, then back to the first no sooner than its 2 s', async () => {
  await clearStubRequests(stubbed.stubUrl);
  const t0 = performance.now();
  const headers = await rateLimited('all-limited', 'retry-after-2');
  const elapsed = performance.now() - t0;
  const sent = await attempts();
  assert.equal(sent.length, 3, sent.join(', '));
  assert.notEqual(sent[1], sent[0], 'the first retry goes to the member that did not ask to wait');
  assert.equal(sent[2], sent[0], 'the second retry goes to the member whose wait ends first');
  assert.ok(elapsed >= 2000, `the second retry waited the first member's Retry-After: answered after ${elapsed} ms`);
  assert.equal(headers.get('retry-after'), '2');
});
