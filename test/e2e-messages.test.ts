/**
 * End-to-end: Anthropic's Messages API at the gateway, driven by the official `@anthropic-ai/sdk`
 * against real processes (stub upstream playing Anthropic from recorded fixtures, admin, proxy):
 * passthrough to Anthropic (bytes and headers as sent, the service key in `x-api-key`,
 * `Authorization` or `Svc-Auth` with the user's own key), count_tokens, errors in Anthropic's
 * shape, a model-mappings router, Bedrock's Anthropic models through InvokeModel, and the Claude
 * Code request fixture reaching Anthropic byte for byte.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { AWS_TEST_ENV, fetchRecord, startStack, type Stack } from './support/stack.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stub) => ({
      svc: { features: 'observability' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        anthropic: { 'base-url': `${stub}/v1` },
        bedrock: { 'base-url': stub, region: 'us-east-1' },
      },
      routers: {
        claude: {
          'load-balance': {
            chat: { strategy: 'model-mappings', providers: ['anthropic'], 'model-mappings': { 'claude-house-default': ['anthropic/claude-sonnet-4-5'] } },
          },
        },
        tight: {
          'load-balance': { chat: { strategy: 'latency', providers: ['anthropic'] } },
          'rate-limit': { 'per-api-key': { capacity: 1, 'refill-frequency': '1h' } },
        },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
    proxyEnv: AWS_TEST_ENV,
  });
});
after(async () => {
  await stack?.stop();
});

/**
 * An SDK client on the gateway at `path` with the service key as `x-api-key` (as Claude Code sends
 * `ANTHROPIC_API_KEY`; this SDK version itself sends an `apiKey` as `Authorization: Bearer`).
 */
const client = (path = '', opts: ConstructorParameters<typeof Anthropic>[0] = {}) =>
  new Anthropic({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: null, authToken: null, maxRetries: 0, defaultHeaders: { 'x-api-key': stack.apiKey }, ...opts });
const upstream = async (): Promise<any[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
const lastUpstream = async () => (await upstream()).at(-1);
const PROVIDER_KEY = 'sk-ant-provider-secret';

describe('passthrough to Anthropic with the official SDK', () => {
  test('non-streamed, service key in x-api-key: the message as Anthropic sent it, logged as messages', async () => {
    const { data, response } = await client()
      .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'What is Python?' }] })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.match((data.content[0] as Anthropic.TextBlock).text, /^Python is a beginner-friendly/);
    assert.equal(data.usage.cache_read_input_tokens, 1111);
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], PROVIDER_KEY, "the gateway's provider key goes upstream, not the service key");
    assert.equal(sent.headers.authorization, undefined);
    assert.match(sent.headers['anthropic-version'], /^\d{4}-\d{2}-\d{2}$/, "the SDK's anthropic-version goes upstream");
    assert.equal(sent.body.model, 'claude-sonnet-4-5', 'a bare claude- model is sent as written');
    // Anthropic's response headers come back.
    assert.equal(response.headers.get('request-id'), 'req_011CbVjqiXA7wxBTF7BBSFMV');
    assert.equal(response.headers.get('anthropic-ratelimit-requests-remaining'), '19999');
    assert.equal(response.headers.get('svc-provider'), 'anthropic');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.provider, 'ANTHROPIC');
    assert.equal(rec.request_path, '/v1/messages');
    assert.equal(rec.request_properties['svc-endpoint'], 'messages');
    assert.equal(rec.request_properties['svc-wire-format'], 'anthropic-messages');
    assert.equal(rec.response_body.id, data.id);
  });

  test('service key as Authorization: Bearer (the SDK\'s apiKey, ANTHROPIC_AUTH_TOKEN) on /ai; anthropic/<model> is spliced to the bare name', async () => {
    const msg = await client('/ai', { apiKey: stack.apiKey, defaultHeaders: {} }).messages.create({
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(msg.role, 'assistant');
    const sent = await lastUpstream();
    assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
    assert.equal(sent.headers.authorization, undefined, "the client's Authorization (the service key) never leaves");
    assert.equal(sent.body.model, 'claude-sonnet-4-5');
    assert.match(sent.raw, /^\{"model":"claude-sonnet-4-5",/, 'the client bytes with only the model replaced');
  });

  test('streamed: the SSE bytes are Anthropic’s, the SDK assembles the message', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '1+1?' }] }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), fixture('providers/anthropic/message-stream-recorded.sse'));
    const final = await client().messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: '1+1?' }] }).finalMessage();
    assert.equal((final.content[0] as Anthropic.TextBlock).text, '2');
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, 5);
  });

  test('tools: tool_use blocks with parsed input, streamed and not', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }];
    const msg = await client().messages.create({ model: 'claude-haiku-4-5', max_tokens: 200, tools, messages: [{ role: 'user', content: 'weather?' }] });
    assert.equal(msg.stop_reason, 'tool_use');
    assert.equal(msg.content.filter((b) => b.type === 'tool_use').length, 4);
    const final = await client().messages.stream({ model: 'claude-sonnet-4', max_tokens: 200, tools, messages: [{ role: 'user', content: 'weather?' }] }).finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    assert.equal(use.name, 'get_weather');
    assert.equal(typeof use.input, 'object');
    assert.equal((await lastUpstream()).body.tools[0].name, 'get_weather');
  });

  test('thinking: thinking blocks with their signature reach the SDK', async () => {
    const final = await client()
      .messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'two pelican names' }] })
      .finalMessage();
    const thinking = final.content.find((b) => b.type === 'thinking') as Anthropic.ThinkingBlock;
    assert.match(thinking.thinking, /^The user wants/);
    assert.ok(thinking.signature.length > 0);
    assert.match((final.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text, /Captain/);
    assert.deepEqual((await lastUpstream()).body.thinking, { type: 'enabled', budget_tokens: 1024 });
  });

  test('countTokens: sent to /v1/messages/count_tokens, answered by Anthropic', async () => {
    const { data, response } = await client()
      .messages.countTokens({ model: 'claude-opus-5', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    assert.deepEqual(data, { input_tokens: 10 });
    assert.equal(response.headers.get('svc-token-count'), null, "Anthropic's own count");
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages/count_tokens');
    assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
  });

  test('countTokens for another provider: the gateway estimates with its tokenizer', async () => {
    const before = (await upstream()).length;
    const { data, response } = await client()
      .messages.countTokens({ model: 'openai/gpt-4o', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there, how are you today?' }] })
      .withResponse();
    assert.ok(data.input_tokens > 5 && data.input_tokens < 40, `estimate ${data.input_tokens}`);
    assert.equal(response.headers.get('svc-token-count'), 'estimate');
    assert.equal(response.headers.get('svc-provider'), 'openai');
    assert.equal((await upstream()).length, before, 'no provider was called');
  });

  test('the SDK beta client (?beta=true) is served like the plain one', async () => {
    const msg = await client().beta.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, betas: ['interleaved-thinking-2025-05-14'], messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(msg.type, 'message');
    const sent = await lastUpstream();
    assert.equal(sent.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
  });
});

describe('bring your own key: Svc-Auth carries the service key', () => {
  test("the user's x-api-key goes to Anthropic, the gateway's key does not", async () => {
    const msg = await client('', { defaultHeaders: { 'x-api-key': 'sk-ant-user-own-key', 'Svc-Auth': `Bearer ${stack.apiKey}` } }).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(msg.type, 'message');
    const sent = await lastUpstream();
    assert.equal(sent.headers['x-api-key'], 'sk-ant-user-own-key', JSON.stringify(sent.headers));
    assert.equal(sent.headers['svc-auth'], undefined);
    assert.ok(!JSON.stringify(sent.headers).includes(PROVIDER_KEY));
  });

  test("the user's OAuth token (Authorization) goes to Anthropic as sent", async () => {
    await client('', { authToken: 'sk-ant-oat01-user-token', defaultHeaders: { 'Svc-Auth': `Bearer ${stack.apiKey}` } }).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const sent = await lastUpstream();
    assert.equal(sent.headers.authorization, 'Bearer sk-ant-oat01-user-token');
    assert.equal(sent.headers['x-api-key'], undefined);
  });

  test('on chat completions too: the client’s Authorization goes to the OpenAI-compatible provider', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-user-openai-key', 'svc-auth': `Bearer ${stack.apiKey}` },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.equal((await lastUpstream()).headers.authorization, 'Bearer sk-user-openai-key');
  });

  test('a bad service key in Svc-Auth is a 401 even with a provider key beside it', async () => {
    const err = await client('', { defaultHeaders: { 'x-api-key': 'sk-ant-user-own-key', 'Svc-Auth': 'Bearer sk-svc-wrong' } })
      .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.AuthenticationError);
  });
});

describe('the Claude Code request', () => {
  test('reaches Anthropic byte for byte, with every anthropic-* and x-stainless-* header; request-id comes back', async () => {
    const body = fixture('clients/claude-code-2.1.328.request.json');
    const recorded = JSON.parse(fixture('clients/claude-code-2.1.328.request-headers.json').toString('utf8')) as { url: string; headers: Record<string, string> };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(recorded.headers)) if (!['host', 'content-length', 'connection', 'accept-encoding'].includes(k)) headers[k] = v;
    headers['x-api-key'] = stack.apiKey;
    const res = await fetch(`${stack.gatewayUrl}${recorded.url}`, { method: 'POST', headers, body: new Uint8Array(body) });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(res.headers.get('request-id'), 'req_011CbVjqiXA7wxBTF7BBSFMV');
    assert.equal(res.headers.get('anthropic-ratelimit-tokens-limit'), '4800000');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages');
    assert.equal(Buffer.compare(Buffer.from(sent.raw, 'utf8'), body), 0, 'the body bytes are unchanged');
    for (const [k, v] of Object.entries(recorded.headers)) {
      if (k.startsWith('anthropic-') || k.startsWith('x-stainless-')) assert.equal(sent.headers[k], v, k);
    }
    assert.equal(sent.headers['x-api-key'], PROVIDER_KEY);
    assert.equal(sent.headers['x-claude-code-session-id'], undefined, 'only the anthropic-* and x-stainless-* headers are forwarded');
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.request_properties['svc-session-id'], recorded.headers['x-claude-code-session-id']);
    assert.equal(rec.request_body.max_tokens, 128000);
  });

  test('every value of repeated anthropic-beta headers goes upstream', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: [
        ['content-type', 'application/json'],
        ['x-api-key', stack.apiKey],
        ['anthropic-beta', 'a-2025-01-01'],
        ['anthropic-beta', 'b-2025-02-02,c-2025-03-03'],
      ],
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    const sent = await lastUpstream();
    assert.equal(sent.headers['anthropic-beta'], 'a-2025-01-01, b-2025-02-02,c-2025-03-03');
    assert.equal(sent.headers['anthropic-version'], '2023-06-01', 'the default when the client sends none');
  });
});

describe("errors in Anthropic's shape", () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': stack.apiKey, ...headers }, body });
  const shape = async (res: Response, status: number, type: string): Promise<string> => {
    assert.equal(res.status, status);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, type);
    assert.equal(typeof body.error.message, 'string');
    return body.error.message;
  };
  const ok = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

  test('401 authentication_error for a bad key; the SDK raises AuthenticationError', async () => {
    await shape(await post('/v1/messages', ok, { 'x-api-key': 'sk-svc-not-a-key' }), 401, 'authentication_error');
    const err = await client('', { apiKey: 'sk-svc-not-a-key', defaultHeaders: {} }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.AuthenticationError);
  });

  test('400 invalid_request_error for malformed JSON and for a missing max_tokens (named)', async () => {
    await shape(await post('/v1/messages', '{"model":'), 400, 'invalid_request_error');
    const msg = await shape(await post('/v1/messages', JSON.stringify({ model: 'claude-sonnet-4-5', messages: [] })), 400, 'invalid_request_error');
    assert.match(msg, /max_tokens/);
    const err = await client().messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, 'a bare non-Anthropic model needs its provider prefix');
  });

  test('404 not_found_error for an unknown path under /v1/messages and an unknown router', async () => {
    await shape(await post('/v1/messages/batches', ok), 404, 'not_found_error');
    await shape(await post('/router/nope/v1/messages', ok), 404, 'not_found_error');
  });

  test("429 rate_limit_error with retry-after from the gateway's own limit; the SDK raises RateLimitError", async () => {
    assert.equal((await post('/router/tight/v1/messages', ok)).status, 200);
    const res = await post('/router/tight/v1/messages', ok);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    await shape(res, 429, 'rate_limit_error');
    const err = await client('/router/tight').messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.RateLimitError);
  });

  test("Anthropic's 529 overloaded_error and 429 are passed on as they came", async () => {
    const res = await post('/v1/messages', JSON.stringify({ model: 'anthropic/error-529', max_tokens: 10, messages: [] }));
    assert.equal(res.status, 529);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), fixture('providers/anthropic/error-overloaded.json'));
    const limited = await post('/ai/v1/messages', JSON.stringify({ model: 'anthropic/error-429', max_tokens: 10, messages: [] }));
    assert.equal(limited.headers.get('retry-after'), '1');
    await shape(limited, 429, 'rate_limit_error');
  });

  test('a stream the provider cuts ends with an Anthropic error event', async () => {
    const res = await post('/v1/messages', JSON.stringify({ model: 'anthropic/reset-mid-stream', max_tokens: 10, stream: true, messages: [] }));
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /^event: message_start\n/);
    assert.match(text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"provider connection lost mid-response"\}\}\n\n$/);
  });
});

describe('routers and Bedrock', () => {
  test('a model-mappings router sends the mapped Anthropic model', async () => {
    const msg = await client('/router/claude').messages.create({ model: 'claude-house-default', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(msg.type, 'message');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.body.model, 'claude-sonnet-4-5');
  });

  test("Bedrock's Anthropic models: InvokeModel with Anthropic's body, signed", async () => {
    const model = 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const msg = await client('', { defaultHeaders: { 'x-api-key': stack.apiKey, 'anthropic-beta': 'context-1m-2025-08-07' } }).messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'What is Python?' }] });
    assert.match((msg.content[0] as Anthropic.TextBlock).text, /^Python is a beginner-friendly/);
    const sent = await lastUpstream();
    assert.match(sent.url, /^\/model\/us\.anthropic\.claude-sonnet-4-5-20250929-v1(%3A|:)0\/invoke$/);
    assert.match(sent.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    assert.equal(sent.body.anthropic_version, 'bedrock-2023-05-31');
    assert.equal(sent.body.model, undefined);
    assert.deepEqual(sent.body.anthropic_beta, ['context-1m-2025-08-07']);
    assert.equal(sent.headers['anthropic-beta'], undefined);
  });

  test("Bedrock's Anthropic models streamed: event-stream frames become Anthropic's SSE", async () => {
    const final = await client()
      .messages.stream({ model: 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 64, messages: [{ role: 'user', content: '1+1?' }] })
      .finalMessage();
    assert.equal((final.content[0] as Anthropic.TextBlock).text, '2');
    const sent = await lastUpstream();
    assert.match(sent.url, /\/invoke-with-response-stream$/);
    assert.equal(sent.body.stream, undefined, 'the action says it streams');
  });

  test('another Bedrock model on Messages is a 400 naming it', async () => {
    const err = await client().messages.create({ model: 'bedrock/us.amazon.nova-micro-v1:0', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError);
    assert.match((err as Error).message, /us\.amazon\.nova-micro-v1:0/);
  });
});

describe('translation to an OpenAI-compatible provider', () => {
  test('non-streamed: the Messages body becomes chat completions, the answer a message; removed members logged', async () => {
    const { data, response } = await client()
      .messages.create({
        model: 'openai/gpt-4o-mini',
        max_tokens: 100,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Capital of France?' }],
      })
      .withResponse();
    assert.equal(data.type, 'message');
    assert.equal((data.content[0] as Anthropic.TextBlock).text, 'The capital of France is Paris.');
    assert.equal(data.stop_reason, 'end_turn');
    assert.equal(data.usage.output_tokens, 8);
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/chat/completions');
    assert.equal(sent.headers.authorization, 'Bearer sk-provider-openai-secret');
    assert.equal(sent.headers['x-api-key'], undefined);
    assert.equal(sent.body.model, 'gpt-4o-mini');
    assert.ok(Array.isArray(sent.body.messages));
    assert.equal(sent.body.system, undefined);
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.request_properties['svc-wire-format'], 'openai-chat');
    assert.match(rec.request_properties['svc-removed-members'] ?? '', /cache_control/);
  });

  test('streamed: the SDK reads an Anthropic event stream built from chat chunks', async () => {
    const stream = client().messages.stream({ model: 'openai/gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'Capital of the UK?' }] });
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    assert.equal((final.content[0] as Anthropic.TextBlock).text, 'The capital of the UK is London.');
    assert.equal(events[0], 'message_start');
    assert.equal(events.at(-1), 'message_stop');
    assert.ok(events.includes('content_block_delta'));
    assert.equal((await lastUpstream()).body.stream, true);
  });

  test("the provider's OpenAI-shaped error reaches the client in Anthropic's shape, status kept", async () => {
    const err = await client().messages.create({ model: 'openai/error-429', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.RateLimitError, String(err));
    assert.equal(((err as { error?: { type?: string } }).error)?.type, 'error');
  });
});
