/**
 * Unit tests of the native providers (Anthropic, Bedrock, Azure) against recorded provider bytes in
 * test/fixtures/providers/ (see its README.md): the translators' request, response and stream mapping
 * (proxy/translators/), the transports' error mapping, SigV4 signing and Azure addressing (proxy/providers/).
 */
import { strict as assert } from 'node:assert';
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Transform } from 'node:stream';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../shared/chat.ts';
import type { ProviderConfig } from '../shared/config.ts';
import type { ProviderName } from '../shared/providers.ts';
import { GatewayError } from '../proxy/errors.ts';
import { createAnthropicStreamMapper, fromAnthropicMessage, toAnthropicRequest } from '../proxy/translators/openai-chat-to-anthropic-messages.ts';
import { createBedrockStreamMapper, fromConverseResponse, toConverseRequest } from '../proxy/translators/openai-chat-to-bedrock-converse.ts';
import { fromBedrockEmbeddings, toBedrockEmbeddingsRequest } from '../proxy/translators/openai-embeddings-to-bedrock-embeddings.ts';
import type { AnthropicMessage } from '../proxy/translators/wire/anthropic-messages.ts';
import type { ConverseResponse } from '../proxy/translators/wire/bedrock.ts';
import { awsCredentialsFromEnv } from '../proxy/providers/aws-sigv4.ts';
import { AZURE_DEFAULT_API_VERSION } from '../proxy/providers/azure.ts';
import { createBedrockTransport, type BedrockTransportOptions } from '../proxy/providers/bedrock.ts';
import { bindEndpoints } from '../proxy/providers/binding.ts';
import { BINDINGS } from '../proxy/providers/index.ts';
import type { ProviderCall } from '../proxy/providers/types.ts';

// The providers as the gateway holds them: each transport bound to its translator per endpoint kind it serves
// (proxy/providers/binding.ts), keyed by endpoint kind.
const anthropic = BINDINGS.anthropic!;
const bedrock = BINDINGS.bedrock!;
const azure = BINDINGS.azure!;
const createBedrockBindings = (options: BedrockTransportOptions) => bindEndpoints(createBedrockTransport(options));
// Error mapping as the gateway renders it for an OpenAI client: the transport's neutral error in OpenAI's shape.
const mapAnthropicError = (status: number, body: Buffer) => anthropic.chat!.mapError(status, body);
const mapBedrockError = (status: number, body: Buffer, headers?: Record<string, string>) => bedrock.chat!.mapError(status, body, headers);
const mapAzureError = (status: number, body: Buffer) => azure.chat!.mapError(status, body);

const FIXTURES = new URL('./fixtures/providers/', import.meta.url);
const fixture = (path: string): Buffer => readFileSync(new URL(path, FIXTURES));
const fixtureJson = <T = any>(path: string): T => JSON.parse(fixture(path).toString('utf8')) as T;

function providerConfig(name: ProviderName, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return { name, baseUrl: '', apiKey: null, apiVersion: null, deployments: {}, region: null, models: [], anthropicBetas: null, ...overrides };
}

function makeCall(name: ProviderName, body: Partial<ChatCompletionRequest> & Record<string, unknown>, config: Partial<ProviderConfig> = {}): ProviderCall {
  const full = { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatCompletionRequest;
  return { config: providerConfig(name, config), body: full, stream: full.stream === true, requestId: '00000000-0000-4000-8000-000000000001' };
}

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

/** Splits bytes into pieces: `1` = one byte at a time, a seed = random sizes 1..40, `whole` = one piece. */
function split(bytes: Buffer, how: 'whole' | 1 | { seed: number }): Buffer[] {
  if (how === 'whole') return [bytes];
  const pieces: Buffer[] = [];
  const next = how === 1 ? () => 1 : (() => { const r = rng(how.seed); return () => 1 + Math.floor(r() * 40); })();
  for (let i = 0; i < bytes.length; ) {
    const size = next();
    pieces.push(bytes.subarray(i, i + size));
    i += size;
  }
  return pieces;
}

/** Feeds pieces through a fresh mapper and returns everything it wrote. */
async function runMapper(mapper: Transform, pieces: Buffer[]): Promise<string> {
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

/** The `data:` payloads of an OpenAI SSE body, asserting the framing (`data: ...\n\n` only). */
function sseEvents(text: string): string[] {
  assert.ok(text.endsWith('\n\n'), 'stream ends with a blank line');
  const events = text.slice(0, -2).split('\n\n');
  return events.map((event) => {
    assert.ok(event.startsWith('data: '), `event is a data line: ${event.slice(0, 60)}`);
    assert.ok(!event.includes('\n'), 'one line per event');
    return event.slice('data: '.length);
  });
}

interface Summary {
  chunks: ChatCompletionChunk[];
  text: string;
  reasoning: string;
  tools: Array<{ id?: string; name?: string; arguments: string }>;
  finish: string[];
  usage: ChatCompletionChunk['usage'][];
  done: boolean;
  error?: any;
}

/** Parses a mapped stream and collects what a client would assemble. */
function summarize(text: string): Summary {
  const events = sseEvents(text);
  const s: Summary = { chunks: [], text: '', reasoning: '', tools: [], finish: [], usage: [], done: false };
  events.forEach((data, i) => {
    const last = i === events.length - 1;
    if (data === '[DONE]') {
      assert.ok(last, '[DONE] is the last event');
      s.done = true;
      return;
    }
    const value = JSON.parse(data);
    if (value.error) {
      assert.ok(last, 'the error event is the last event');
      s.error = value.error;
      return;
    }
    const chunk = value as ChatCompletionChunk;
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(typeof chunk.id, 'string');
    assert.equal(typeof chunk.created, 'number');
    s.chunks.push(chunk);
    if (chunk.usage) s.usage.push(chunk.usage);
    for (const choice of chunk.choices) {
      assert.equal(choice.index, 0);
      if (typeof choice.delta.content === 'string') s.text += choice.delta.content;
      if (typeof choice.delta.reasoning_content === 'string') s.reasoning += choice.delta.reasoning_content;
      for (const call of choice.delta.tool_calls ?? []) {
        const tool = (s.tools[call.index] ??= { arguments: '' });
        if (call.id) tool.id = call.id;
        if (call.function?.name) tool.name = call.function.name;
        tool.arguments += call.function?.arguments ?? '';
      }
      if (choice.finish_reason) s.finish.push(choice.finish_reason);
    }
  });
  return s;
}

const SPLITS: Array<'whole' | 1 | { seed: number }> = ['whole', 1, ...Array.from({ length: 12 }, (_, i) => ({ seed: i + 1 }))];
const label = (how: 'whole' | 1 | { seed: number }) => (how === 'whole' ? 'whole' : how === 1 ? '1 byte' : `seed ${how.seed}`);

function assertGatewayError(fn: () => unknown, status: number, code?: string, param?: string): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.status, status);
    if (code !== undefined) assert.equal(err.code, code);
    if (param !== undefined) assert.equal(err.param, param);
    return err;
  }
  assert.fail('expected a GatewayError');
}

async function assertRejectsGateway(promise: Promise<unknown>, status: number, code: string): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    return err;
  }
  assert.fail('expected a GatewayError');
}

const PNG_DATA_URL = 'data:image/png;base64,iVBORw0KGgo=';

// =============================================================================================
// Anthropic
// =============================================================================================

describe('anthropic: request mapping', () => {
  it('lifts system/developer messages, merges same-role turns, defaults max_tokens, maps stop/temperature/top_p', () => {
    const req = toAnthropicRequest(
      {
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Hello' },
          { role: 'user', content: [{ type: 'text', text: 'Again' }] },
          { role: 'assistant', content: 'Bonjour' },
          { role: 'user', content: 'Bye' },
        ],
        stop: 'END',
        temperature: 0.3,
        top_p: 0.9,
        user: 'u-1',
      },
      false,
    );
    assert.equal(req.system, 'You are terse.\n\nAnswer in French.');
    assert.equal(req.max_tokens, 4096);
    assert.deepEqual(req.stop_sequences, ['END']);
    assert.equal(req.temperature, 0.3);
    assert.equal(req.top_p, 0.9);
    assert.deepEqual(req.metadata, { user_id: 'u-1' });
    assert.equal(req.stream, undefined);
    assert.deepEqual(req.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: 'Again' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
      { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
    ]);
  });

  it('takes max_completion_tokens over max_tokens, stop arrays, and sets stream', () => {
    const req = toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 10, max_completion_tokens: 20, stop: ['a', 'b'] }, true);
    assert.equal(req.max_tokens, 20);
    assert.deepEqual(req.stop_sequences, ['a', 'b']);
    assert.equal(req.stream, true);
    assert.equal(toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 7 }, false).max_tokens, 7);
  });

  it('maps images: data URLs to base64 sources, http(s) URLs to url sources', () => {
    const req = toAnthropicRequest(
      {
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: PNG_DATA_URL } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            ],
          },
        ],
      },
      false,
    );
    assert.deepEqual(req.messages[0]!.content, [
      { type: 'text', text: 'What is this?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
    assertGatewayError(
      () => toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }, false),
      400,
      undefined,
      'messages[0].content[0].image_url.url',
    );
    assertGatewayError(
      () => toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] }, false),
      400,
    );
  });

  it('maps tools, tool_choice, assistant tool_calls and tool results', () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'noop' } },
    ];
    const req = toAnthropicRequest(
      {
        model: 'm',
        tools,
        tool_choice: 'required',
        messages: [
          { role: 'user', content: 'Weather in Paris and London?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"London"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
          { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '12C' }] },
          { role: 'user', content: 'Thanks' },
        ],
      },
      false,
    );
    assert.deepEqual(req.tools, [
      { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ]);
    assert.deepEqual(req.tool_choice, { type: 'any' });
    assert.deepEqual(req.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and London?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'London' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '12C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);

    const choice = (tool_choice: unknown, extra: Record<string, unknown> = {}) =>
      toAnthropicRequest({ model: 'm', tools, tool_choice, messages: [{ role: 'user', content: 'x' }], ...extra }, false).tool_choice;
    assert.deepEqual(choice('auto'), { type: 'auto' });
    assert.deepEqual(choice('none'), { type: 'none' });
    assert.deepEqual(choice({ type: 'function', function: { name: 'noop' } }), { type: 'tool', name: 'noop' });
    assert.equal(choice(undefined), undefined);
    assert.deepEqual(choice(undefined, { parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
    assertGatewayError(() => choice('sometimes'), 400, undefined, 'tool_choice');
  });

  it('rejects invalid tool-call arguments JSON, unknown roles and n > 1 with 400', () => {
    assertGatewayError(
      () =>
        toAnthropicRequest(
          { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] },
          false,
        ),
      400,
      undefined,
      'messages[0].tool_calls[0].function.arguments',
    );
    assertGatewayError(() => toAnthropicRequest({ model: 'm', messages: [{ role: 'narrator', content: 'x' }] }, false), 400, undefined, 'messages[0].role');
    assertGatewayError(() => toAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], n: 2 }, false), 400, 'unsupported_parameter', 'n');
  });

  it('buildRequest: POST {baseUrl}/messages with x-api-key and anthropic-version; missing key is 503 provider_key_missing', async () => {
    const call = makeCall('anthropic', { model: 'claude-sonnet-4-5', stream: true }, { baseUrl: 'https://api.anthropic.com/v1', apiKey: 'sk-ant-test-key-123456' });
    const req = await anthropic.chat!.buildRequest(call);
    assert.equal(req.url.href, 'https://api.anthropic.com/v1/messages');
    assert.equal(req.method, 'POST');
    assert.equal(req.headers['x-api-key'], 'sk-ant-test-key-123456');
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers.authorization, undefined);
    const body = JSON.parse(req.body.toString('utf8'));
    assert.equal(body.model, 'claude-sonnet-4-5');
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 4096);
    assert.deepEqual(Object.keys(anthropic), ['chat', 'messages', 'count_tokens', 'responses']);
    assert.equal(anthropic.chat!.passthrough, false);

    const err = await assertRejectsGateway(
      Promise.resolve().then(() => anthropic.chat!.buildRequest(makeCall('anthropic', {}, { baseUrl: 'https://api.anthropic.com/v1' }))),
      503,
      'provider_key_missing',
    );
    assert.match(err.message, /ANTHROPIC_API_KEY/);
  });
});

describe('anthropic: response mapping', () => {
  it('message.json → chat.completion with cache tokens in usage', () => {
    const completion = fromAnthropicMessage(fixtureJson<AnthropicMessage>('anthropic/message.json'));
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.id, 'msg_01KPaKTJSqAKoZri7Ujrny58');
    assert.equal(completion.model, 'claude-sonnet-4-5-20250929');
    assert.equal(completion.choices.length, 1);
    assert.equal(completion.choices[0]!.message.role, 'assistant');
    assert.match(completion.choices[0]!.message.content as string, /^Python is a beginner-friendly/);
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(completion.choices[0]!.message.tool_calls, undefined);
    assert.deepEqual(completion.usage, {
      prompt_tokens: 3 + 1111 + 418,
      completion_tokens: 33,
      total_tokens: 3 + 1111 + 418 + 33,
      prompt_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418 },
    });
  });

  it('message-tool-use.json → four parallel tool_calls with JSON-string arguments', () => {
    const mapped = anthropic.chat!.mapResponse(fixture('anthropic/message-tool-use.json'), makeCall('anthropic', {}));
    assert.equal(mapped.status, 200);
    const completion = mapped.body as ChatCompletion;
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.match(choice.message.content as string, /^I'll help you find out who is the youngest/);
    assert.deepEqual(
      choice.message.tool_calls!.map((c) => [c.id, c.type, c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['toolu_0167cfEnoQaPviGdVXA95zcu', 'function', 'retrieve_entity_info', { name: 'Alice' }],
        ['toolu_01EEe2V5HD1Ac4rKiUR4HD2T', 'function', 'retrieve_entity_info', { name: 'Bob' }],
        ['toolu_01XFyAjstT3966qvRynZyVPo', 'function', 'retrieve_entity_info', { name: 'Charlie' }],
        ['toolu_013mnQZbgtK2oe3Mo3XKJsx3', 'function', 'retrieve_entity_info', { name: 'Daisy' }],
      ],
    );
    for (const call of choice.message.tool_calls!) assert.equal(typeof call.function.arguments, 'string');
    assert.equal(completion.usage!.prompt_tokens, 423);
    assert.equal(completion.usage!.completion_tokens, 202);
  });

  it('maps stop reasons: max_tokens → length, stop_sequence → stop', () => {
    const base = fixtureJson<AnthropicMessage>('anthropic/message.json');
    assert.equal(fromAnthropicMessage({ ...base, stop_reason: 'max_tokens' }).choices[0]!.finish_reason, 'length');
    assert.equal(fromAnthropicMessage({ ...base, stop_reason: 'stop_sequence' }).choices[0]!.finish_reason, 'stop');
  });
});

describe('anthropic: stream mapping', () => {
  const cases = [
    {
      file: 'anthropic/message-stream.sse',
      id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
      text: 'Hello there!',
      tools: [] as Summary['tools'],
      finish: 'stop',
      usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    },
    {
      file: 'anthropic/message-stream-recorded.sse',
      id: 'msg_018E1hg8GoVTGEKQY3ovMcSJ',
      text: '2',
      tools: [],
      finish: 'stop',
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    },
    {
      file: 'anthropic/message-stream-tool-use.sse',
      id: 'msg_019Q1hrJbZG26Fb9BQhrkHEr',
      text: "I'll check the current weather in Paris for you.",
      tools: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' }],
      finish: 'tool_calls',
      usage: { prompt_tokens: 377, completion_tokens: 65, total_tokens: 442, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
    },
  ];

  for (const c of cases) {
    it(`${c.file}: same chunks however the bytes are split`, async () => {
      const bytes = fixture(c.file);
      let reference: string | undefined;
      for (const how of SPLITS) {
        const out = await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true, stream_options: { include_usage: true } })), split(bytes, how));
        const s = summarize(out);
        assert.equal(s.error, undefined, label(how));
        assert.ok(s.done, `${label(how)}: ends with [DONE]`);
        const first = s.chunks[0]!;
        assert.deepEqual(first.choices[0]!.delta, { role: 'assistant', content: '' }, 'first a role chunk');
        assert.equal(first.id, c.id);
        assert.equal(s.text, c.text, label(how));
        assert.deepEqual(s.tools, c.tools, label(how));
        assert.deepEqual(s.finish, [c.finish], label(how));
        assert.deepEqual(s.usage, [c.usage], label(how));
        const usageChunk = s.chunks[s.chunks.length - 1]!;
        assert.deepEqual(usageChunk.choices, [], 'the usage chunk has no choices');
        for (const chunk of s.chunks.slice(0, -1)) assert.equal(chunk.usage, null, 'every other chunk has usage null (include_usage)');
        const normalized = out.replace(/"created":\d+/g, '"created":0');
        reference ??= normalized;
        assert.equal(normalized, reference, `${label(how)}: identical output`);
      }
    });
  }

  it('without stream_options.include_usage: no usage chunk and no usage member; the usage is withheld on the call', async () => {
    const c = cases[0]!;
    const call = makeCall('anthropic', { stream: true });
    const s = summarize(await runMapper(createAnthropicStreamMapper(call), [fixture(c.file)]));
    assert.ok(s.done);
    assert.equal(s.text, c.text);
    for (const chunk of s.chunks) {
      assert.equal(chunk.choices.length, 1);
      assert.equal('usage' in chunk, false);
    }
    assert.deepEqual(call.withheldUsage, c.usage);
  });

  it('tool-call chunks: start carries index, id, type and name; argument deltas carry only index and arguments', async () => {
    const out = await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true })), [fixture('anthropic/message-stream-tool-use.sse')]);
    const deltas = summarize(out).chunks.flatMap((ch) => ch.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    assert.deepEqual(deltas[0], { index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
    for (const d of deltas.slice(1)) assert.deepEqual(Object.keys(d).sort(), ['function', 'index']);
  });

  it('error-stream-event.sse → a final error event and no [DONE]', async () => {
    for (const how of SPLITS.slice(0, 4)) {
      const out = await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true })), split(fixture('anthropic/error-stream-event.sse'), how));
      const s = summarize(out);
      assert.equal(s.done, false);
      assert.deepEqual(s.error, { message: 'Overloaded', type: 'server_error', param: null, code: 'overloaded_error' });
      assert.ok(!out.includes('[DONE]'));
    }
  });

  it('an error event mid-stream ends the stream after the content so far; later events are dropped', async () => {
    const stream = fixture('anthropic/message-stream.sse').toString('utf8');
    const cut = stream.indexOf('event: content_block_stop');
    const bytes = Buffer.from(stream.slice(0, cut) + fixture('anthropic/error-stream-event.sse').toString('utf8') + stream.slice(cut));
    const s = summarize(await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true })), split(bytes, { seed: 99 })));
    assert.equal(s.text, 'Hello there!');
    assert.equal(s.error.code, 'overloaded_error');
    assert.equal(s.done, false);
    assert.deepEqual(s.finish, []);
  });

  it('a stream that ends before message_stop ends with an error event', async () => {
    const stream = fixture('anthropic/message-stream.sse').toString('utf8');
    const bytes = Buffer.from(stream.slice(0, stream.indexOf('event: message_delta')));
    const s = summarize(await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true })), [bytes]));
    assert.equal(s.text, 'Hello there!');
    assert.equal(s.error.code, 'upstream_stream_truncated');
    assert.equal(s.done, false);
  });

  it('emits chunks as soon as their input arrives', async () => {
    const mapper = createAnthropicStreamMapper(makeCall('anthropic', { stream: true }));
    const got: string[] = [];
    mapper.on('data', (d: Buffer) => got.push(d.toString('utf8')));
    const stream = fixture('anthropic/message-stream.sse').toString('utf8');
    const firstDelta = stream.indexOf('event: content_block_delta');
    mapper.write(Buffer.from(stream.slice(0, stream.indexOf('\n\n', firstDelta) + 2)));
    await new Promise((resolve) => setImmediate(resolve));
    const s = got.join('');
    assert.match(s, /"role":"assistant"/);
    assert.match(s, /"content":"Hello"/);
    mapper.destroy();
  });

  it('keeps multi-byte UTF-8 intact when split inside a character', async () => {
    const text = 'héllo wörld 🌍 日本';
    const sse =
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_u","model":"claude","usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n` +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const s = summarize(await runMapper(createAnthropicStreamMapper(makeCall('anthropic', { stream: true })), split(Buffer.from(sse), 1)));
    assert.equal(s.text, text);
    assert.deepEqual(s.finish, ['length']);
    assert.ok(s.done);
  });
});

describe('anthropic: error mapping', () => {
  it('error-overloaded.json (529) → server_error, code overloaded_error', () => {
    assert.deepEqual(mapAnthropicError(529, fixture('anthropic/error-overloaded.json')), {
      error: { message: 'Overloaded', type: 'server_error', param: null, code: 'overloaded_error' },
    });
  });

  it('error-429-rate-limit.json → rate_limit_exceeded, code rate_limit_error', () => {
    assert.deepEqual(mapAnthropicError(429, fixture('anthropic/error-429-rate-limit.json')), {
      error: {
        message: "This request would exceed your account's rate limit. Please try again later.",
        type: 'rate_limit_exceeded',
        param: null,
        code: 'rate_limit_error',
      },
    });
  });

  it('400 bodies → invalid_request_error; non-JSON bodies keep their text; keys are redacted', () => {
    const tooLong = mapAnthropicError(400, fixture('anthropic/error-400-prompt-too-long.json'));
    assert.equal(tooLong.error.type, 'invalid_request_error');
    assert.equal(tooLong.error.code, 'invalid_request_error');
    assert.match(tooLong.error.message, /prompt is too long/);
    assert.equal(mapAnthropicError(400, fixture('anthropic/error-400-invalid-request.json')).error.type, 'invalid_request_error');
    assert.deepEqual(mapAnthropicError(502, Buffer.from('<html>Bad gateway</html>')).error, {
      message: '<html>Bad gateway</html>',
      type: 'server_error',
      param: null,
      code: null,
    });
    const leaked = mapAnthropicError(401, Buffer.from('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-api03-SECRETSECRET"}}'));
    assert.equal(leaked.error.type, 'authentication_error');
    assert.ok(!leaked.error.message.includes('SECRETSECRET'));
  });
});

// =============================================================================================
// Bedrock
// =============================================================================================

const TEST_ENV = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'test-secret-key', AWS_REGION: 'us-east-1' };
const FIXED_DATE = new Date('2024-01-02T03:04:05Z');

describe('bedrock: request mapping', () => {
  it('maps system, messages, images, inference config', () => {
    const req = toConverseRequest({
      model: 'us.amazon.nova-micro-v1:0',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: PNG_DATA_URL } }] },
        { role: 'user', content: 'Quickly.' },
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: 'Sure?' },
      ],
      max_tokens: 100,
      temperature: 0.5,
      top_p: 0.8,
      stop: ['###'],
    });
    assert.deepEqual(req.system, [{ text: 'Be brief.' }]);
    assert.deepEqual(req.inferenceConfig, { maxTokens: 100, temperature: 0.5, topP: 0.8, stopSequences: ['###'] });
    assert.deepEqual(req.messages, [
      {
        role: 'user',
        content: [{ text: 'What is in this picture?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }, { text: 'Quickly.' }],
      },
      { role: 'assistant', content: [{ text: 'A cat.' }] },
      { role: 'user', content: [{ text: 'Sure?' }] },
    ]);
    assert.equal(toConverseRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).inferenceConfig, undefined);
    assertGatewayError(
      () => toConverseRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }),
      400,
      undefined,
      'messages[0].content[0].image_url.url',
    );
  });

  it('maps tools, tool_choice, toolUse and toolResult blocks', () => {
    const tools = [{ type: 'function', function: { name: 'temperature', description: 'Temperature', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const req = toConverseRequest({
      model: 'm',
      tools,
      tool_choice: { type: 'function', function: { name: 'temperature' } },
      messages: [
        { role: 'user', content: 'Temperature in London?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'temperature', arguments: '{"city":"London"}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_1', content: '11C' },
      ],
    });
    assert.deepEqual(req.toolConfig, {
      tools: [{ toolSpec: { name: 'temperature', description: 'Temperature', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }],
      toolChoice: { tool: { name: 'temperature' } },
    });
    assert.deepEqual(req.messages, [
      { role: 'user', content: [{ text: 'Temperature in London?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'temperature', input: { city: 'London' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '11C' }] } }] },
    ]);
    const choice = (tool_choice: unknown) => toConverseRequest({ model: 'm', tools, tool_choice, messages: [{ role: 'user', content: 'x' }] }).toolConfig;
    assert.deepEqual(choice('auto')?.toolChoice, { auto: {} });
    assert.deepEqual(choice('required')?.toolChoice, { any: {} });
    assert.equal(choice(undefined)?.toolChoice, undefined);
    assert.equal(choice('none'), undefined);
  });

  it('awsCredentialsFromEnv reads key id, secret and session token', () => {
    assert.equal(awsCredentialsFromEnv({}), null);
    assert.equal(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKID' }), null);
    assert.deepEqual(awsCredentialsFromEnv(TEST_ENV), { accessKeyId: 'AKID', secretAccessKey: 'test-secret-key' });
    assert.deepEqual(awsCredentialsFromEnv({ ...TEST_ENV, AWS_SESSION_TOKEN: 'tok' }), { accessKeyId: 'AKID', secretAccessKey: 'test-secret-key', sessionToken: 'tok' });
  });
});

/** An independent SigV4 computation (AWS docs, "Create a signed AWS API request") to cross-check the signer. */
function expectedSignature(method: string, url: URL, headers: Record<string, string>, signedHeaders: string[], body: Buffer, secret: string, region: string, service: string): string {
  const amzDate = headers['x-amz-date']!;
  const date = amzDate.slice(0, 8);
  const canonicalPath = url.pathname
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
  const canonicalHeaders = signedHeaders.map((h) => `${h}:${headers[h]!.trim()}\n`).join('');
  const payloadHash = createHash('sha256').update(body).digest('hex');
  const canonicalRequest = [method, canonicalPath, '', canonicalHeaders, signedHeaders.join(';'), payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  return createHmac('sha256', signingKey).update(stringToSign).digest('hex');
}

describe('bedrock: buildRequest and SigV4', () => {
  it('the independent SigV4 check reproduces the AWS test-suite vectors (get-vanilla, post-vanilla)', () => {
    const headers = { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' };
    const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    const url = new URL('https://example.amazonaws.com/');
    const sig = (method: string) => expectedSignature(method, url, headers, ['host', 'x-amz-date'], Buffer.alloc(0), secret, 'us-east-1', 'service');
    assert.equal(sig('GET'), '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
    assert.equal(sig('POST'), '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b');
  });

  it('signs POST /model/{id}/converse on the regional host', async () => {
    const bindings = createBedrockBindings({ env: TEST_ENV, now: () => FIXED_DATE });
    const call = makeCall('bedrock', { model: 'us.amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'Hello' }] });
    const req = await bindings.chat!.buildRequest(call);
    assert.equal(req.url.href, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse');
    assert.equal(req.method, 'POST');
    const h = req.headers;
    assert.equal(h.host, 'bedrock-runtime.us-east-1.amazonaws.com');
    assert.equal(h['x-amz-date'], '20240102T030405Z');
    assert.equal(h['x-amz-content-sha256'], createHash('sha256').update(req.body).digest('hex'));
    assert.equal(h['x-amz-security-token'], undefined);
    const auth = h.authorization!;
    assert.ok(auth.startsWith('AWS4-HMAC-SHA256 Credential=AKID/20240102/us-east-1/bedrock/aws4_request, '), auth);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
    for (const name of ['host', 'x-amz-content-sha256', 'x-amz-date']) assert.ok(signedHeaders.includes(name), `${name} is signed`);
    const signature = /Signature=([0-9a-f]{64})$/.exec(auth)![1];
    assert.equal(signature, expectedSignature('POST', req.url, h, signedHeaders, req.body, 'test-secret-key', 'us-east-1', 'bedrock'));
    assert.ok(!JSON.stringify(req).includes('test-secret-key'), 'the secret is never sent');
    assert.deepEqual(JSON.parse(req.body.toString('utf8')), { messages: [{ role: 'user', content: [{ text: 'Hello' }] }] });
  });

  it('streams use /converse-stream; a session token is signed; base-url and region config override', async () => {
    const bindings = createBedrockBindings({ env: { ...TEST_ENV, AWS_SESSION_TOKEN: 'session-tok' }, now: () => FIXED_DATE });
    const call = makeCall('bedrock', { model: 'anthropic.claude-3-haiku', stream: true }, { baseUrl: 'http://127.0.0.1:4010/', region: 'eu-west-3' });
    const req = await bindings.chat!.buildRequest(call);
    assert.equal(req.url.href, 'http://127.0.0.1:4010/model/anthropic.claude-3-haiku/converse-stream');
    assert.equal(req.headers.host, '127.0.0.1:4010');
    assert.equal(req.headers.accept, 'application/vnd.amazon.eventstream');
    assert.equal(req.headers['x-amz-security-token'], 'session-tok');
    assert.ok(req.headers.authorization!.startsWith('AWS4-HMAC-SHA256 Credential=AKID/20240102/eu-west-3/bedrock/aws4_request'));
    assert.match(req.headers.authorization!, /SignedHeaders=[^,]*x-amz-security-token/);
  });

  it('missing region → 400 provider_not_configured; missing credentials → 503 provider_key_missing', async () => {
    const call = makeCall('bedrock', {});
    await assertRejectsGateway(Promise.resolve(createBedrockBindings({ env: { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' } }).chat!.buildRequest(call)), 400, 'provider_not_configured');
    const noKey = await assertRejectsGateway(Promise.resolve(createBedrockBindings({ env: { AWS_REGION: 'us-east-1' } }).chat!.buildRequest(call)), 503, 'provider_key_missing');
    assert.match(noKey.message, /AWS_ACCESS_KEY_ID/);
    assert.equal(bedrock.chat!.transport.name, 'bedrock');
    assert.deepEqual(Object.keys(bedrock), ['chat', 'embeddings', 'messages', 'responses']);
  });

  it('embeddings: Titan InvokeModel request and response (float and base64)', async () => {
    const bindings = createBedrockBindings({ env: TEST_ENV, now: () => FIXED_DATE });
    const call: ProviderCall = { ...makeCall('bedrock', {}), body: { model: 'amazon.titan-embed-text-v2:0', input: 'hello', encoding_format: 'base64' } as never };
    const req = await bindings.embeddings!.buildRequest(call);
    assert.equal(req.url.pathname, '/model/amazon.titan-embed-text-v2%3A0/invoke');
    assert.deepEqual(JSON.parse(req.body.toString('utf8')), { inputText: 'hello' });
    const mapped = bindings.embeddings!.mapResponse(Buffer.from(JSON.stringify({ embedding: [0.5, -1, 2], inputTextTokenCount: 2 })), call);
    const list = mapped.body as any;
    assert.equal(list.object, 'list');
    assert.equal(list.model, 'amazon.titan-embed-text-v2:0');
    assert.deepEqual(list.usage, { prompt_tokens: 2, total_tokens: 2 });
    const decoded = Buffer.from(list.data[0].embedding, 'base64');
    assert.deepEqual([decoded.readFloatLE(0), decoded.readFloatLE(4), decoded.readFloatLE(8)], [0.5, -1, 2]);
    assert.deepEqual((fromBedrockEmbeddings({ embedding: [1, 2] }, { model: 'x', input: 'a' }) as any).data[0].embedding, [1, 2]);
    assert.deepEqual(toBedrockEmbeddingsRequest({ model: 'cohere.embed-english-v3', input: ['a', 'b'] }), { texts: ['a', 'b'], input_type: 'search_document' });
    assertGatewayError(() => toBedrockEmbeddingsRequest({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] }), 400);
  });
});

describe('bedrock: response mapping', () => {
  it('converse.json → chat.completion', () => {
    const completion = fromConverseResponse(fixtureJson<ConverseResponse>('bedrock/converse.json'), 'chatcmpl-x', 'us.amazon.nova-micro-v1:0');
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.id, 'chatcmpl-x');
    assert.equal(completion.model, 'us.amazon.nova-micro-v1:0');
    assert.match(completion.choices[0]!.message.content as string, /^Hello! How can I assist you today\?/);
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(completion.usage, { prompt_tokens: 7, completion_tokens: 30, total_tokens: 37, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
  });

  it('converse-tool-use.json → tool_calls', () => {
    const call = makeCall('bedrock', { model: 'us.amazon.nova-micro-v1:0' });
    const mapped = bedrock.chat!.mapResponse(fixture('bedrock/converse-tool-use.json'), call);
    assert.equal(mapped.status, 200);
    const choice = (mapped.body as ChatCompletion).choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.deepEqual(choice.message.tool_calls, [
      { id: 'tooluse_Mj06ft-ITJik1Otgpkc1uA', type: 'function', function: { name: 'temperature', arguments: '{"city":"London","date":"2022-01-01"}' } },
    ]);
    assert.equal((mapped.body as ChatCompletion).id, `chatcmpl-${call.requestId}`);
  });

  it('converse-cache-tokens.json → cache tokens in usage', () => {
    const completion = fromConverseResponse(fixtureJson<ConverseResponse>('bedrock/converse-cache-tokens.json'), 'id', 'm');
    assert.equal(completion.choices[0]!.message.content, '5');
    assert.deepEqual(completion.usage, {
      prompt_tokens: 13 + 1504,
      completion_tokens: 5,
      total_tokens: 1522,
      prompt_tokens_details: { cached_tokens: 1504, cache_write_tokens: 0 },
    });
  });
});

describe('bedrock: stream mapping', () => {
  function expected(jsonlFile: string) {
    const lines = fixture(jsonlFile).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
    let text = '';
    const tools: Summary['tools'] = [];
    let stopReason = '';
    let usage: any;
    for (const line of lines) {
      if (line.contentBlockDelta?.delta?.text) text += line.contentBlockDelta.delta.text;
      if (line.contentBlockStart?.start?.toolUse) {
        const t = line.contentBlockStart.start.toolUse;
        tools.push({ id: t.toolUseId, name: t.name, arguments: '' });
      }
      if (line.contentBlockDelta?.delta?.toolUse) tools[tools.length - 1]!.arguments += line.contentBlockDelta.delta.toolUse.input;
      if (line.messageStop) stopReason = line.messageStop.stopReason;
      if (line.metadata) usage = line.metadata.usage;
    }
    return { text, tools, stopReason, usage };
  }

  for (const [stream, jsonl, finish] of [
    ['bedrock/converse-stream.eventstream', 'bedrock/converse-stream.jsonl', 'stop'],
    ['bedrock/converse-stream-tool-use.eventstream', 'bedrock/converse-stream-tool-use.jsonl', 'tool_calls'],
  ] as const) {
    it(`${stream}: matches ${jsonl} however the bytes are split`, async () => {
      const want = expected(jsonl);
      assert.ok(want.text.length > 0);
      const bytes = fixture(stream);
      let reference: string | undefined;
      for (const how of SPLITS) {
        const out = await runMapper(createBedrockStreamMapper(makeCall('bedrock', { model: 'us.amazon.nova-micro-v1:0', stream: true, stream_options: { include_usage: true } })), split(bytes, how));
        const s = summarize(out);
        assert.equal(s.error, undefined, label(how));
        assert.ok(s.done, `${label(how)}: ends with [DONE]`);
        assert.deepEqual(s.chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
        assert.equal(s.chunks[0]!.model, 'us.amazon.nova-micro-v1:0');
        assert.equal(s.text, want.text, label(how));
        assert.deepEqual(s.tools, want.tools, label(how));
        assert.deepEqual(s.finish, [finish]);
        assert.deepEqual(s.usage, [
          {
            prompt_tokens: want.usage.inputTokens,
            completion_tokens: want.usage.outputTokens,
            total_tokens: want.usage.totalTokens,
            prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
          },
        ]);
        assert.deepEqual(s.chunks[s.chunks.length - 1]!.choices, [], 'the usage chunk has no choices');
        for (const chunk of s.chunks.slice(0, -1)) assert.equal(chunk.usage, null, 'every other chunk has usage null (include_usage)');
        const normalized = out.replace(/"created":\d+/g, '"created":0');
        reference ??= normalized;
        assert.equal(normalized, reference, `${label(how)}: identical output`);
      }
    });
  }

  it('without stream_options.include_usage: no usage chunk and no usage member; the usage is withheld on the call', async () => {
    const want = expected('bedrock/converse-stream.jsonl');
    const call = makeCall('bedrock', { model: 'us.amazon.nova-micro-v1:0', stream: true });
    const s = summarize(await runMapper(createBedrockStreamMapper(call), [fixture('bedrock/converse-stream.eventstream')]));
    assert.ok(s.done);
    assert.equal(s.text, want.text);
    for (const chunk of s.chunks) {
      assert.equal(chunk.choices.length, 1);
      assert.equal('usage' in chunk, false);
    }
    assert.deepEqual(call.withheldUsage, {
      prompt_tokens: want.usage.inputTokens,
      completion_tokens: want.usage.outputTokens,
      total_tokens: want.usage.totalTokens,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
  });

  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const frame = (headers: Record<string, string>, payload: unknown) =>
    Buffer.from(
      codec.encode({
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string' as const, value: v }])),
        body: fromUtf8(JSON.stringify(payload)),
      }),
    );

  it('an exception frame becomes a final error event', async () => {
    const bytes = Buffer.concat([
      frame({ ':message-type': 'event', ':event-type': 'messageStart', ':content-type': 'application/json' }, { role: 'assistant' }),
      frame({ ':message-type': 'event', ':event-type': 'contentBlockDelta', ':content-type': 'application/json' }, { contentBlockIndex: 0, delta: { text: 'Hi' } }),
      frame({ ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, { message: 'Too many requests, please wait before trying again.' }),
    ]);
    const s = summarize(await runMapper(createBedrockStreamMapper(makeCall('bedrock', { stream: true })), split(bytes, { seed: 7 })));
    assert.equal(s.text, 'Hi');
    assert.equal(s.done, false);
    assert.deepEqual(s.error, { message: 'Too many requests, please wait before trying again.', type: 'rate_limit_exceeded', param: null, code: 'throttlingException' });
  });

  it('a corrupt frame or a stream cut mid-frame ends with an error event', async () => {
    const bytes = Buffer.from(fixture('bedrock/converse-stream.eventstream'));
    const corrupt = Buffer.from(bytes);
    corrupt[200] = corrupt[200]! ^ 0xff;
    const bad = summarize(await runMapper(createBedrockStreamMapper(makeCall('bedrock', { stream: true })), split(corrupt, { seed: 3 })));
    assert.equal(bad.error.code, 'upstream_bad_event');
    assert.equal(bad.done, false);
    const cut = summarize(await runMapper(createBedrockStreamMapper(makeCall('bedrock', { stream: true })), [bytes.subarray(0, 1000)]));
    assert.equal(cut.error.code, 'upstream_stream_truncated');
    assert.equal(cut.done, false);
  });
});

describe('bedrock: error mapping', () => {
  it('error-400-invalid-model.json → invalid_request_error with the message', () => {
    assert.deepEqual(mapBedrockError(400, fixture('bedrock/error-400-invalid-model.json')), {
      error: { message: 'The provided model identifier is invalid.', type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('uses x-amzn-ErrorType when the proxy passes headers, else the status', () => {
    const withHeader = mapBedrockError(400, fixture('bedrock/error-400-invalid-model.json'), {
      'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    });
    assert.equal(withHeader.error.code, 'ValidationException');
    assert.equal(withHeader.error.type, 'invalid_request_error');
    assert.equal(mapBedrockError(429, Buffer.from('{"message":"Too many tokens"}'), { 'X-Amzn-ErrorType': 'ThrottlingException' }).error.type, 'rate_limit_exceeded');
    assert.equal(mapBedrockError(403, Buffer.from('{"Message":"User is not authorized"}')).error.type, 'permission_error');
    assert.equal(mapBedrockError(403, Buffer.from('{"Message":"User is not authorized"}')).error.message, 'User is not authorized');
    assert.equal(mapBedrockError(503, Buffer.from('')).error.message, 'bedrock returned HTTP 503');
  });
});

// =============================================================================================
// Azure
// =============================================================================================

describe('azure', () => {
  const config = { baseUrl: 'https://my-resource.openai.azure.com', apiKey: 'azure-key-123', deployments: { 'gpt-4o': 'prod-gpt4o' } };

  it('chat: deployment URL, default api-version, api-key header, body passed through', async () => {
    const call = makeCall('azure', { model: 'gpt-4o', stream: true, stream_options: { include_usage: true } }, config);
    const req = await azure.chat!.buildRequest(call);
    assert.equal(req.url.href, `https://my-resource.openai.azure.com/openai/deployments/prod-gpt4o/chat/completions?api-version=${AZURE_DEFAULT_API_VERSION}`);
    assert.equal(AZURE_DEFAULT_API_VERSION, '2024-10-21');
    assert.equal(req.method, 'POST');
    assert.equal(req.headers['api-key'], 'azure-key-123');
    assert.equal(req.headers.authorization, undefined);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body.toString('utf8')), call.body);
    assert.equal(azure.chat!.passthrough && azure.embeddings!.passthrough, true);
    assert.deepEqual(Object.keys(azure), ['chat', 'embeddings', 'messages', 'responses', 'stored_response']);
  });

  it('embeddings, configured api-version, unmapped model, base URL ending in /openai', async () => {
    const call = makeCall('azure', { model: 'text-embedding-3-small' }, { ...config, baseUrl: 'https://r.openai.azure.com/openai/', apiVersion: '2025-01-01-preview' });
    const req = await azure.embeddings!.buildRequest(call);
    assert.equal(req.url.href, 'https://r.openai.azure.com/openai/deployments/text-embedding-3-small/embeddings?api-version=2025-01-01-preview');
  });

  it('missing base URL → 400 provider_not_configured, missing key → 503 provider_key_missing, without echoing keys', async () => {
    const noUrl = await assertRejectsGateway(
      Promise.resolve().then(() => azure.chat!.buildRequest(makeCall('azure', {}, { apiKey: 'azure-key-123' }))),
      400,
      'provider_not_configured',
    );
    assert.match(noUrl.message, /providers\.azure\.base-url/);
    assert.ok(!noUrl.message.includes('azure-key-123'));
    const noKey = await assertRejectsGateway(
      Promise.resolve().then(() => azure.chat!.buildRequest(makeCall('azure', {}, { baseUrl: 'https://r.openai.azure.com' }))),
      503,
      'provider_key_missing',
    );
    assert.match(noKey.message, /AZURE_OPENAI_API_KEY/);
  });

  it('mapError normalises Azure error bodies to OpenAI shape', () => {
    assert.deepEqual(mapAzureError(401, Buffer.from('{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}')), {
      error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.', type: 'authentication_error', param: null },
    });
    assert.deepEqual(mapAzureError(404, Buffer.from('{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}')).error.code, 'DeploymentNotFound');
    assert.deepEqual(mapAzureError(429, Buffer.from('{"statusCode":429,"message":"Rate limit is exceeded."}')).error, {
      message: 'Rate limit is exceeded.',
      type: 'rate_limit_exceeded',
      param: null,
      code: null,
    });
  });
});
