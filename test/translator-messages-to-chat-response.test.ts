/**
 * The `anthropic-messages` → `openai-chat` translator, answer side: recorded chat completions (OpenAI, Groq, DeepSeek,
 * Gemini, Mistral) mapped to Messages `message` objects, and recorded chunk streams mapped to the Messages event
 * sequence, token by token, however the bytes are split, including the provider failing mid-stream.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Transform } from 'node:stream';
import Anthropic from '@anthropic-ai/sdk';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { anthropicMessagesToOpenAIChat, createMessagesStreamTranslator, toMessage } from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { decodeCarried } from '../proxy/translators/anthropic-messages-to-openai-chat/carried-reasoning.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';

const FIXTURES = new URL('./fixtures/providers/', import.meta.url);
const bytes = (path: string): Buffer => readFileSync(new URL(path, FIXTURES));
const json = (path: string): any => JSON.parse(bytes(path).toString('utf8'));
const REQUEST_ID = '00000000-0000-4000-8000-000000000001';

function call(extra: Record<string, unknown> = {}, provider?: string): TranslatorCall {
  const body = { model: 'requested-model', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra };
  return { body: body as unknown as ChatCompletionRequest, stream: true, requestId: REQUEST_ID, removed: [], ...(provider ? { provider } : {}) };
}

describe('chat.completion → Messages message (recorded answers)', () => {
  it('OpenAI text: id, model, one text block, end_turn, usage', () => {
    const c = json('openai/chat-completion.json');
    const { status, body } = anthropicMessagesToOpenAIChat.translateResponse(bytes('openai/chat-completion.json'), call());
    assert.equal(status, 200);
    assert.deepEqual(body, {
      id: `msg_${c.id}`,
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [{ type: 'text', text: 'The capital of France is Paris.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 24, output_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } },
    });
  });

  it('OpenAI tool call: a tool_use block with the parsed input, stop_reason tool_use', () => {
    const m = toMessage(json('openai/chat-completion-tool-call.json'), call());
    assert.deepEqual(m.content, [{ type: 'tool_use', id: 'call_SkEQ3ZGSJC8m6AvaIGNuuKdm', name: 'get_capital', input: { country: 'England' } }]);
    assert.equal(m.stop_reason, 'tool_use');
    assert.deepEqual(m.usage, { input_tokens: 104, output_tokens: 16, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } });
  });

  it('OpenAI o3-mini: reasoning tokens reported as thinking tokens', () => {
    const m = toMessage(json('openai/chat-completion-reasoning.json'), call());
    assert.deepEqual(m.content, [{ type: 'text', text: 'Hello there! How can I help you today?' }]);
    assert.deepEqual(m.usage!.output_tokens_details, { thinking_tokens: 64 });
    assert.equal(m.usage!.output_tokens, 87);
  });

  it('Groq gpt-oss: message.reasoning → a thinking block before the tool_use', () => {
    const c = json('groq/chat-completion-tool-call.json');
    const m = toMessage(c, call());
    assert.deepEqual(m.content, [
      { type: 'thinking', thinking: c.choices[0].message.reasoning, signature: '' },
      { type: 'tool_use', id: 'fc_311ba17b-89f9-48d3-8fd9-7e74a1264855', name: 'get_something_by_name', input: { name: 'test' } },
    ]);
    assert.equal(m.stop_reason, 'tool_use');
    assert.equal(m.usage!.input_tokens, 301);
  });

  it('Groq llama: text', () => {
    const m = toMessage(json('groq/chat-completion.json'), call());
    assert.deepEqual(m.content, [{ type: 'text', text: 'The capital of France is Paris.' }]);
    assert.deepEqual(m.usage, { input_tokens: 48, output_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('DeepSeek reasoner: reasoning_content → thinking, then text; a UUID id gets msg_', () => {
    const c = json('deepseek/chat-completion-reasoner.json');
    const m = toMessage(c, call());
    assert.equal(m.id, 'msg_181d9669-2b3a-445e-bd13-2ebff2c378f6');
    assert.deepEqual(m.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(m.content[0]!.thinking, c.choices[0].message.reasoning_content);
    assert.equal(m.content[1]!.text, c.choices[0].message.content);
    assert.deepEqual(m.usage, { input_tokens: 12, output_tokens: 789, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 415 } });
  });

  it('DeepSeek cache hits (prompt_cache_hit_tokens) are cache reads', () => {
    const m = toMessage({ id: 'x', choices: [{ index: 0, message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64 } }, call());
    assert.deepEqual(m.usage, { input_tokens: 36, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 64 });
  });

  it('Mistral cached tokens: input excludes the cache read', () => {
    const m = toMessage(json('mistral/chat-completion-cached-tokens.json'), call());
    assert.deepEqual(m.usage, { input_tokens: 44, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 224 });
    assert.equal(m.id, 'msg_23271c0215f547dcb5d5e2950f354f9d');
  });

  it('Mistral tool call: empty content gives no text block; the 9-character id is kept', () => {
    const m = toMessage(json('mistral/chat-completion-tool-call.json'), call());
    assert.deepEqual(m.content, [{ type: 'tool_use', id: 'FI5qQGzDE', name: 'get_image', input: {} }]);
    assert.equal(m.stop_reason, 'tool_use');
  });

  it('Mistral text with an emoji', () => {
    const c = json('mistral/chat-completion.json');
    assert.deepEqual(toMessage(c, call()).content, [{ type: 'text', text: c.choices[0].message.content }]);
  });

  it('Gemini: an id without prefix, usage without details', () => {
    const m = toMessage(json('gemini/openai-compat-chat-completion.json'), call());
    assert.equal(m.id, 'msg_yqg4aJm6GvL8ld8PutujkAo');
    assert.equal(m.model, 'gemini-2.0-flash');
    assert.deepEqual(m.usage, { input_tokens: 6, output_tokens: 1628, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('Gemini tool call: an empty id becomes toolu_<request id>_0; the thought signature rides in a thinking block', () => {
    const c = json('gemini/openai-compat-chat-completion-tool-call.json');
    const m = toMessage(c, call());
    assert.deepEqual(m.content[1], { type: 'tool_use', id: 'toolu_00000000000040008000000000000001_0', name: 'get_current_time', input: {} });
    assert.equal(m.content[0]!.type, 'thinking');
    assert.equal(m.content[0]!.thinking, '');
    assert.deepEqual(decodeCarried(m.content[0]!.signature), { google: { message: c.choices[0].message.extra_content.google.thought_signature } });
  });

  it('arguments that are not a JSON object become {} and are recorded', () => {
    const c = call();
    const m = toMessage(
      { id: 'x', choices: [{ index: 0, message: { tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"a":' } }, { id: 'b', function: { name: 'g', arguments: '[1]' } }] }, finish_reason: 'tool_calls' }] },
      c,
    );
    assert.deepEqual(m.content.map((b) => b.input), [{}, {}]);
    assert.deepEqual(c.removed, ['response.choices[0].message.tool_calls[0].function.arguments', 'response.choices[0].message.tool_calls[1].function.arguments']);
  });

  it('stop reasons: length, content_filter, a refusal, a matched stop sequence, tool calls under finish_reason stop', () => {
    const stop = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const m = toMessage({ id: 'x', choices: [{ index: 0, message: { content: 'x' }, ...choice }] }, call(extra));
      return [m.stop_reason, m.stop_sequence];
    };
    assert.deepEqual(stop({ finish_reason: 'length' }), ['max_tokens', null]);
    assert.deepEqual(stop({ finish_reason: 'content_filter' }), ['refusal', null]);
    assert.deepEqual(stop({ finish_reason: 'stop', message: { content: null, refusal: 'I cannot help with that.' } }), ['refusal', null]);
    assert.deepEqual(stop({ finish_reason: 'stop', stop_reason: 'END' }, { stop_sequences: ['END'] }), ['stop_sequence', 'END']);
    assert.deepEqual(stop({ finish_reason: 'stop', matched_stop: 'END' }, { stop_sequences: ['END'] }), ['stop_sequence', 'END']);
    assert.deepEqual(stop({ finish_reason: 'stop', stop_reason: 'END' }), ['end_turn', null]);
    assert.deepEqual(stop({ finish_reason: 'stop', message: { tool_calls: [{ id: 't', function: { name: 'f', arguments: '{}' } }] } }), ['tool_use', null]);
    assert.deepEqual(stop({ finish_reason: 'length', message: { tool_calls: [{ id: 't', function: { name: 'f', arguments: '{"a":' } }] } }), ['max_tokens', null]);
    const refused = toMessage({ id: 'x', choices: [{ index: 0, message: { content: null, refusal: 'No.' }, finish_reason: 'stop' }] }, call());
    assert.deepEqual(refused.content, [{ type: 'text', text: 'No.' }]);
  });

  it('a body that is not a chat completion: 502 in Anthropic\'s shape', () => {
    for (const body of ['not json', '{"object":"list"}', '{"choices":[]}']) {
      const { status, body: out } = anthropicMessagesToOpenAIChat.translateResponse(Buffer.from(body), call({}, 'groq'));
      assert.equal(status, 502);
      assert.deepEqual(out, { type: 'error', error: { type: 'api_error', message: 'groq returned a response that is not a chat completion' } });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

/** A small deterministic PRNG (mulberry32) so random splits are reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Split = 'whole' | 1 | { seed: number };
const SPLITS: Split[] = ['whole', 1, { seed: 1 }, { seed: 42 }];

function split(input: Buffer, how: Split): Buffer[] {
  if (how === 'whole') return [input];
  const pieces: Buffer[] = [];
  const next = how === 1 ? () => 1 : (() => { const r = rng(how.seed); return () => 1 + Math.floor(r() * 40); })();
  for (let i = 0; i < input.length; ) {
    const size = next();
    pieces.push(input.subarray(i, i + size));
    i += size;
  }
  return pieces;
}

async function run(mapper: Transform, pieces: Buffer[]): Promise<string> {
  const out: Buffer[] = [];
  mapper.on('data', (d: Buffer) => out.push(Buffer.from(d)));
  const ended = new Promise<void>((resolve, reject) => {
    mapper.on('end', resolve);
    mapper.on('error', reject);
  });
  for (const piece of pieces) mapper.write(piece);
  mapper.end();
  await ended;
  return Buffer.concat(out).toString('utf8');
}

interface Event {
  type: string;
  [member: string]: any;
}

/** The events of a Messages SSE body, asserting the framing: `event: <type>\ndata: <json>\n\n`, `type` equal to the event name. */
function events(text: string): Event[] {
  assert.ok(text.endsWith('\n\n'), 'the stream ends with a blank line');
  return text.slice(0, -2).split('\n\n').map((raw) => {
    const lines = raw.split('\n');
    assert.equal(lines.length, 2, `two lines per event: ${raw.slice(0, 80)}`);
    assert.ok(lines[0]!.startsWith('event: ') && lines[1]!.startsWith('data: '), raw.slice(0, 80));
    const data = JSON.parse(lines[1]!.slice('data: '.length)) as Event;
    assert.equal(data.type, lines[0]!.slice('event: '.length));
    return data;
  });
}

/**
 * Checks the Messages event grammar (message_start first; blocks started in index order from 0, each delta of its
 * block's kind, each block stopped once; message_delta then message_stop last, or a final error event) and folds the
 * events into the message a client (the Anthropic SDK's accumulator) builds.
 */
function fold(list: Event[]): { message: any; error?: any } {
  assert.equal(list[0]!.type, 'message_start', 'message_start comes first');
  const message = structuredClone(list[0]!.message);
  const json: string[] = [];
  const stopped = new Set<number>();
  let error: any;
  list.slice(1).forEach((e, i) => {
    const last = i === list.length - 2;
    switch (e.type) {
      case 'content_block_start':
        assert.equal(e.index, message.content.length, 'blocks start in index order');
        message.content.push(structuredClone(e.content_block));
        json.push('');
        break;
      case 'content_block_delta': {
        const block = message.content[e.index];
        assert.ok(block, `delta of a started block ${e.index}`);
        const d = e.delta;
        if (d.type === 'text_delta') (assert.equal(block.type, 'text'), (block.text += d.text));
        else if (d.type === 'thinking_delta') (assert.equal(block.type, 'thinking'), (block.thinking += d.thinking));
        else if (d.type === 'signature_delta') (assert.equal(block.type, 'thinking'), (block.signature += d.signature));
        else if (d.type === 'input_json_delta') (assert.equal(block.type, 'tool_use'), (json[e.index] += d.partial_json));
        else assert.fail(`unknown delta ${d.type}`);
        break;
      }
      case 'content_block_stop':
        assert.ok(!stopped.has(e.index), 'a block stops once');
        assert.ok(e.index < message.content.length, 'a stop of a started block');
        stopped.add(e.index);
        break;
      case 'message_delta':
        assert.equal(stopped.size, message.content.length, 'every block is stopped before message_delta');
        message.stop_reason = e.delta.stop_reason;
        message.stop_sequence = e.delta.stop_sequence;
        message.usage = { ...message.usage, ...e.usage };
        assert.equal(list[i + 2]?.type, 'message_stop', 'message_stop follows message_delta');
        break;
      case 'message_stop':
        assert.ok(last, 'message_stop is the last event');
        break;
      case 'error':
        assert.ok(last, 'the error event is the last event');
        error = e.error;
        break;
      default:
        assert.fail(`unexpected event ${e.type}`);
    }
  });
  message.content.forEach((block: any, index: number) => {
    if (block.type === 'tool_use') block.input = json[index] ? JSON.parse(json[index]!) : {};
  });
  return { message, error };
}

/** The chat chunks of a recorded `.sse` (for expectations computed from the fixture itself). */
function chunks(path: string): any[] {
  return bytes(path).toString('utf8').split('\n\n').map((e) => e.trim()).filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
}

function joined(path: string, member: 'content' | 'reasoning' | 'reasoning_content'): string {
  return chunks(path).map((c) => c.choices[0]?.delta?.[member]).filter((t) => typeof t === 'string').join('');
}

describe('chunk stream → Messages stream (recorded streams)', () => {
  const eachSplit = (path: string, extra: Record<string, unknown>, check: (list: Event[]) => void) => {
    for (const how of SPLITS) {
      it(`${path} split ${JSON.stringify(how)}`, async () => {
        const out = await run(createMessagesStreamTranslator(call(extra)), split(bytes(path), how));
        check(events(out));
      });
    }
  };

  describe('OpenAI text', () => {
    const path = 'openai/chat-completion-stream.sse';
    const text = joined(path, 'content');
    eachSplit(path, {}, (list) => {
      assert.deepEqual(list.slice(0, 2), [
        {
          type: 'message_start',
          message: {
            id: 'msg_chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc',
            type: 'message',
            role: 'assistant',
            model: 'gpt-4o-mini-2024-07-18',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ]);
      const deltas = list.filter((e) => e.type === 'content_block_delta');
      assert.deepEqual(deltas.map((e) => e.delta.text), chunks(path).map((c) => c.choices[0]?.delta?.content).filter((t) => t), 'one text_delta per content chunk, token by token');
      assert.deepEqual(list.slice(-3), [
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { input_tokens: 78, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } },
        },
        { type: 'message_stop' },
      ]);
      const { message } = fold(list);
      assert.deepEqual(message.content, [{ type: 'text', text }]);
    });
  });

  describe('OpenAI tool call', () => {
    eachSplit('openai/chat-completion-stream-tool-call.sse', {}, (list) => {
      assert.deepEqual(list.slice(1), [
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', input: {} } },
        ...['{"', 'country', '":"', 'UK', '"}'].map((partial_json) => ({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } })),
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { input_tokens: 53, output_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } },
        },
        { type: 'message_stop' },
      ]);
      assert.deepEqual(fold(list).message.content[0].input, { country: 'UK' });
    });
  });

  describe('Groq reasoning then a whole tool call in one delta', () => {
    const path = 'groq/chat-completion-stream-tool-call.sse';
    const reasoning = joined(path, 'reasoning');
    eachSplit(path, {}, (list) => {
      const { message } = fold(list);
      assert.deepEqual(message.content, [
        { type: 'thinking', thinking: reasoning, signature: '' },
        { type: 'tool_use', id: 'fc_bfb39741-3748-4def-9886-a93fc9c64a90', name: 'get_something_by_name', input: { name: 'example' } },
      ]);
      assert.equal(message.stop_reason, 'tool_use');
      assert.deepEqual(message.usage, { input_tokens: 304, output_tokens: 49, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 23 } });
      const thinkingDeltas = list.filter((e) => e.type === 'content_block_delta' && e.index === 0);
      assert.equal(thinkingDeltas.length, chunks(path).filter((c) => c.choices[0]?.delta?.reasoning).length, 'one thinking_delta per reasoning chunk');
      assert.ok(reasoning.length > 0, 'the fixture has reasoning');
    });
  });

  describe('DeepSeek reasoner: thinking block, then text; usage on the finish chunk', () => {
    const path = 'deepseek/chat-completion-stream-reasoner.sse';
    eachSplit(path, {}, (list) => {
      const { message } = fold(list);
      assert.equal(message.id, 'msg_33be18fc-3842-486c-8c29-dd8e578f7f20');
      assert.deepEqual(message.content, [
        { type: 'thinking', thinking: joined(path, 'reasoning_content'), signature: '' },
        { type: 'text', text: joined(path, 'content') },
      ]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.deepEqual(message.usage, { input_tokens: 6, output_tokens: 212, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 198 } });
      assert.deepEqual(list.filter((e) => e.type === 'content_block_stop').map((e) => e.index), [0, 1]);
    });
  });

  describe('Groq failing mid-stream (event: error)', () => {
    const path = 'groq/chat-completion-stream-error.sse';
    eachSplit(path, {}, (list) => {
      const { message, error } = fold(list);
      assert.deepEqual(error, {
        type: 'invalid_request_error',
        message: "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed]",
      });
      assert.equal(message.content[0].type, 'thinking');
      assert.equal(message.content[0].thinking, joined(path, 'reasoning'));
      assert.ok(!list.some((e) => e.type === 'message_stop' || e.type === 'message_delta'), 'a failed stream has no message_delta or message_stop');
    });
  });
});

describe('chunk stream → Messages stream (edge cases)', () => {
  const sse = (...lines: string[]) => Buffer.from(lines.map((l) => `${l}\n\n`).join(''));
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm1', choices: [{ index: 0, delta, finish_reason: finish, ...extra }] })}`;

  it('a stream cut before any finish reason ends with an api_error event', async () => {
    const full = bytes('openai/chat-completion-stream.sse').toString('utf8');
    const cut = full.slice(0, full.indexOf('"finish_reason":"stop"') - 200);
    for (const how of SPLITS) {
      const list = events(await run(createMessagesStreamTranslator(call({}, 'openai')), split(Buffer.from(cut), how)));
      const { error } = fold(list);
      assert.deepEqual(error, { type: 'api_error', message: 'The openai stream ended before the response was complete' });
    }
  });

  it('a stream that ends after its finish chunk without usage or [DONE] still completes', async () => {
    const list = events(await run(createMessagesStreamTranslator(call()), [sse(chunk({ content: 'hi' }), chunk({}, 'stop'))]));
    const { message, error } = fold(list);
    assert.equal(error, undefined);
    assert.deepEqual(message.content, [{ type: 'text', text: 'hi' }]);
    assert.equal(list.at(-1)!.type, 'message_stop');
  });

  it('OpenAI-style data: {"error"} mid-stream and a malformed event end with an error event; later input is ignored', async () => {
    const err = events(await run(createMessagesStreamTranslator(call()), [sse(chunk({ content: 'a' }), 'data: {"error":{"message":"The server had an error","type":"server_error"}}', chunk({ content: 'b' }), 'data: [DONE]')]));
    assert.deepEqual(fold(err).error, { type: 'api_error', message: 'The server had an error' });
    const bad = events(await run(createMessagesStreamTranslator(call({}, 'groq')), [sse('data: {not json', chunk({ content: 'b' }))]));
    assert.deepEqual(bad, [{ type: 'error', error: { type: 'api_error', message: 'The groq sent a malformed stream event' } }]);
  });

  it('an error before any chunk is the only event; an overloaded status keeps its type', async () => {
    const list = events(await run(createMessagesStreamTranslator(call()), [sse('event: error\ndata: {"error":{"message":"busy","type":"server_error","status_code":503}}')]));
    assert.deepEqual(list, [{ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }]);
  });

  it('a non-JSON error event is redacted before it is cut to 500 characters: a key straddling character 500 leaves no prefix', async () => {
    const key = 'gsk_' + 'K'.repeat(60);
    const text = 'x'.repeat(480) + key + ' tail';
    const redactor = { redactProviderText: (t: string) => t.replaceAll(key, '***') };
    const list = events(await run(createMessagesStreamTranslator({ ...call({}, 'groq'), redactor }), [sse(`event: error\ndata: ${text}`)]));
    const message = (list[0] as unknown as { error: { message: string } }).error.message;
    assert.ok(!message.includes('gsk_K'), message.slice(470));
    assert.equal(message, 'x'.repeat(480) + '*** tail');
  });

  it('keeps multi-byte UTF-8 intact when split inside a character', async () => {
    const input = sse(chunk({ content: 'héllo 😊 ' }), chunk({ reasoning_content: 'ünïcode' }), chunk({}, 'stop'), 'data: [DONE]');
    const { message } = fold(events(await run(createMessagesStreamTranslator(call()), split(input, 1))));
    assert.deepEqual(message.content, [{ type: 'text', text: 'héllo 😊 ' }, { type: 'thinking', thinking: 'ünïcode', signature: '' }]);
  });

  it('parallel tool calls: one block each, in order; arguments before the name wait for it; a missing id is generated', async () => {
    const input = sse(
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"y":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { name: 'g', arguments: '2}' } }] }),
      chunk({}, 'tool_calls'),
      'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":6}}}',
      'data: [DONE]',
    );
    for (const how of SPLITS) {
      const list = events(await run(createMessagesStreamTranslator(call()), split(input, how)));
      const { message } = fold(list);
      assert.deepEqual(message.content, [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_a', name: 'f', input: { x: 1 } },
        { type: 'tool_use', id: 'toolu_00000000000040008000000000000001_1', name: 'g', input: { y: 2 } },
      ]);
      assert.equal(message.stop_reason, 'tool_use');
      assert.deepEqual(message.usage, { input_tokens: 4, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 6 });
    }
  });

  it('Gemini thought signatures on tool calls come last in a thinking block of their own', async () => {
    const input = sse(
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'SIG_A' } } }] }),
      chunk({ tool_calls: [{ index: 1, id: '', type: 'function', function: { name: 'g', arguments: '{}' }, extra_content: { google: { thought_signature: 'SIG_B' } } }] }),
      chunk({}, 'stop'),
      'data: [DONE]',
    );
    const list = events(await run(createMessagesStreamTranslator(call({}, 'gemini')), [input]));
    const { message } = fold(list);
    assert.deepEqual(message.content.map((b: any) => b.type), ['tool_use', 'tool_use', 'thinking']);
    assert.equal(message.stop_reason, 'tool_use', 'tool calls under finish_reason stop are tool_use');
    const secondId = message.content[1].id;
    assert.equal(secondId, 'toolu_00000000000040008000000000000001_1');
    assert.deepEqual(decodeCarried(message.content[2].signature), { google: { tool_calls: { call_1: 'SIG_A', [secondId]: 'SIG_B' } } });
    assert.deepEqual(list.filter((e) => e.type === 'content_block_delta' && e.index === 2).map((e) => e.delta.type), ['signature_delta']);
  });

  it('a refusal delta is text and stop_reason refusal; a matched stop sequence is stop_sequence', async () => {
    const refusal = fold(events(await run(createMessagesStreamTranslator(call()), [sse(chunk({ refusal: 'No.' }), chunk({}, 'stop'), 'data: [DONE]')]))).message;
    assert.deepEqual([refusal.content, refusal.stop_reason], [[{ type: 'text', text: 'No.' }], 'refusal']);
    const stopped = fold(events(await run(createMessagesStreamTranslator(call({ stop_sequences: ['###'] })), [sse(chunk({ content: 'a' }), chunk({}, 'stop', { stop_reason: '###' }), 'data: [DONE]')]))).message;
    assert.deepEqual([stopped.stop_reason, stopped.stop_sequence], ['stop_sequence', '###']);
    const length = fold(events(await run(createMessagesStreamTranslator(call()), [sse(chunk({ content: 'a' }), chunk({}, 'length'), 'data: [DONE]')]))).message;
    assert.equal(length.stop_reason, 'max_tokens');
  });

  it('emits each input piece\'s events as soon as it arrives (no buffering to the end)', async () => {
    const mapper = createMessagesStreamTranslator(call());
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    mapper.write(sse(chunk({ role: 'assistant', content: '' })));
    mapper.write(sse(chunk({ content: 'Hel' })));
    await new Promise((r) => setImmediate(r));
    const sofar = seen.join('');
    assert.match(sofar, /event: message_start/);
    assert.match(sofar, /"text_delta","text":"Hel"/);
    mapper.end(sse(chunk({}, 'stop'), 'data: [DONE]'));
    await new Promise((r) => mapper.on('end', r).resume());
  });
});

/** The Anthropic SDK reading `sse` as the body of a streamed `messages.stream` call: its final message. */
async function sdkFinalMessage(sse: string): Promise<Anthropic.Message> {
  const client = new Anthropic({
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  return client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}

describe('the official Anthropic SDK reads the translated streams', () => {
  for (const path of ['openai/chat-completion-stream.sse', 'openai/chat-completion-stream-tool-call.sse', 'groq/chat-completion-stream-tool-call.sse', 'deepseek/chat-completion-stream-reasoner.sse']) {
    it(`${path}: the SDK's final message equals the folded events`, async () => {
      const out = await run(createMessagesStreamTranslator(call()), split(bytes(path), { seed: 7 }));
      const final = await sdkFinalMessage(out);
      const { message } = fold(events(out));
      assert.deepEqual(final.content, message.content);
      assert.equal(final.stop_reason, message.stop_reason);
      assert.equal(final.id, message.id);
      assert.equal(final.usage.input_tokens, message.usage.input_tokens, 'input tokens from message_delta');
      assert.equal(final.usage.output_tokens, message.usage.output_tokens);
    });
  }

  it('the SDK raises the Groq mid-stream error as an API error', async () => {
    const out = await run(createMessagesStreamTranslator(call()), [bytes('groq/chat-completion-stream-error.sse')]);
    const err = await sdkFinalMessage(out).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, `an APIError, got ${String(err)}`);
    assert.match((err as Error).message, /Tool call validation failed/);
  });

  it('the SDK reads a translated non-streamed message', async () => {
    const mapped = anthropicMessagesToOpenAIChat.translateResponse(bytes('groq/chat-completion-tool-call.json'), call());
    const client = new Anthropic({ apiKey: 'sk-ant-test', maxRetries: 0, fetch: async () => Response.json(mapped.body) });
    const message = await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(message, mapped.body);
  });
});
