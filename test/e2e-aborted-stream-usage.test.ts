/**
 * End-to-end: a client that goes away in the middle of a streamed answer (logged 499). The provider already read the
 * prompt and generated part of the answer, and bills both, so the request's log row must not say 0 tokens / no cost:
 * - where the provider's usage arrived before the abort (Anthropic's `message_start` carries the input side,
 *   "Streaming Messages"), the prompt is the provider's count (input + cache reads + cache writes);
 * - where none arrived (an OpenAI chat stream has its usage only in its last chunk), the prompt is the gateway's
 *   estimate of the request (admin/ingest.ts, o200k_base: 3 tokens per message and its content, 3 priming the reply);
 * - the completion is the gateway's estimate of the text or tool-call arguments that reached the client
 *   (Anthropic's `message_start` `output_tokens: 1` is a count of an answer just begun, not of what was generated);
 * - the row says its tokens are estimated (`svc-tokens-source: estimated`), and carries their cost.
 * Four ways through the gateway: chat and Messages passed through, Messages translated to an OpenAI chat provider
 * (text, and a tool call's arguments), chat translated to Anthropic (with and without `stream_options.include_usage`). Real processes: the stub
 * test/support/aborted-stream-stub.ts (endless streams, an event every 20 ms), admin on a fresh PostgreSQL
 * database, and the proxy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { cutStreamCounts, isCutStream } from '../admin/cut-stream-usage.ts';
import type { LogRecord } from '../shared/record.ts';
import { countTokens } from '../shared/token-estimate.ts';
import { MESSAGE_START_USAGE } from './support/aborted-stream-usage.ts';
import { fetchRecord, startStubbedStack, uniq, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

let env: StubbedStack;

before(async () => {
  env = await startStubbedStack('test/support/aborted-stream-stub.ts', (stub) => ({
    providers: { openai: { 'base-url': `${stub}/v1` }, anthropic: { 'base-url': `${stub}/v1` } },
  }));
});
after(async () => {
  await env?.stop();
});

/** How many text (or argument) pieces the client reads before it aborts. */
const PIECES = 6;

/** The text or tool-call arguments one event of the client's dialect carries ('' for none). */
function pieceOf(dialect: 'chat' | 'messages', data: Json): string {
  if (dialect === 'chat') {
    const delta = data.choices?.[0]?.delta ?? {};
    return (delta.content ?? '') + (delta.tool_calls?.[0]?.function?.arguments ?? '');
  }
  if (data.type !== 'content_block_delta') return '';
  return data.delta.text ?? data.delta.partial_json ?? '';
}

/**
 * POSTs a streamed request and reads its events until {@link PIECES} pieces of answer arrived, then aborts.
 * @returns the request id and the answer text the client received.
 */
async function abortAfterPieces(path: string, dialect: 'chat' | 'messages', body: Json): Promise<{ id: string; received: string }> {
  const controller = new AbortController();
  const res = await fetch(`${env.stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  const id = res.headers.get('svc-id')!;
  let received = '';
  let pieces = 0;
  const parser = createParser({
    onEvent: (e) => {
      if (e.data === '[DONE]') return;
      const piece = pieceOf(dialect, JSON.parse(e.data) as Json);
      if (piece) {
        received += piece;
        pieces++;
      }
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  while (pieces < PIECES) {
    const { value, done } = await reader.read();
    assert.equal(done, false, 'the endless stream ended');
    parser.feed(decoder.decode(value, { stream: true }));
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  return { id, received };
}

/** The prompt tokens admin estimates for one user message (admin/ingest.ts): 3 + its tokens, 3 priming the reply. */
const estimatedPrompt = (content: string): number => 3 + countTokens(content) + 3;

/** The provider's prompt of {@link MESSAGE_START_USAGE}: input tokens exclude the cache reads and writes. */
const ANTHROPIC_PROMPT = MESSAGE_START_USAGE.input_tokens + MESSAGE_START_USAGE.cache_read_input_tokens + MESSAGE_START_USAGE.cache_creation_input_tokens;

const question = (): string => `Tell me a very long story about the number ${uniq()}, please.`;

const lookupTool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };

const CASES: Array<{ name: string; path: string; dialect: 'chat' | 'messages'; body: (q: string) => Json; prompt: (q: string) => number }> = [
  {
    name: 'chat passed through to OpenAI (no usage arrived)',
    path: '/v1/chat/completions',
    dialect: 'chat',
    body: (q) => ({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: q }] }),
    prompt: estimatedPrompt,
  },
  {
    name: 'Messages passed through to Anthropic (message_start usage arrived)',
    path: '/v1/messages',
    dialect: 'messages',
    body: (q) => ({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: q }] }),
    prompt: () => ANTHROPIC_PROMPT,
  },
  {
    name: 'Messages translated to an OpenAI chat provider (no usage arrived)',
    path: '/v1/messages',
    dialect: 'messages',
    body: (q) => ({ model: 'openai/gpt-4o-mini', max_tokens: 1000, messages: [{ role: 'user', content: q }] }),
    prompt: estimatedPrompt,
  },
  {
    name: 'Messages translated to an OpenAI chat provider, a tool call streaming its arguments',
    path: '/v1/messages',
    dialect: 'messages',
    body: (q) => ({
      model: 'openai/gpt-4o-mini',
      max_tokens: 1000,
      messages: [{ role: 'user', content: q }],
      tools: [{ name: 'lookup', input_schema: lookupTool.function.parameters }],
    }),
    prompt: estimatedPrompt,
  },
  {
    name: 'chat translated to Anthropic (message_start usage arrived)',
    path: '/v1/chat/completions',
    dialect: 'chat',
    body: (q) => ({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: q }] }),
    prompt: () => ANTHROPIC_PROMPT,
  },
  {
    name: 'chat translated to Anthropic, the client asking for the usage chunk (include_usage)',
    path: '/v1/chat/completions',
    dialect: 'chat',
    body: (q) => ({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: q }], stream_options: { include_usage: true } }),
    prompt: () => ANTHROPIC_PROMPT,
  },
];

describe('a client aborts a streamed answer after a few events: the row has the billed tokens, marked estimated', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const q = question();
      const { id, received } = await abortAfterPieces(c.path, c.dialect, c.body(q));
      const rec = await fetchRecord(env.stack, id);
      assert.equal(rec.response_status, 499);
      assert.equal(rec.properties['svc-client-closed'], 'true');
      const got = { prompt: rec.prompt_tokens, source: rec.properties['svc-tokens-source'] };
      assert.deepEqual(got, { prompt: c.prompt(q), source: 'estimated' }, `row ${JSON.stringify({ ...got, completion: rec.completion_tokens, cost: rec.cost })}`);
      // The gateway may have passed on a few more pieces than the client read before it saw the abort.
      const floor = countTokens(received);
      assert.ok(rec.completion_tokens >= floor && rec.completion_tokens <= floor * 4, `completion ${rec.completion_tokens}, the client received ${floor} tokens: ${received}`);
      assert.equal(rec.total_tokens, rec.prompt_tokens + rec.completion_tokens);
      assert.ok(rec.cost !== null && Number(rec.cost) > 0, `cost ${rec.cost}`);
    });
  }
});

describe('which records are cut streams (admin/cut-stream-usage.ts)', () => {
  const record = (over: Json): LogRecord => ({ streamed: true, clientClosed: true, status: 499, endpoint: 'chat', usage: null, cacheReferenceId: null, responseBody: { choices: [{ message: { content: 'a' }, finish_reason: null }] }, ...over }) as LogRecord;

  test('a chat answer cut before its finish, or after it but before the usage chunk, is cut', () => {
    assert.equal(isCutStream(record({})), true);
    assert.equal(isCutStream(record({ responseBody: { choices: [{ message: { content: 'a' }, finish_reason: 'stop' }] } })), true);
  });

  test('one whose final usage came, a cache hit, one the client did not leave, or one with no answer yet is not', () => {
    assert.equal(isCutStream(record({ usage: { prompt_tokens: 3, completion_tokens: 1 }, responseBody: { choices: [{ message: { content: 'a' }, finish_reason: 'stop' }] } })), false);
    assert.equal(isCutStream(record({ endpoint: 'messages', responseBody: { content: [], stop_reason: 'end_turn' } })), false);
    assert.equal(isCutStream(record({ endpoint: 'responses', responseBody: { status: 'completed', output: [] } })), false);
    assert.equal(isCutStream(record({ cacheReferenceId: '00000000-0000-4000-8000-000000000000' })), false);
    assert.equal(isCutStream(record({ clientClosed: false })), false);
    assert.equal(isCutStream(record({ responseBody: null })), false);
  });

  test('a reported prompt of 0 (a translated message_start) is no report: the estimate stands, the provider\'s cache counts dropped', () => {
    const reported = { promptTokens: 0, completionTokens: 0, totalTokens: 0, reasoningTokens: null, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: null, promptAudioTokens: null, completionAudioTokens: null };
    assert.deepEqual(cutStreamCounts(reported, 20, 7), { usage: null, prompt: 20, completion: 7 });
    const counted = cutStreamCounts({ ...reported, promptTokens: 42, completionTokens: 1, cacheReadTokens: 5 }, 20, 7);
    assert.deepEqual([counted.prompt, counted.completion, counted.usage?.totalTokens, counted.usage?.cacheReadTokens], [42, 7, 49, 5]);
  });
});
