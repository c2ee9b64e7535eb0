/**
 * End-to-end: the tokens and cost the request log keeps for one provider answer, whichever API the
 * client spoke, through the running proxy and admin on PostgreSQL. The provider is
 * test/support/queued-answer-stub.ts, answering each request with the body the test queued: a
 * recorded fixture as it is, or a variant of one built here (named so where it is built).
 *
 * - Gemini counts thinking in `total_tokens` only (prompt 35, completion 12, total 109) and bills it
 *   as output: logged as 74 completion tokens and 62 reasoning on chat completions, Messages (JSON and
 *   stream) and Responses, and the Messages and Responses clients see 74 output tokens.
 * - Anthropic's cache writes reach the log through the Responses API (as through Messages and chat
 *   completions), and 1-hour writes are priced at the 1-hour price on every API, streams included.
 * - Embeddings given as token ids, answered without usage, are estimated as one token per id.
 * Run: node --import tsx --test test/e2e-usage-cost.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { readMessagesStream } from './support/messages-stream.ts';
import { fetchRecord, startStubbedStack, type StubbedStack } from './support/stack.ts';

const FIXTURES = new URL('./fixtures/providers/', import.meta.url);
const fixture = (path: string): string => readFileSync(new URL(path, FIXTURES), 'utf8');

let env: StubbedStack;

before(async () => {
  env = await startStubbedStack('test/support/queued-answer-stub.ts', (stub) => ({
    providers: {
      gemini: { 'base-url': `${stub}/v1beta/openai` },
      anthropic: { 'base-url': `${stub}/v1` },
    },
  }));
});
after(async () => {
  await env?.stop();
});

/** Queues the provider's next answers (bodies as text, byte for byte). */
async function queue(...answers: Array<{ body: string; contentType?: string }>): Promise<void> {
  const res = await fetch(`${env.stubUrl}/__answers`, { method: 'POST', body: JSON.stringify(answers) });
  assert.equal(res.status, 200);
}

const sse = (body: string) => ({ body, contentType: 'text/event-stream' });

/** POSTs `body` to the gateway with the stack's key: the status, the answer's text and the request id. */
async function post(path: string, body: unknown): Promise<{ status: number; text: string; id: string }> {
  const res = await fetch(`${env.stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), id: res.headers.get('svc-id') ?? '' };
}

/** The logged request's token counts and cost: those named in `expected`, to compare with it. */
async function logged(id: string, expected: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await fetchRecord(env.stack, id);
  const all: Record<string, unknown> = {
    prompt: r.prompt_tokens,
    completion: r.completion_tokens,
    total: r.total_tokens,
    reasoning: r.reasoning_tokens,
    cacheRead: r.prompt_cache_read_tokens,
    cacheWrite: r.prompt_cache_write_tokens,
    cacheWrite1h: r.properties['svc-cache-write-1h-tokens'] ?? null,
    source: r.properties['svc-tokens-source'],
    cost: r.cost,
  };
  return Object.fromEntries(Object.keys(expected).map((k) => [k, all[k]]));
}

/** The `data:` JSON of every event of an SSE text. */
const dataOf = (text: string): any[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)));

/** The completed response of a Responses stream. */
const completedResponse = (text: string): any => dataOf(text).find((e) => e.type === 'response.completed')?.response;

describe('Gemini: thinking counted only in total_tokens is output', () => {
  const toolCall = fixture('gemini/openai-compat-chat-completion-tool-call.json');
  // gemini-2.5-pro: $1.25 input, $10 output (thinking included): 35 × 1.25 + 74 × 10 = 783.75 → $0.00078375.
  const expected = { prompt: 35, completion: 74, total: 109, reasoning: 62, source: 'provider', cost: 0.00078375 };
  const tools = [{ type: 'function', function: { name: 'get_current_time', parameters: { type: 'object', properties: {} } } }];

  test('chat completions: the answer as Gemini sent it; the log counts the 62 thinking tokens as output', async () => {
    await queue({ body: toolCall });
    const r = await post('/ai/chat/completions', { model: 'gemini/gemini-2.5-pro', messages: [{ role: 'user', content: 'time?' }], tools });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(JSON.parse(r.text).usage, { completion_tokens: 12, prompt_tokens: 35, total_tokens: 109 }, 'a passthrough answer is not rewritten');
    assert.deepEqual(await logged(r.id, expected), expected);
  });

  test('Messages: output_tokens include the thinking, and the log total is Gemini\'s', async () => {
    await queue({ body: toolCall });
    const r = await post('/v1/messages', {
      model: 'gemini/gemini-2.5-pro',
      max_tokens: 1000,
      messages: [{ role: 'user', content: 'time?' }],
      tools: [{ name: 'get_current_time', input_schema: { type: 'object', properties: {} } }],
    });
    assert.equal(r.status, 200, r.text);
    const usage = JSON.parse(r.text).usage;
    assert.equal(usage.input_tokens, 35);
    assert.equal(usage.output_tokens, 74);
    assert.deepEqual(usage.output_tokens_details, { thinking_tokens: 62 });
    assert.deepEqual(await logged(r.id, expected), expected);
  });

  test('Messages stream: message_delta carries the output with the thinking', async () => {
    // Built from the recorded tool-call answer (no recorded Gemini stream exists): one text chunk
    // with the finish reason and the answer's usage, as Gemini's stream ends, then [DONE].
    const answer = JSON.parse(toolCall);
    const chunk = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model, choices: [{ index: 0, delta: { role: 'assistant', content: 'It is noon.' }, finish_reason: 'stop' }], usage: answer.usage };
    await queue(sse(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`));
    const r = await post('/v1/messages', { model: 'gemini/gemini-2.5-pro', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'time?' }] });
    assert.equal(r.status, 200, r.text);
    const { usages } = readMessagesStream(r.text);
    assert.equal(usages.at(-1)!.output_tokens, 74);
    assert.deepEqual(await logged(r.id, expected), expected);
  });

  test('Responses: output_tokens include the thinking', async () => {
    await queue({ body: toolCall });
    const r = await post('/ai/responses', { model: 'gemini/gemini-2.5-pro', input: 'time?', tools: [{ type: 'function', name: 'get_current_time', parameters: { type: 'object', properties: {} } }] });
    assert.equal(r.status, 200, r.text);
    const usage = JSON.parse(r.text).usage;
    assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.output_tokens_details.reasoning_tokens, usage.total_tokens], [35, 74, 62, 109]);
    assert.deepEqual(await logged(r.id, expected), expected);
  });
});

/** message.json (3 input, 1111 read, 418 written, 33 output) with its 418 writes under `ttl`: `5m` as recorded, or `1h` (built here). */
function anthropicMessage(ttl: '5m' | '1h'): string {
  const text = fixture('anthropic/message.json');
  if (ttl === '5m') return text;
  const message = JSON.parse(text);
  message.usage.cache_creation = { ephemeral_1h_input_tokens: 418, ephemeral_5m_input_tokens: 0 };
  return JSON.stringify(message);
}

/**
 * message-stream-recorded.sse (20 input, 5 output, no cache) with 3 input, 1111 read and 418 written under `ttl`
 * (built here: no recorded stream has cache activity), in message_start and the cumulative message_delta.
 */
function anthropicStream(ttl: '5m' | '1h'): string {
  const split = ttl === '1h' ? '"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":418' : '"ephemeral_5m_input_tokens":418,"ephemeral_1h_input_tokens":0';
  const counts = '"input_tokens":3,"cache_creation_input_tokens":418,"cache_read_input_tokens":1111';
  const text = fixture('anthropic/message-stream-recorded.sse')
    .replace('"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}', `${counts},"cache_creation":{${split}}`)
    .replace('"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5', `${counts},"output_tokens":5`);
  assert.equal(text.split('"cache_read_input_tokens":1111').length, 3, 'both usages rewritten');
  return text;
}

const BODIES: Record<string, unknown> = {
  '/v1/messages': { model: 'anthropic/claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] },
  '/ai/chat/completions': { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] },
  '/ai/responses': { model: 'anthropic/claude-sonnet-4-5', input: 'x' },
};

describe('Anthropic cache writes: the same cost on every API', () => {
  // claude-sonnet-4-5: $3 input, $0.30 reads, $3.75 5-minute writes, $6 1-hour writes, $15 output.
  const json = { prompt: 1532, completion: 33, total: 1565, cacheRead: 1111, cacheWrite: 418, source: 'provider' };

  for (const path of Object.keys(BODIES)) {
    test(`${path}: 5-minute writes (message.json as recorded): 9 + 333.3 + 1567.5 + 495 → $0.0024048`, async () => {
      await queue({ body: anthropicMessage('5m') });
      const r = await post(path, BODIES[path]);
      assert.equal(r.status, 200, r.text);
      const want = { ...json, cacheWrite1h: null, cost: 0.0024048 };
      assert.deepEqual(await logged(r.id, want), want);
    });

    test(`${path}: 1-hour writes: 9 + 333.3 + 2508 + 495 → $0.0033453`, async () => {
      await queue({ body: anthropicMessage('1h') });
      const r = await post(path, BODIES[path]);
      assert.equal(r.status, 200, r.text);
      const want = { ...json, cacheWrite1h: '418', cost: 0.0033453 };
      assert.deepEqual(await logged(r.id, want), want);
    });
  }

  test('Responses: the client sees the writes beside the cached tokens', async () => {
    await queue({ body: anthropicMessage('1h') });
    const r = await post('/ai/responses', BODIES['/ai/responses']);
    assert.deepEqual(JSON.parse(r.text).usage.input_tokens_details, { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 });
  });

  const streamed = { prompt: 1532, completion: 5, total: 1537, cacheRead: 1111, cacheWrite: 418, source: 'provider' };

  test('chat completions stream, 1-hour writes: 9 + 333.3 + 2508 + 75 → $0.0029253', async () => {
    await queue(sse(anthropicStream('1h')));
    const r = await post('/ai/chat/completions', { ...(BODIES['/ai/chat/completions'] as object), stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200, r.text);
    const usage = dataOf(r.text).find((c) => c.usage)?.usage;
    assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 });
    const want = { ...streamed, cacheWrite1h: '418', cost: 0.0029253 };
    assert.deepEqual(await logged(r.id, want), want);
  });

  for (const ttl of ['5m', '1h'] as const) {
    const cost = ttl === '5m' ? 0.0019848 : 0.0029253;
    test(`Responses stream, ${ttl} writes → $${cost}`, async () => {
      await queue(sse(anthropicStream(ttl)));
      const r = await post('/ai/responses', { ...(BODIES['/ai/responses'] as object), stream: true });
      assert.equal(r.status, 200, r.text);
      assert.equal(completedResponse(r.text).usage.input_tokens_details.cache_write_tokens, 418);
      const want = { ...streamed, cacheWrite1h: ttl === '1h' ? '418' : null, cost };
      assert.deepEqual(await logged(r.id, want), want);
    });
  }
});

describe('Embeddings given as token ids, answered without usage', () => {
  // Gemini's OpenAI-compatible embeddings answer, built here without usage (the case estimated).
  const answer = (n: number) => JSON.stringify({ object: 'list', data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })), model: 'gemini-embedding-001' });
  const ids = [9906, 1917, 11, 1268, 527, 499, 30];

  // $0.15 per million input tokens.
  for (const [name, input, tokens, n, cost] of [
    ['an array of token ids', ids, 7, 1, 0.00000105],
    ['an array of arrays of token ids', [ids, ids.slice(0, 3)], 10, 2, 0.0000015],
  ] as const) {
    test(`${name}: one token per id`, async () => {
      await queue({ body: answer(n) });
      const r = await post('/ai/embeddings', { model: 'gemini/gemini-embedding-001', input });
      assert.equal(r.status, 200, r.text);
      const want = { prompt: tokens, completion: 0, total: tokens, source: 'estimated', cost };
      assert.deepEqual(await logged(r.id, want), want);
    });
  }
});
