/**
 * Bedrock's Anthropic models for Messages clients (`anthropic-messages` → `bedrock-invoke`): the
 * InvokeModel body (anthropic_version, no model or stream, betas from the headers), the response
 * unchanged, the InvokeModelWithResponseStream event stream re-emitted as Anthropic's SSE (split at
 * every byte and at random sizes), its failures as `event: error`, and the transport's addressing
 * and SigV4 signing with credentials and clock pinned by its options.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable, type Transform } from 'node:stream';
import { describe, it } from 'node:test';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { buildConfig } from '../shared/config.ts';
import { GatewayError } from '../proxy/errors.ts';
import { bindEndpoints } from '../proxy/providers/binding.ts';
import { createBedrockTransport } from '../proxy/providers/bedrock.ts';
import type { ProviderCall } from '../proxy/providers/types.ts';
import { anthropicBetas, anthropicMessagesToBedrockInvoke as invoke } from '../proxy/translators/anthropic-messages-to-bedrock-invoke.ts';
import { loadEventStream } from '../proxy/translators/wire/aws-eventstream.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream frame. */
function frame(headers: Record<string, string>, payload: unknown): Buffer {
  const h: Record<string, { type: 'string'; value: string }> = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
  return Buffer.from(codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) }));
}

/** An Anthropic SSE body's events as InvokeModelWithResponseStream frames them: `chunk` events with base64 `bytes`. */
function invokeFrames(sse: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (const m of sse.toString('utf8').matchAll(/^data: (.*)$/gm)) {
    out.push(frame({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, { bytes: Buffer.from(m[1]!).toString('base64') }));
  }
  return out;
}

/** What a fresh stream translator makes of `input` fed in pieces of the given sizes (cycled). */
async function translate(input: Buffer, sizes: () => number): Promise<string> {
  await loadEventStream();
  const pieces: Buffer[] = [];
  for (let i = 0; i < input.length; ) {
    const n = Math.max(1, sizes());
    pieces.push(input.subarray(i, i + n));
    i += n;
  }
  const t: Transform = invoke.createStreamTranslator!({ body: { model: 'm', messages: [] }, stream: true, requestId: 'r' });
  let out = '';
  t.on('data', (c: Buffer) => (out += c.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    t.on('end', resolve);
    t.on('error', reject);
    Readable.from(pieces).pipe(t);
  });
  return out;
}

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

const call = (body: Record<string, unknown>, clientHeaders: string[] | null = null): ProviderCall => ({
  config: buildConfig({ providers: { bedrock: { region: 'us-east-1' } } }, {}).providers.bedrock,
  body: body as ChatCompletionRequest,
  stream: body.stream === true,
  requestId: '00000000-0000-4000-8000-000000000001',
  clientHeaders,
  clientCredential: null,
});

describe('anthropic-messages → bedrock-invoke: the request', () => {
  it("Claude Code's body goes as it is, with anthropic_version, without model and stream, and only the betas Bedrock takes", () => {
    const client = JSON.parse(fixture('clients/claude-code-2.1.328.request.json').toString('utf8')) as Record<string, unknown>;
    const headers = JSON.parse(fixture('clients/claude-code-2.1.328.request-headers.json').toString('utf8')).headers as Record<string, string>;
    const removed: string[] = [];
    const c = { ...call(client, ['anthropic-beta', headers['anthropic-beta']!, 'Anthropic-Beta', 'extra-beta, claude-code-20250219']), removed };
    const sent = JSON.parse(invoke.translateRequest(c).toString('utf8'));
    assert.equal(Object.keys(sent)[0], 'anthropic_version');
    assert.equal(sent.anthropic_version, 'bedrock-2023-05-31');
    assert.equal(sent.model, undefined);
    assert.equal(sent.stream, undefined);
    // Claude Code 2.1.328's eight betas: three Bedrock documents, one it knows by another name, four it would refuse.
    assert.deepEqual(sent.anthropic_beta, ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'tool-search-tool-2025-10-19', 'effort-2025-11-24']);
    assert.deepEqual(removed, [
      'anthropic-beta: claude-code-20250219',
      'anthropic-beta: per-turn-control-2026-07-01',
      'anthropic-beta: mid-conversation-tool-changes-2026-07-01',
      'anthropic-beta: thinking-token-count-2026-05-13',
      'anthropic-beta: extra-beta',
    ]);
    const { model: _m, stream: _s, ...rest } = client;
    for (const [k, v] of Object.entries(rest)) assert.deepEqual(sent[k], v, k);
  });

  it("the body's own anthropic_beta joins the headers' betas, filtered the same way; entries not sent are recorded by position", () => {
    const removed: string[] = [];
    const body = { model: 'm', max_tokens: 5, messages: [], anthropic_beta: ['context-1m-2025-08-07', 7, 'oauth-2025-04-20', 'interleaved-thinking-2025-05-14'] };
    const sent = JSON.parse(invoke.translateRequest({ ...call(body, ['anthropic-beta', 'interleaved-thinking-2025-05-14']), removed }).toString('utf8'));
    assert.deepEqual(sent.anthropic_beta, ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07']);
    assert.deepEqual(removed, ['anthropic_beta[1]', 'anthropic_beta[2]']);
    const notArray: string[] = [];
    const sent2 = JSON.parse(invoke.translateRequest({ ...call({ model: 'm', max_tokens: 5, messages: [], anthropic_beta: 'context-1m-2025-08-07' }), removed: notArray }).toString('utf8'));
    assert.equal(sent2.anthropic_beta, undefined, 'a string is not the array Bedrock reads');
    assert.deepEqual(notArray, ['anthropic_beta']);
  });

  it('providers.bedrock.anthropic-betas replaces the documented list', () => {
    const config = buildConfig({ providers: { bedrock: { region: 'us-east-1', 'anthropic-betas': ['claude-code-20250219'] } } }, {}).providers.bedrock;
    const removed: string[] = [];
    const c = { ...call({ model: 'm', max_tokens: 5, messages: [] }, ['anthropic-beta', 'claude-code-20250219,context-1m-2025-08-07']), config, removed };
    assert.deepEqual(JSON.parse(invoke.translateRequest(c).toString('utf8')).anthropic_beta, ['claude-code-20250219']);
    assert.deepEqual(removed, ['anthropic-beta: context-1m-2025-08-07']);
    assert.throws(() => buildConfig({ providers: { anthropic: { 'anthropic-betas': ['x'] } } }, {}), /providers\.anthropic\.anthropic-betas: only bedrock/);
  });

  it('no betas: no anthropic_beta; the betas of the headers parse per value', () => {
    const sent = JSON.parse(invoke.translateRequest(call({ model: 'm', max_tokens: 5, messages: [] })).toString('utf8'));
    assert.equal(sent.anthropic_beta, undefined);
    assert.deepEqual(anthropicBetas(['x-api-key', 'k', 'anthropic-beta', ' a , b,,a ']), ['a', 'b']);
    assert.deepEqual(anthropicBetas(null), []);
  });
});

describe('anthropic-messages → bedrock-invoke: the answer', () => {
  it("the response is Anthropic's message unchanged; a body that is not JSON is a 502 in Anthropic's shape", () => {
    const body = fixture('providers/anthropic/message.json');
    assert.deepEqual(invoke.translateResponse(body, call({})), { status: 200, body: JSON.parse(body.toString('utf8')) });
    const bad = invoke.translateResponse(Buffer.from('<html>'), call({}));
    assert.equal(bad.status, 502);
    assert.equal((bad.body as { type: string }).type, 'error');
  });

  it("the stream becomes Anthropic's SSE byte for byte, split at every byte and at random sizes", async () => {
    for (const name of ['message-stream-recorded.sse', 'message-stream-thinking-tool-use.sse']) {
      const sse = fixture(`providers/anthropic/${name}`);
      const input = Buffer.concat(invokeFrames(sse));
      assert.equal(await translate(input, () => 1), sse.toString('utf8'), `${name} byte by byte`);
      const r = rng(7);
      assert.equal(await translate(input, () => Math.floor(r() * 200)), sse.toString('utf8'), `${name} random pieces`);
    }
  });

  it('an exception frame ends the stream with an Anthropic error event of the matching type', async () => {
    const frames = invokeFrames(fixture('providers/anthropic/message-stream-recorded.sse'));
    const input = Buffer.concat([...frames.slice(0, 3), frame({ ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, { message: 'Too many tokens' })]);
    const out = await translate(input, () => 13);
    assert.match(out, /^event: message_start\n/);
    assert.ok(out.endsWith('event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many tokens"}}\n\n'), out);
  });

  it('a stream cut before message_stop, or a corrupt frame, ends with an api_error event', async () => {
    const frames = invokeFrames(fixture('providers/anthropic/message-stream-recorded.sse'));
    const cut = await translate(Buffer.concat(frames.slice(0, 4)), () => 64);
    assert.match(cut, /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"bedrock ended the stream before message_stop"\}\}\n\n$/);
    const corrupt = Buffer.concat([frames[0]!, Buffer.from([0, 0, 0, 5, 1, 2, 3, 4])]);
    assert.match(await translate(corrupt, () => 64), /"message":"bedrock sent a malformed event-stream frame"/);
  });
});

describe('the Bedrock transport at Messages', () => {
  const env = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'us-east-1' };
  const FIXED_DATE = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
  const bindings = bindEndpoints(createBedrockTransport({ env, now: () => FIXED_DATE }));

  it('InvokeModel and InvokeModelWithResponseStream at the model id, SigV4-signed', async () => {
    const plain = await bindings.messages!.buildRequest(call({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 5, messages: [] }));
    assert.equal(plain.url.href, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
    assert.equal(plain.headers.accept, 'application/json');
    assert.equal(plain.headers['x-amz-date'], '20240102T030405Z');
    assert.ok(plain.headers.authorization!.startsWith('AWS4-HMAC-SHA256 Credential=AKID/20240102/us-east-1/bedrock/aws4_request'));
    const streamed = await bindings.messages!.buildRequest(call({ model: 'anthropic.claude-3-haiku', max_tokens: 5, messages: [], stream: true }));
    assert.equal(streamed.url.pathname, '/model/anthropic.claude-3-haiku/invoke-with-response-stream');
    assert.equal(streamed.headers.accept, 'application/vnd.amazon.eventstream');
    assert.equal(bindings.messages!.wireFormat, 'bedrock-invoke');
    assert.equal(bindings.messages!.mapsErrors, true, "Bedrock's errors are rendered in Anthropic's shape");
  });

  it("another model is a 400 naming it; the client's own Bedrock API key (Svc-Auth) is sent unsigned", async () => {
    await assert.rejects(
      Promise.resolve().then(() => bindings.messages!.buildRequest(call({ model: 'us.amazon.nova-micro-v1:0', max_tokens: 5, messages: [] }))),
      (e: unknown) => e instanceof GatewayError && e.status === 400 && e.code === 'unsupported_model' && e.message.includes('us.amazon.nova-micro-v1:0'),
    );
    const own = await bindings.messages!.buildRequest({ ...call({ model: 'anthropic.claude-3-haiku', max_tokens: 5, messages: [] }), clientCredential: { authorization: null, apiKey: 'bedrock-api-key' } });
    assert.equal(own.headers.authorization, 'Bearer bedrock-api-key');
    assert.equal(own.headers['x-amz-date'], undefined);
  });

  it("Bedrock's error bodies reach a Messages client in Anthropic's shape", () => {
    const body = bindings.messages!.mapError(400, fixture('providers/bedrock/error-400-invalid-model.json'), { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    assert.equal((body as { type: string }).type, 'error');
    assert.equal((body as { error: { type: string } }).error.type, 'invalid_request_error');
  });
});
