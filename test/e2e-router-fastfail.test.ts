/**
 * End-to-end: the latency strategy does not prefer a provider that fails fast. Router `fastfail`
 * (latency over deepseek, which answers 500 at once, and groq, which answers 200 after 150 ms; no
 * retries; health ejection only after the default 10 requests): sequential requests go to groq after
 * at most one failure, because a failed attempt is a penalty in the latency estimate, not a fast
 * sample. Before the fix every request went to deepseek until health ejection (10 × 500, then 200s).
 * Both providers are an HTTP server in this test's process.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startStack, type Stack } from './support/stack.ts';

const CHAT = readFileSync(new URL('./fixtures/providers/openai/chat-completion.json', import.meta.url));
const ERROR_500 = Buffer.from('{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}');
/** How long the healthy provider takes to answer (ms). */
const HEALTHY_MS = 150;

let stack: Stack;
let providers: http.Server;
const received = { fail: 0, slow: 0 };

before(async () => {
  // `/fail/…` answers 500 at once; `/slow/…` answers the chat completion after HEALTHY_MS.
  providers = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const send = (status: number, body: Buffer) => res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
      if (req.url!.startsWith('/fail/')) {
        received.fail++;
        send(500, ERROR_500);
      } else {
        received.slow++;
        setTimeout(send, HEALTHY_MS, 200, CHAT);
      }
    });
  });
  await new Promise<void>((resolve) => providers.listen(0, '127.0.0.1', resolve));
  const local = `http://127.0.0.1:${(providers.address() as AddressInfo).port}`;
  stack = await startStack({
    config: () => ({
      svc: { features: 'observability' },
      providers: {
        deepseek: { 'base-url': `${local}/fail/v1` },
        groq: { 'base-url': `${local}/slow/v1` },
      },
      routers: {
        fastfail: { 'load-balance': { chat: { strategy: 'latency', providers: ['deepseek', 'groq'] } } },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
  });
});

after(async () => {
  await stack?.stop();
  await new Promise((resolve) => providers?.close(resolve));
});

test('a provider failing at once does not draw the traffic: after one failure the healthy one answers', async () => {
  const outcomes: string[] = [];
  for (let i = 0; i < 14; i++) {
    const res = await fetch(`${stack.gatewayUrl}/router/fastfail/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `q${i}` }] }),
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    outcomes.push(`${res.status}:${res.headers.get('svc-provider')}`);
  }
  // Both start at the default estimate: the first request may go either way, and deepseek gets at
  // most one request (its failure takes a penalty of 10 × 100 ms, far above groq's 150 ms).
  const failed = outcomes.filter((o) => o === '500:deepseek').length;
  assert.ok(failed <= 1, outcomes.join(' '));
  assert.equal(outcomes.filter((o) => o === '200:groq').length, 14 - failed, outcomes.join(' '));
  assert.equal(received.fail, failed, 'no retries: each failure is one request to deepseek');
  // The balancer moved the traffic, not health ejection: deepseek never reached min-requests.
  const health = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { routers: Record<string, Array<{ provider: string; healthy: boolean }>> };
  assert.equal(health.routers.fastfail!.find((p) => p.provider === 'deepseek')!.healthy, true);
});
