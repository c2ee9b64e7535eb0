/**
 * Reading a log record's usage in each dialect (admin/usage.ts): Anthropic Messages bodies and
 * streams from the recorded fixtures (input tokens exclude cached ones; 5-minute and 1-hour writes;
 * message_start and message_delta usage merged), OpenAI chat completions (Gemini's and xAI's reasoning
 * counted only in the total) and Responses (the cache writes the gateway's translations carry).
 * Run: node --import tsx --test test/usage.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { mergedUsageObject, readUsage } from '../admin/usage.ts';
import type { LogRecord } from '../shared/record.ts';
import { anthropicFixture, readMessagesStream } from './support/messages-stream.ts';

type Rec = Pick<LogRecord, 'usage' | 'responseBody' | 'endpoint'>;
const messages = (usage: unknown, responseBody: unknown = null): Rec => ({ usage: usage as LogRecord['usage'], responseBody, endpoint: 'messages' });

describe('Anthropic Messages usage', () => {
  it('a JSON message: the prompt adds cache reads and writes to input_tokens (message.json)', () => {
    const body = JSON.parse(anthropicFixture('message.json'));
    const u = readUsage(messages(body.usage, body))!;
    assert.deepEqual(u, {
      promptTokens: 3 + 1111 + 418,
      completionTokens: 33,
      totalTokens: 1532 + 33,
      reasoningTokens: null,
      cacheReadTokens: 1111,
      cacheWriteTokens: 418,
      cacheWrite1hTokens: 0,
      promptAudioTokens: null,
      completionAudioTokens: null,
    });
  });

  it('a JSON message without cache activity (message-tool-use.json)', () => {
    const body = JSON.parse(anthropicFixture('message-tool-use.json'));
    const u = readUsage(messages(body.usage, body))!;
    assert.equal(u.promptTokens, 423);
    assert.equal(u.completionTokens, 202);
    assert.equal(u.cacheReadTokens, 0);
    assert.equal(u.cacheWriteTokens, 0);
  });

  it('a stream whose message_delta carries only output_tokens: message_start supplies the input (message-stream.sse)', () => {
    const s = readMessagesStream(anthropicFixture('message-stream.sse'));
    assert.deepEqual(s.usages, [{ input_tokens: 11, output_tokens: 1 }, { output_tokens: 6 }]);
    // The recorder keeps the last usage; the assembled body keeps message_start's.
    const u = readUsage(messages(s.usages.at(-1), s.message))!;
    assert.equal(u.promptTokens, 11);
    assert.equal(u.completionTokens, 6);
    assert.equal(u.totalTokens, 17);
  });

  it('a stream whose message_delta repeats the cumulative counts (message-stream-recorded.sse)', () => {
    const s = readMessagesStream(anthropicFixture('message-stream-recorded.sse'));
    const last = readUsage(messages(s.usages.at(-1), null))!;
    assert.equal(last.promptTokens, 20);
    assert.equal(last.completionTokens, 5);
    assert.equal(readUsage(messages(s.usages.at(-1), s.message))!.completionTokens, 5, 'the delta wins over message_start output_tokens: 1');
  });

  it('thinking tokens of a stream count as reasoning tokens (message-stream-thinking-tool-use.sse)', () => {
    const s = readMessagesStream(anthropicFixture('message-stream-thinking-tool-use.sse'));
    const u = readUsage(messages(s.usages.at(-1), s.message))!;
    assert.equal(u.promptTokens, 598);
    assert.equal(u.completionTokens, 92);
    assert.equal(u.reasoningTokens, 53);
  });

  it('splits 1-hour from 5-minute cache writes, the total being cache_creation_input_tokens', () => {
    const u = readUsage(
      messages({
        input_tokens: 10,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 3000,
        cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
        output_tokens: 500,
      }),
    )!;
    assert.equal(u.promptTokens, 4010);
    assert.equal(u.cacheWriteTokens, 3000);
    assert.equal(u.cacheWrite1hTokens, 2000);
    // Only the split: the total is its sum.
    assert.equal(readUsage(messages({ input_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 5 }, output_tokens: 1 }))!.cacheWriteTokens, 9);
  });

  it('merges message_start and message_delta usage member by member, cache_creation too', () => {
    const merged = mergedUsageObject({
      responseBody: { type: 'message', usage: { input_tokens: 7, output_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 0 } } },
      usage: { output_tokens: 40, cache_creation: { ephemeral_1h_input_tokens: 2 } } as LogRecord['usage'],
    });
    assert.deepEqual(merged, { input_tokens: 7, output_tokens: 40, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 2 } });
  });

  it('without input_tokens the prompt is unknown, and malformed counts are ignored, never thrown', () => {
    const u = readUsage(messages({ output_tokens: 6 }))!;
    assert.equal(u.promptTokens, null);
    assert.equal(u.completionTokens, 6);
    const odd = readUsage(messages({ input_tokens: -3, output_tokens: Number.NaN, cache_read_input_tokens: 'x' }))!;
    assert.deepEqual([odd.promptTokens, odd.completionTokens, odd.cacheReadTokens], [null, null, null]);
    assert.equal(readUsage(messages(null, null)), null);
  });
});

describe('OpenAI usage', () => {
  it('chat completions: prompt_tokens include cached tokens', () => {
    const u = readUsage({
      endpoint: 'chat',
      responseBody: null,
      usage: { prompt_tokens: 2000, completion_tokens: 300, total_tokens: 2300, prompt_tokens_details: { cached_tokens: 1024, cache_write_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 64 } },
    })!;
    assert.deepEqual([u.promptTokens, u.completionTokens, u.totalTokens, u.cacheReadTokens, u.cacheWriteTokens, u.reasoningTokens], [2000, 300, 2300, 1024, 10, 64]);
  });

  it('chat completions from Gemini: the thinking counted only in total_tokens is completion and reasoning (the recorded tool call)', () => {
    const usage = JSON.parse(readFileSync(new URL('./fixtures/providers/gemini/openai-compat-chat-completion-tool-call.json', import.meta.url), 'utf8')).usage;
    assert.deepEqual(usage, { completion_tokens: 12, prompt_tokens: 35, total_tokens: 109 });
    const u = readUsage({ endpoint: 'chat', provider: 'gemini', responseBody: null, usage })!;
    assert.deepEqual([u.promptTokens, u.completionTokens, u.totalTokens, u.reasoningTokens], [35, 74, 109, 62]);
    // xAI's documented example: 94 reasoning tokens beside 9 completion tokens, all in the total.
    const xai = readUsage({ endpoint: 'chat', provider: 'xai', responseBody: null, usage: { prompt_tokens: 32, completion_tokens: 9, total_tokens: 135, completion_tokens_details: { reasoning_tokens: 94 } } })!;
    assert.deepEqual([xai.completionTokens, xai.totalTokens, xai.reasoningTokens], [103, 135, 94]);
  });

  it('chat completions elsewhere: reasoning is already inside completion_tokens, and a total beyond the sum is not taken as output', () => {
    // OpenAI: reasoning_tokens are part of completion_tokens; counting them again would double them.
    const openai = readUsage({ endpoint: 'chat', provider: 'openai', responseBody: null, usage: { prompt_tokens: 20, completion_tokens: 500, total_tokens: 520, completion_tokens_details: { reasoning_tokens: 448 } } })!;
    assert.deepEqual([openai.completionTokens, openai.totalTokens, openai.reasoningTokens], [500, 520, 448]);
    const odd = { prompt_tokens: 35, completion_tokens: 12, total_tokens: 109 };
    for (const provider of ['groq', undefined, null]) {
      const u = readUsage({ endpoint: 'chat', provider, responseBody: null, usage: odd })!;
      assert.deepEqual([u.completionTokens, u.reasoningTokens], [12, null], String(provider));
    }
    // Gemini usage already counting the thinking (as the gateway's own translations report it) is not counted twice.
    const normalized = readUsage({ endpoint: 'chat', provider: 'gemini', responseBody: null, usage: { prompt_tokens: 35, completion_tokens: 74, total_tokens: 109 } })!;
    assert.deepEqual([normalized.completionTokens, normalized.reasoningTokens], [74, null]);
  });

  it('chat completions from Anthropic through the gateway: the 1-hour part of the cache writes', () => {
    const u = readUsage({
      endpoint: 'chat',
      provider: 'anthropic',
      responseBody: null,
      usage: { prompt_tokens: 1532, completion_tokens: 33, total_tokens: 1565, prompt_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 } } as LogRecord['usage'],
    })!;
    assert.deepEqual([u.cacheReadTokens, u.cacheWriteTokens, u.cacheWrite1hTokens], [1111, 418, 418]);
    const over = readUsage({ endpoint: 'chat', responseBody: null, usage: { prompt_tokens: 9, completion_tokens: 1, prompt_tokens_details: { cache_write_tokens: 4, cache_write_1h_tokens: 7 } } as LogRecord['usage'] })!;
    assert.equal(over.cacheWrite1hTokens, 4, 'never more than all the writes');
  });

  it('Responses through the gateway: cache writes, and their 1-hour part, beside the cached tokens', () => {
    const usage = { input_tokens: 1532, input_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418, cache_write_1h_tokens: 418 }, output_tokens: 33, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1565 };
    const u = readUsage({ endpoint: 'responses', responseBody: null, usage: usage as LogRecord['usage'] })!;
    assert.deepEqual([u.promptTokens, u.cacheReadTokens, u.cacheWriteTokens, u.cacheWrite1hTokens, u.completionTokens], [1532, 1111, 418, 418, 33]);
  });

  it('Responses: input_tokens include cached tokens; reasoning under output_tokens_details', () => {
    const usage = { input_tokens: 500, input_tokens_details: { cached_tokens: 128 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 16 }, total_tokens: 540 };
    for (const endpoint of ['responses', 'chat'] as const) {
      const u = readUsage({ endpoint, responseBody: null, usage: usage as LogRecord['usage'] })!;
      assert.deepEqual([u.promptTokens, u.cacheReadTokens, u.completionTokens, u.reasoningTokens, u.totalTokens], [500, 128, 40, 16, 540], endpoint);
    }
  });
});
