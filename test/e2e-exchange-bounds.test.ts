/**
 * End-to-end: the bounds on a provider answer the gateway collects whole before answering (a
 * translated non-streamed answer, a provider error it maps). Its size has its own bound,
 * `server.max-translated-response-size` (it was the request's `max-body-size`: pieces past it were
 * dropped silently, so a 2 MiB answer under a 1 MiB request limit became a misleading 502 "not a
 * message", and an endless body was read to its end); past it the provider is stopped at once and
 * the client answered 502 `upstream_response_too_large`. Its time is bounded too (a provider
 * trickling a byte a second held the client, which gets nothing until the end, for as long as it
 * trickled): the whole body must arrive within twice `upstream-timeout` of its headers, else 504 in
 * the caller's dialect. Both are logged as such.
 *
 * Real processes: test/support/hazard-stub.ts as the provider, admin on a fresh PostgreSQL database,
 * and the proxy with a 1 MiB request limit, a 4 MiB translated-answer limit, `upstream-timeout: 1s`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStubbedStack, waitFor, type StubbedStack } from './support/stack.ts';

const MAX_BODY = 1024 * 1024;
const MAX_TRANSLATED = 4 * 1024 * 1024;
const UPSTREAM_TIMEOUT_MS = 1000;

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack('test/support/hazard-stub.ts', (stubUrl) => ({
    providers: { openai: { 'base-url': `${stubUrl}/v1` }, anthropic: { 'base-url': `${stubUrl}/v1` } },
    server: { 'max-body-size': MAX_BODY, 'max-translated-response-size': MAX_TRANSLATED, 'upstream-timeout': `${UPSTREAM_TIMEOUT_MS}ms` },
  }));
});
after(async () => {
  await s?.stop();
});

/** POSTs `body` to `path` with the service key; the status, body text, request id and ms taken. */
async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; text: string; id: string; ms: number }> {
  const t0 = Date.now();
  const res = await fetch(`${s.stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, text, id: res.headers.get('svc-id')!, ms: Date.now() - t0 };
}

/** The stub's answers so far. */
async function stubAnswers(): Promise<Array<{ model: string; written: number; closedAt: number | null; finished: boolean }>> {
  return (await (await fetch(`${s.stubUrl}/__responses`)).json()) as Array<{ model: string; written: number; closedAt: number | null; finished: boolean }>;
}

const messages = (model: string): Record<string, unknown> => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });

describe('the size of a collected answer', () => {
  test('Messages → OpenAI chat: a 2 MiB answer (over the 1 MiB request limit, under the translated-answer limit) is translated whole', async () => {
    const out = await post('/v1/messages', messages('openai/big-json:2048'));
    assert.equal(out.status, 200, out.text.slice(0, 300));
    const msg = JSON.parse(out.text);
    assert.equal(msg.type, 'message');
    assert.equal(msg.content[0].text.length, 2048 * 1024);
  });

  test('chat → Anthropic: a 2 MiB answer is translated whole', async () => {
    const out = await post('/ai/chat/completions', { model: 'anthropic/big-json:2048', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(out.status, 200, out.text.slice(0, 300));
    assert.equal(JSON.parse(out.text).choices[0].message.content.length, 2048 * 1024);
  });

  test('Messages → OpenAI chat: an answer over the limit → 502 upstream_response_too_large in Anthropic’s shape, logged as such', async () => {
    const out = await post('/v1/messages', messages('openai/big-json:8192'));
    assert.equal(out.status, 502, out.text.slice(0, 300));
    const err = JSON.parse(out.text);
    assert.equal(err.type, 'error');
    assert.equal(err.error.type, 'api_error');
    assert.match(err.error.message, /more than 4194304 bytes.*max-translated-response-size/);
    const rec = await fetchRecord(s.stack, out.id);
    assert.equal(rec.response_status, 502);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /max-translated-response-size/);
  });

  test('an answer that never ends is stopped at the limit: the provider is cut off, not read to its end', async () => {
    await fetch(`${s.stubUrl}/__responses`, { method: 'DELETE' });
    const out = await post('/v1/messages', messages('openai/endless-json'));
    assert.equal(out.status, 502, out.text.slice(0, 300));
    assert.equal(JSON.parse(out.text).error.type, 'api_error');
    assert.match(out.text, /max-translated-response-size/);
    await waitFor(async () => (await stubAnswers())[0]?.closedAt != null, 5000);
    const [answer] = await stubAnswers();
    assert.equal(answer!.finished, false);
    // What the stub wrote before the cut: the limit plus what the sockets between held.
    assert.ok(answer!.written < MAX_TRANSLATED + 16 * 1024 * 1024, `the stub wrote ${answer!.written} bytes`);
  });
});

describe('the time of a collected answer', () => {
  for (const [model, what] of [['openai/trickle-json:200', 'a 200'], ['openai/trickle-error:200', 'a 400']] as const) {
    test(`Messages → OpenAI chat: ${what} whose body trickles a byte every 200 ms → 504 once twice upstream-timeout passed since its headers, logged`, async () => {
      const out = await post('/v1/messages', messages(model));
      assert.equal(out.status, 504, out.text.slice(0, 300));
      const err = JSON.parse(out.text);
      assert.equal(err.type, 'error');
      assert.equal(err.error.type, 'timeout_error');
      assert.match(err.error.message, /did not finish its answer within 2000 ms of its headers/);
      // No upper bound: the message says which bound ended it, and a loaded machine may answer late.
      assert.ok(out.ms >= 2 * UPSTREAM_TIMEOUT_MS - 20, `answered after ${out.ms} ms`);
      const rec = await fetchRecord(s.stack, out.id);
      assert.equal(rec.response_status, 504);
      assert.match(JSON.stringify(rec.llmSchema.response.error), /did not finish its answer/);
    });
  }

  test('Messages → OpenAI chat: a 200 that goes silent after its first bytes → 504 for its silence, after upstream-timeout', async () => {
    const out = await post('/v1/messages', messages('openai/trickle-json:60000'));
    assert.equal(out.status, 504, out.text.slice(0, 300));
    // The message proves the silence bound fired (not the 2× body bound): no upper timing bound, which flakes under load.
    assert.match(JSON.parse(out.text).error.message, /went silent for 1000 ms mid-response/);
  });

  test('chat → Anthropic: a trickling 200 → 504 upstream_timeout in OpenAI’s shape', async () => {
    const out = await post('/ai/chat/completions', { model: 'anthropic/trickle-json:200', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(out.status, 504, out.text.slice(0, 300));
    assert.equal(JSON.parse(out.text).error.code, 'upstream_timeout');
  });
});
