/**
 * Usage as the gateway's translations report it to the client, and the tokens admin estimates when a
 * provider reported none:
 * - chat usage of Gemini and xAI (reasoning counted only in `total_tokens`) as Messages and Responses
 *   usage, the reasoning in the output; other providers' usage as they count it (no double count);
 * - embeddings inputs given as token ids, estimated as one token per id (admin/ingest.ts).
 * The end-to-end costs are test/e2e-usage-cost.test.ts.
 * Run: node --import tsx --test test/translated-usage.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { recordToRow } from '../admin/ingest.ts';
import { uncountedReasoningTokens } from '../shared/reasoning-usage.ts';
import { messagesUsage } from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { responsesUsage } from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
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
