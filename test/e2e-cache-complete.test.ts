/**
 * End-to-end: the response cache stores only complete, successful answers (issue 18), through the
 * running proxy and admin, with test/support/cache-completion-stub.ts as every provider. Each case
 * sends the same request twice with `Svc-Cache-Enabled: true`; the stub's request count says whether
 * the second went upstream. Not stored (MISS, MISS, two upstream calls): a stream the provider ends
 * cleanly but early, passed through (chat completions, Messages, Responses) and translated; a chat
 * stream with an error chunk before its `[DONE]`; a non-streamed 200 whose body is an error object,
 * or empty. Stored (MISS, HIT, one upstream call): the same APIs' complete streams and bodies, passed
 * through and translated, a Responses stream ending in `response.incomplete` (and a translated one,
 * from a chat stream cut by its length), and a Responses stream whose `response.completed` carries
 * 100 KB.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStubbedStack, stubRequests, uniq, type StubbedStack } from './support/stack.ts';

let stubbed: StubbedStack;
before(async () => {
  stubbed = await startStubbedStack('test/support/cache-completion-stub.ts', (stubUrl) => ({
    providers: {
      openai: { 'base-url': `${stubUrl}/v1` },
      groq: { 'base-url': `${stubUrl}/openai/v1` },
      anthropic: { 'base-url': `${stubUrl}/v1` },
    },
  }));
});
after(() => stubbed?.stop());

/** What one request got: status, `Svc-Cache`, the body as text. */
interface Answer {
  status: number;
  cache: string | null;
  text: string;
}

/** POSTs `body` to the gateway's `path` with the cache on, reading the answer to its end. */
async function post(path: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${stubbed.stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stubbed.stack.apiKey}`, 'content-type': 'application/json', 'svc-cache-enabled': 'true' },
    body: JSON.stringify(body),
  });
  return { status: res.status, cache: res.headers.get('svc-cache'), text: await res.text() };
}

/**
 * Sends `body` to `path` twice.
 * @returns both answers and how many requests reached the stub meanwhile.
 */
async function twice(path: string, body: Record<string, unknown>): Promise<{ first: Answer; second: Answer; upstream: number }> {
  const before = (await stubRequests(stubbed.stubUrl)).length;
  const first = await post(path, body);
  const second = await post(path, body);
  return { first, second, upstream: (await stubRequests(stubbed.stubUrl)).length - before };
}

/** A request body of `path`'s API for `model` (unique to the call, so cases never share a key). */
function bodyFor(path: string, model: string, stream: boolean): Record<string, unknown> {
  const text = `q ${uniq()}`;
  if (path === '/v1/messages') return { model, max_tokens: 100, stream, messages: [{ role: 'user', content: text }] };
  if (path === '/v1/responses') return { model, stream, input: text };
  return { model, stream, messages: [{ role: 'user', content: text }] };
}

/** Asserts the answer was not stored: a 200 miss twice, both sent upstream. */
async function notStored(path: string, model: string, stream: boolean): Promise<Answer> {
  const { first, second, upstream } = await twice(path, bodyFor(path, model, stream));
  assert.equal(first.status, 200, first.text.slice(0, 300));
  assert.deepEqual([first.cache, second.cache], ['MISS', 'MISS'], `${path} ${model}: the second request is a miss too`);
  assert.equal(upstream, 2, `${path} ${model}: both requests reached the provider`);
  return first;
}

/** Asserts the answer was stored: a miss, then a hit with the same bytes that did not go upstream. */
async function stored(path: string, model: string, stream: boolean): Promise<Answer> {
  const { first, second, upstream } = await twice(path, bodyFor(path, model, stream));
  assert.equal(first.status, 200, first.text.slice(0, 300));
  assert.deepEqual([first.cache, second.cache], ['MISS', 'HIT'], `${path} ${model}: the second request is a hit`);
  assert.equal(upstream, 1, `${path} ${model}: only the miss reached the provider`);
  assert.equal(second.text, first.text, 'the hit replays the miss byte for byte');
  return first;
}

describe('streams passed through', () => {
  test('chat completions: ended without data: [DONE] → not stored; complete → stored', async () => {
    const cut = await notStored('/ai/chat/completions', 'openai/truncated', true);
    assert.doesNotMatch(cut.text, /\[DONE\]|"finish_reason":"stop"/, 'the client got the stream as the provider cut it');
    assert.ok(cut.text.trimEnd().endsWith('}'), 'no error event was added: the gateway saw a clean end');
    assert.ok((await stored('/ai/chat/completions', 'openai/complete', true)).text.trimEnd().endsWith('data: [DONE]'));
  });

  test('chat completions: an error chunk before data: [DONE] → not stored', async () => {
    const a = await notStored('/ai/chat/completions', 'openai/error-then-done', true);
    assert.match(a.text, /data: \{"error".*\n\ndata: \[DONE\]\n\n$/s);
  });

  test('Messages: ended without message_stop → not stored; complete → stored', async () => {
    const cut = await notStored('/v1/messages', 'anthropic/truncated', true);
    assert.match(cut.text, /^event: message_start\n/);
    assert.doesNotMatch(cut.text, /message_stop|event: error/);
    assert.match((await stored('/v1/messages', 'anthropic/complete', true)).text, /event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/);
  });

  test('Responses: ended without a final event → not stored; response.completed or response.incomplete → stored', async () => {
    const cut = await notStored('/v1/responses', 'openai/truncated', true);
    assert.match(cut.text, /^event: response\.created\n/);
    assert.doesNotMatch(cut.text, /response\.(completed|incomplete|failed)|event: error/);
    assert.match((await stored('/v1/responses', 'openai/complete', true)).text, /event: response\.completed\n/);
    assert.match((await stored('/v1/responses', 'openai/incomplete', true)).text, /event: response\.incomplete\n.*"max_output_tokens"/);
    const large = await stored('/v1/responses', 'openai/large', true);
    const final = large.text.slice(large.text.lastIndexOf('event: '));
    assert.ok(final.startsWith('event: response.completed\n') && final.length > 100_000, `a final event of ${final.length} bytes`);
  });
});

describe('streams translated', () => {
  test('chat completions from Anthropic: cut → not stored (an error event ends it); complete → stored', async () => {
    const cut = await notStored('/ai/chat/completions', 'anthropic/truncated', true);
    assert.match(cut.text, /data: \{"error"/);
    assert.ok((await stored('/ai/chat/completions', 'anthropic/complete', true)).text.trimEnd().endsWith('data: [DONE]'));
  });

  test('Messages from chat completions: cut → not stored; complete → stored', async () => {
    assert.match((await notStored('/v1/messages', 'openai/truncated', true)).text, /event: error\n/);
    assert.match((await stored('/v1/messages', 'openai/complete', true)).text, /event: message_stop\n[^\n]*\n\n$/);
  });

  test('Responses from Anthropic and from chat completions: cut → not stored; completed or incomplete → stored', async () => {
    assert.match((await notStored('/v1/responses', 'anthropic/truncated', true)).text, /event: response\.failed\n/);
    assert.match((await stored('/v1/responses', 'anthropic/complete', true)).text, /event: response\.completed\n/);
    assert.match((await stored('/v1/responses', 'groq/length', true)).text, /event: response\.incomplete\n/, 'a chat stream cut by its length is a whole answer');
  });
});

describe('bodies not streamed', () => {
  const apis: Array<[string, string, RegExp]> = [
    ['/ai/chat/completions', 'openai', /^\{"error":\{"message":"quota"/],
    ['/v1/messages', 'anthropic', /^\{"type":"error","error":\{"type":"overloaded_error"/],
    ['/v1/responses', 'openai', /^\{"error":\{"message":"quota"/],
  ];
  for (const [path, provider, errorShape] of apis) {
    test(`${path}: a 200 error object or an empty 200 → not stored; an answer → stored`, async () => {
      assert.match((await notStored(path, `${provider}/error-body`, false)).text, errorShape, 'the client got the error body as sent');
      assert.equal((await notStored(path, `${provider}/empty-body`, false)).text, '');
      assert.ok(JSON.parse((await stored(path, `${provider}/complete`, false)).text).id);
    });
  }
});
