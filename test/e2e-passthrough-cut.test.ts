/**
 * End-to-end: a non-streamed answer passed through as the provider sends it (OpenAI chat
 * completions, Anthropic Messages, OpenAI Responses) that the provider cuts halfway through its
 * body, by a reset or by going silent. The status and headers already reached the client, so the
 * only way left to say "this body is broken" is to break the client's connection at once; the
 * client must not wait for bytes that never come (it waited for the server's 65 s keep-alive
 * timeout). The request is still logged, as the gateway's 502 (504 when the provider went silent).
 *
 * Real processes as in e2e-faults.test.ts: stub upstream (test/support/stub-upstream.ts models
 * `reset-mid-body`, `stall-mid-body`), admin on a fresh PostgreSQL database, and the proxy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, type Stack } from './support/stack.ts';

const UPSTREAM_TIMEOUT_MS = 1000;
/**
 * The client must see the cut before this. It only tells the cut from the bug (the client waited ~66 s, for the
 * server's 65 s keep-alive timeout), so it is generous: a loaded machine may be slow, never that slow.
 */
const PROMPT_MS = 30_000;

let stack: Stack;

before(async () => {
  stack = await startStack({ config: (stubUrl) => ({ ...defaultConfig(stubUrl), server: { 'upstream-timeout': `${UPSTREAM_TIMEOUT_MS}ms` } }) });
});
after(async () => {
  await stack?.stop();
});

/** What the client saw: the status, the request id, how its body read ended, and when (ms after sending). */
interface Outcome {
  status: number;
  id: string;
  bodyError: unknown;
  elapsedMs: number;
}

/**
 * POSTs `body` to `path` and reads the answer's body; a read still going after {@link PROMPT_MS}
 * is abandoned (its connection aborted) and reported as `'still waiting'`.
 */
async function cutAnswer(path: string, body: Record<string, unknown>): Promise<Outcome> {
  const controller = new AbortController();
  const t0 = Date.now();
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), PROMPT_MS)));
  const read = res.arrayBuffer().then(
    () => 'the body ended as if complete',
    (err: unknown) => err,
  );
  const bodyError = await Promise.race([read, waited]);
  const elapsedMs = Date.now() - t0;
  clearTimeout(timer);
  controller.abort();
  return { status: res.status, id: res.headers.get('svc-id')!, bodyError, elapsedMs };
}

const CASES = [
  { name: 'chat completions (OpenAI)', path: '/v1/chat/completions', body: { model: 'openai/reset-mid-body', messages: [{ role: 'user', content: 'x' }] } },
  { name: 'Messages (Anthropic)', path: '/v1/messages', body: { model: 'anthropic/reset-mid-body', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] } },
  { name: 'Responses (OpenAI)', path: '/v1/responses', body: { model: 'openai/reset-mid-body', input: 'x' } },
] as const;

describe('a non-streamed passthrough answer the provider cuts mid-body', () => {
  for (const c of CASES) {
    test(`${c.name}: reset → the client's connection breaks at once; logged as 502 upstream_disconnected`, async () => {
      const out = await cutAnswer(c.path, c.body);
      assert.equal(out.status, 200, 'the provider’s status and headers were passed on before the cut');
      assert.ok(out.bodyError instanceof Error, `the client's body read fails (got: ${String(out.bodyError)})`);
      assert.ok(out.elapsedMs < PROMPT_MS, `the client saw the cut after ${out.elapsedMs} ms`);
      const rec = await fetchRecord(stack, out.id);
      assert.equal(rec.response_status, 502);
      assert.match(JSON.stringify(rec.llmSchema.response.error), /connection lost mid-response/);
      assert.equal(rec.properties['svc-client-closed'] ?? 'false', 'false', 'the gateway broke the connection, not the client');
      assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
    });
  }

  test(`Messages (Anthropic): silent mid-body → the client's connection breaks once the ${UPSTREAM_TIMEOUT_MS} ms timeout passes; logged as 504`, async () => {
    const out = await cutAnswer('/v1/messages', { model: 'anthropic/stall-mid-body', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(out.status, 200);
    assert.ok(out.bodyError instanceof Error, `the client's body read fails (got: ${String(out.bodyError)})`);
    assert.ok(out.elapsedMs >= UPSTREAM_TIMEOUT_MS - 20 && out.elapsedMs < PROMPT_MS, `the client saw the cut after ${out.elapsedMs} ms`);
    const rec = await fetchRecord(stack, out.id);
    assert.equal(rec.response_status, 504);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /timed out mid-response/);
    assert.equal(rec.properties['svc-client-closed'] ?? 'false', 'false');
  });
});
