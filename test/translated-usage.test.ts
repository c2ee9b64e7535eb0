/**
 * Usage as the gateway's translations report it to the client, and the tokens admin estimates when a
 * provider reported none:
 * - chat usage of Gemini and xAI (reasoning counted only in `total_tokens`) as Messages and Responses
 *   usage, the reasoning in the output; other providers' usage as they count it (no double count);
 * - Anthropic's cache writes, and their 1-hour part, in chat usage (JSON and stream) and on to
 *   Responses usage;
 * - embeddings inputs given as token ids, estimated as one token per id (admin/ingest.ts).
 * The end-to-end costs are test/e2e-usage-cost.test.ts.
 * Run: node --import tsx --test test/translated-usage.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { recordToRow } from '../admin/ingest.ts';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import type { LogRecord } from '../shared/record.ts';
import { uncountedReasoningTokens } from '../shared/reasoning-usage.ts';
import { messagesUsage } from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { anthropicUsage, createAnthropicStreamMapper } from '../proxy/translators/openai-chat-to-anthropic-messages.ts';
import { responsesUsage } from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { logRecord } from './rest-support.ts';

const FIXTURES = new URL('./fixtures/providers/', import.meta.url);
const fixture = (path: string): string => readFileSync(new URL(path, FIXTURES), 'utf8');
const geminiUsage = JSON.parse(fixture('gemini/openai-compat-chat-completion-tool-call.json')).usage;
const xaiUsage = { prompt_tokens: 32, completion_tokens: 9, total_tokens: 135, completion_tokens_details: { reasoning_tokens: 94 } };

describe('reasoning counted only in total_tokens', () => {
  it('is the difference for Gemini and xAI, 0 for any other provider or an unknown one', () => {
    assert.equal(uncountedReasoningTokens('gemini', geminiUsage), 62);
    assert.equal(uncountedReasoningTokens('xai', xaiUsage), 94);
    for (const provider of ['openai', 'groq', 'deepseek', undefined, null]) assert.equal(uncountedReasoningTokens(provider, geminiUsage), 0, String(provider));
    assert.equal(uncountedReasoningTokens('gemini', { prompt_tokens: 35, completion_tokens: 74, total_tokens: 109 }), 0, 'already counted');
    assert.equal(uncountedReasoningTokens('gemini', { prompt_tokens: 35, completion_tokens: 12 }), 0, 'no total');
  });

  it('Messages usage: output_tokens include it, thinking_tokens say how much', () => {
    assert.deepEqual(messagesUsage(geminiUsage, 'gemini'), {
      input_tokens: 35,
      output_tokens: 74,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens_details: { thinking_tokens: 62 },
    });
    const xai = messagesUsage(xaiUsage, 'xai');
    assert.deepEqual([xai.output_tokens, xai.output_tokens_details], [103, { thinking_tokens: 94 }]);
  });

  it('Messages usage of OpenAI: reasoning_tokens are already inside completion_tokens', () => {
    const u = messagesUsage({ prompt_tokens: 20, completion_tokens: 500, total_tokens: 520, completion_tokens_details: { reasoning_tokens: 448 } }, 'openai');
    assert.deepEqual([u.output_tokens, u.output_tokens_details], [500, { thinking_tokens: 448 }]);
    assert.equal(messagesUsage(geminiUsage, 'groq').output_tokens, 12, 'not a provider known to leave reasoning out');
  });

  it('Responses usage: output_tokens include it; input plus output is the total', () => {
    const u = responsesUsage(geminiUsage, 'gemini');
    assert.deepEqual([u.output_tokens, u.output_tokens_details.reasoning_tokens, u.total_tokens], [74, 62, 109]);
    const xai = responsesUsage(xaiUsage, 'xai');
    assert.deepEqual([xai.output_tokens, xai.output_tokens_details.reasoning_tokens, xai.total_tokens], [103, 94, 135]);
    assert.deepEqual([responsesUsage(geminiUsage, 'mistral').output_tokens, responsesUsage(geminiUsage).output_tokens], [12, 12]);
  });
});

/** message.json's usage with its 418 writes under the 1-hour TTL (a variant built here). */
function oneHourUsage(): Record<string, unknown> {
  const usage = JSON.parse(fixture('anthropic/message.json')).usage;
  return { ...usage, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 418 } };
}

const call = (stream: boolean): TranslatorCall => ({ body: { model: 'claude-sonnet-4-5', messages: [] } as ChatCompletionRequest, stream, requestId: randomUUID(), provider: 'anthropic' });

/**
 * The usage of an Anthropic stream mapped to chat chunks: the usage chunk's (the client asked with
 * `stream_options.include_usage`), and the one withheld for the log without it; the two must agree.
 */
async function streamedUsage(sse: string): Promise<Record<string, any>> {
  const asked = call(true);
  asked.body.stream_options = { include_usage: true };
  let out = '';
  for await (const piece of Readable.from([Buffer.from(sse)]).pipe(createAnthropicStreamMapper(asked))) out += String(piece);
  const chunks = out.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
  const sent = chunks.find((c) => c.usage)!.usage;
  const unasked = call(true);
  for await (const piece of Readable.from([Buffer.from(sse)]).pipe(createAnthropicStreamMapper(unasked))) void piece;
  assert.deepEqual(unasked.withheldUsage, sent);
  return sent;
}

describe('Anthropic cache writes in chat usage', () => {
  it('the 1-hour part rides beside cache_write_tokens, only when there is one', () => {
    assert.deepEqual(anthropicUsage(oneHourUsage()).prompt_tokens_details, { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 });
    assert.deepEqual(anthropicUsage(JSON.parse(fixture('anthropic/message.json')).usage).prompt_tokens_details, { cached_tokens: 1111, cache_write_tokens: 418 });
  });

  it('a stream keeps message_start\'s TTL split (message_delta carries only counts)', async () => {
    const sse = fixture('anthropic/message-stream-recorded.sse').replace('"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0', '"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":7');
    assert.deepEqual((await streamedUsage(sse)).prompt_tokens_details, { cached_tokens: 0, cache_write_tokens: 0, cache_write_1h_tokens: 7 });
  });

  it('Responses usage carries the writes as chat usage reported them, absent when it did not', () => {
    assert.deepEqual(responsesUsage(anthropicUsage(oneHourUsage()), 'anthropic').input_tokens_details, { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 });
    assert.deepEqual(responsesUsage({ prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }, 'groq').input_tokens_details, { cached_tokens: 0 });
  });
});

describe('estimated embeddings tokens (no usage from the provider)', () => {
  const ids = [9906, 1917, 11, 1268, 527, 499, 30];
  const promptTokens = (input: unknown): unknown =>
    recordToRow(
      logRecord(randomUUID(), {
        endpoint: 'embeddings',
        path: '/ai/embeddings',
        provider: 'gemini',
        modelSent: 'gemini-embedding-001',
        requestBody: { model: 'gemini/gemini-embedding-001', input },
        responseBody: { object: 'list', data: [], model: 'gemini-embedding-001' },
        usage: null,
      }),
    ).prompt_tokens;

  it('a token id is one token, flat or in arrays of arrays', () => {
    assert.equal(promptTokens(ids), 7);
    assert.equal(promptTokens([ids, ids.slice(0, 3)]), 10);
  });

  it('texts are counted one by one', () => {
    assert.equal(promptTokens('hello world'), 2);
    assert.equal(promptTokens(['hello world', 'hello world']), 4);
  });
});

describe('the estimated-usage marker (svc_token_count)', () => {
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_tokens_details: { cached_tokens: 80 }, svc_token_count: 'estimate' };
  const row = (over: Partial<LogRecord>) => recordToRow(logRecord(randomUUID(), { usage: usage as LogRecord['usage'], responseBody: { object: 'chat.completion', choices: [], usage }, ...over }));

  it('is not trusted from a provider that passed its answer through: its usage stays the provider\'s, cached tokens and all', () => {
    const r = row({ provider: 'openai' });
    assert.equal(r.tokens_source, 'provider');
    assert.equal(r.prompt_cache_read_tokens, 80);
    assert.equal(row({ provider: 'bedrock' }).tokens_source, 'provider', 'bedrock chat: the gateway never marks it');
    assert.equal(row({ provider: 'openai', endpoint: 'embeddings' }).tokens_source, 'provider', 'embeddings of another provider');
  });

  it('is honoured where the gateway puts it: embeddings answered by bedrock', () => {
    const marked = { prompt_tokens: 7, total_tokens: 7, svc_token_count: 'estimate' };
    const r = recordToRow(
      logRecord(randomUUID(), {
        endpoint: 'embeddings',
        path: '/ai/embeddings',
        provider: 'bedrock',
        modelSent: 'amazon.titan-embed-text-v2:0',
        requestBody: { model: 'bedrock/amazon.titan-embed-text-v2:0', input: 'hello' },
        responseBody: { object: 'list', data: [], model: 'amazon.titan-embed-text-v2:0', usage: marked },
        usage: marked as LogRecord['usage'],
      }),
    );
    assert.equal(r.tokens_source, 'estimated');
    assert.equal(r.prompt_tokens, 7);
  });
});
