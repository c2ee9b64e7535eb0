/**
 * Unit tests: a non-streamed answer larger than the recorder's cap (`log-queue.max-body-bytes`) keeps only a truncation
 * note as its body, but its usage (near the end of every dialect's JSON) and its model are still read, from a small
 * window of the answer's last bytes (and its first ones), so the row bills the provider's tokens, not an estimate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatCompletions } from '../proxy/endpoints/chat-completions.ts';
import { embeddings } from '../proxy/endpoints/embeddings.ts';
import { messages } from '../proxy/endpoints/messages.ts';
import { responses } from '../proxy/endpoints/responses.ts';
import type { EndpointKind } from '../proxy/endpoints/types.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';

/** Feeds `answer` in pieces of `piece` bytes to a recorder capped at `cap` bytes, and finishes it (status 200). */
function record(kind: EndpointKind, answer: unknown, cap: number, piece: number) {
  const bytes = Buffer.from(JSON.stringify(answer));
  const rec = new ResponseRecorder(false, cap, kind);
  for (let i = 0; i < bytes.length; i += piece) rec.push(bytes.subarray(i, i + piece));
  return rec.finish(200);
}

const PIECES = [1, 7, 100, 4096, 1 << 20];

test('a chat completion past the cap: usage and model read, body marked truncated', () => {
  const usage = { prompt_tokens: 24, completion_tokens: 8000, total_tokens: 8024, completion_tokens_details: { reasoning_tokens: 0 } };
  const answer = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-2024-08-06',
    // A tool call's arguments holding a "usage" member (escaped in the text) must not be taken for the answer's.
    choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(50_000), tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"usage":{"prompt_tokens":1}}' } }] }, finish_reason: 'stop' }],
    usage,
    system_fingerprint: 'fp_1',
  };
  for (const piece of PIECES) {
    // 120 bytes: the head kept holds the model (the answer's first ~90 bytes), however the chunks fall.
    const out = record(chatCompletions, answer, 120, piece);
    assert.equal(out.truncated, true, `piece ${piece}`);
    assert.equal(out.raw, null);
    assert.deepEqual(out.usage, usage, `piece ${piece}`);
    const body = out.body as Record<string, unknown>;
    assert.equal(body.truncated, true);
    assert.deepEqual(body.usage, usage);
    assert.equal(body.model, 'gpt-4o-2024-08-06', `piece ${piece}`);
  }
});

test('an embeddings answer with a big data array: usage and model from the end', () => {
  const usage = { prompt_tokens: 5000, total_tokens: 5000 };
  const data = Array.from({ length: 200 }, (_, index) => ({ object: 'embedding', index, embedding: Array.from({ length: 64 }, (_, j) => (j - 32) / 7) }));
  const answer = { object: 'list', data, model: 'text-embedding-3-small', usage };
  for (const piece of PIECES) {
    const out = record(embeddings, answer, 1000, piece);
    assert.equal(out.truncated, true);
    assert.deepEqual(out.usage, usage, `piece ${piece}`);
    assert.equal((out.body as Record<string, unknown>).model, 'text-embedding-3-small', `piece ${piece}`);
  }
});

test('an Anthropic message past the cap: its usage (nested cache_creation too) is read', () => {
  const usage = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 9000, service_tier: 'standard' };
  const answer = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    // A tool input object with its own "usage" member, raw JSON at depth 4: not the message's usage.
    content: [{ type: 'text', text: 'y'.repeat(40_000) }, { type: 'tool_use', id: 'tu', name: 'n', input: { usage: { input_tokens: 1 } } }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage,
  };
  for (const piece of PIECES) {
    const out = record(messages, answer, 200, piece);
    assert.equal(out.truncated, true);
    assert.deepEqual(out.usage, usage, `piece ${piece}`);
    assert.equal((out.body as Record<string, unknown>).model, 'claude-sonnet-4-5-20250929');
  }
});

test('a Responses object past the cap: its top-level usage, not one nested after it', () => {
  const usage = { input_tokens: 30, input_tokens_details: { cached_tokens: 0 }, output_tokens: 700, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 730 };
  const answer = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'gpt-4.1',
    output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'z'.repeat(30_000) }] }],
    usage,
    user: null,
    // Not Responses' own member: a nested "usage" after the top-level one, raw JSON.
    extra: { usage: { input_tokens: 1 } },
    metadata: { note: 'a "usage": {"input_tokens": 1} in a string' },
  };
  const out = record(responses, answer, 100, 999);
  assert.equal(out.truncated, true);
  assert.deepEqual(out.usage, usage);
});

test('an answer under the cap is still handed over whole, unparsed', () => {
  const answer = { id: 'c', object: 'chat.completion', model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
  const out = record(chatCompletions, answer, 1 << 20, 7);
  assert.equal(out.truncated, false);
  assert.equal(out.body, null);
  assert.equal(out.usage, null);
  assert.deepEqual(JSON.parse(out.raw!.toString()), answer);
});

test('a cut answer with no usage, or text that is no JSON, gives no usage and no error', () => {
  const noUsage = record(chatCompletions, { id: 'c', object: 'chat.completion', choices: [{ message: { content: 'q'.repeat(5000) } }] }, 50, 300);
  assert.equal(noUsage.truncated, true);
  assert.equal(noUsage.usage, null);
  const rec = new ResponseRecorder(false, 10, chatCompletions);
  rec.push(Buffer.from('not json at all, "usage": {"prompt_tokens": 3} and more text'));
  const out = rec.finish(200);
  assert.equal(out.truncated, true);
  assert.equal(out.usage, null);
  assert.deepEqual(out.body, { truncated: true, bytes_kept: 10 });
});
