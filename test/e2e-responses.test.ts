/**
 * End-to-end: OpenAI's Responses API at the gateway, driven by the official `openai` client against
 * real processes (the stub upstream playing OpenAI and Azure OpenAI from recorded fixtures, admin,
 * proxy): passthrough (body and SSE bytes as sent but the model, members and headers as sent,
 * OpenAI's response headers back), function calling, structured output, `previous_response_id`, the
 * stored-response calls (GET/DELETE/input_items/cancel) and which provider they reach, input_tokens, errors in OpenAI's shape and a stream cut mid-way, Svc-Auth,
 * routers, rate limits, the fallback token-limit handler, the Codex request byte for byte, and the log
 * record (endpoint, wire format, session, usage, cost).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { fetchRecord, startStack, type Stack } from './support/stack.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));
const json = (p: string): any => JSON.parse(fixture(p).toString('utf8'));

const TEXT = json('providers/openai/responses-text.json');
const STORED_ID: string = TEXT.id;
const OPENAI_KEY = 'sk-provider-openai-secret';
const AZURE_KEY = 'azure-provider-secret';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stub) => ({
      svc: { features: 'observability' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        azure: { 'base-url': stub },
        groq: { 'base-url': `${stub}/openai/v1` },
      },
      routers: {
        house: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } },
        tight: {
          'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } },
          'rate-limit': { 'per-api-key': { capacity: 1, 'refill-frequency': '1h' } },
        },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
    proxyEnv: { AZURE_OPENAI_API_KEY: AZURE_KEY },
  });
});
after(async () => {
  await stack?.stop();
});

/** An openai client on the gateway at `path` (`/v1`, `/ai`, `/router/<name>`) with the service key. */
const client = (path = '/v1', opts: ConstructorParameters<typeof OpenAI>[0] = {}) => new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0, ...opts });
const upstream = async (): Promise<any[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
const lastUpstream = async () => (await upstream()).at(-1);
const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.apiKey}`, ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });

describe('passthrough to OpenAI with the official client', () => {
  test('responses.create: the response as OpenAI sent it, its headers back, logged as responses with usage and cost', async () => {
    const { data, response } = await client().responses.create({ model: 'gpt-4.1-nano', input: 'What is the capital of France?' }).withResponse();
    assert.equal(data.output_text, 'The capital of France is Paris.');
    assert.equal(data.id, STORED_ID);
    assert.equal(response.headers.get('x-request-id'), 'req_edd609b7a4e2423e96440d1ce3437d1f');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '29999');
    assert.equal(response.headers.get('svc-provider'), 'openai');
    assert.equal(response.headers.get('svc-removed-members'), null, 'nothing is removed on passthrough');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/responses');
    assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`, "the gateway's provider key, never the service key");
    assert.deepEqual(sent.body, { model: 'gpt-4.1-nano', input: 'What is the capital of France?' }, 'a bare OpenAI model goes to openai as written');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.provider, 'OPENAI');
    assert.equal(rec.request_path, '/v1/responses');
    assert.equal(rec.request_properties['svc-endpoint'], 'responses');
    assert.equal(rec.request_properties['svc-wire-format'], 'openai-responses');
    assert.equal(rec.prompt_tokens, 14);
    assert.equal(rec.completion_tokens, 8);
    assert.ok(Math.abs(rec.cost - (14 * 0.1 + 8 * 0.4) / 1e6) < 1e-12, `cost ${rec.cost}`);
    assert.equal(rec.response_body.id, STORED_ID);
  });

  test('on /ai with openai/<model>: the client bytes with only the model replaced', async () => {
    const bytes = '{ "input" : "What is the capital of France?",\n  "model":"openai/gpt-4.1-nano",  "temperature": 0.5 }';
    const res = await post('/ai/responses', bytes);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as any).id, STORED_ID);
    assert.equal((await lastUpstream()).raw, bytes.replace('"openai/gpt-4.1-nano"', '"gpt-4.1-nano"'));
  });

  test('streamed: the SSE bytes are OpenAI’s; responses.stream assembles the response; the stream’s usage is logged', async () => {
    const res = await post('/v1/responses', JSON.stringify({ model: 'gpt-4.1-nano', input: '2+2?', stream: true }));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(res.headers.get('x-request-id'), 'req_edd609b7a4e2423e96440d1ce3437d1f');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), fixture('providers/openai/responses-stream.sse'));
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.prompt_tokens, 14);
    assert.equal(rec.completion_tokens, 9);
    assert.equal(rec.response_body.output[0].content[0].text, '2 + 2 equals 4.', 'the stream folded into one response for the log');
    assert.equal(rec.response_body.status, 'completed');
    const final = await client().responses.stream({ model: 'gpt-4.1-nano', input: '2+2?' }).finalResponse();
    assert.equal(final.output_text, '2 + 2 equals 4.');
    assert.equal(final.usage?.output_tokens, 9);
  });

  test('function calling: function_call items, streamed and not; the tool output goes back with previous_response_id as sent', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } } }, strict: false }];
    const first = await client().responses.create({ model: 'gpt-4.1-nano', input: 'weather in Paris?', tools });
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { location: 'Paris' });
    const streamed = await client().responses.stream({ model: 'gpt-4o', input: 'compose', tools }).finalResponse();
    const streamedCall = streamed.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(streamedCall.name, 'compose_music');
    assert.deepEqual(JSON.parse(streamedCall.arguments), { style: 'symphony', key: 'D major' });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature":"18C"}' }];
    await client().responses.create({ model: 'gpt-4.1-nano', previous_response_id: first.id, input, tools });
    const sent = await lastUpstream();
    assert.equal(sent.body.previous_response_id, first.id, 'a response OpenAI keeps: the id goes on as sent');
    assert.deepEqual(sent.body.input, input);
  });

  test('structured output: text.format reaches OpenAI as sent', async () => {
    const format = { type: 'json_schema' as const, name: 'capital', strict: true, schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } };
    const r = await client().responses.create({ model: 'gpt-4.1-nano', input: 'capital of France?', text: { format } });
    assert.equal(r.status, 'completed');
    assert.deepEqual((await lastUpstream()).body.text, { format });
  });

  test('reasoning: the reasoning tokens and the client’s properties and user are logged as on chat completions', async () => {
    const { data, response } = await client()
      .responses.create({ model: 'gpt-5-nano', input: 'think', reasoning: { effort: 'medium', summary: 'auto' } }, { headers: { 'Svc-Property-Team': 'search', 'Svc-User-Id': 'u-7' } })
      .withResponse();
    assert.equal(data.output[0]!.type, 'reasoning');
    assert.equal(data.usage?.output_tokens_details.reasoning_tokens, 576);
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.reasoning_tokens, 576);
    assert.equal(rec.completion_tokens, data.usage?.output_tokens);
    assert.equal(rec.request_properties.team, 'search');
    assert.equal(rec.request_user_id, 'u-7');
    assert.ok(rec.cost > 0, 'costed');
  });

  test('members and headers OpenAI reads reach it as sent; OpenAI-Organization only with the client’s own key', async () => {
    const body = {
      model: 'gpt-4.1-nano',
      input: [{ role: 'user', content: 'hi' }],
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'pck-1',
      background: true,
      reasoning: { effort: 'low', summary: 'auto' },
      tools: [{ type: 'web_search' }, { type: 'code_interpreter', container: { type: 'auto' } }],
    };
    const headers = { 'x-codex-window-id': 'w-1', 'OpenAI-Beta': 'responses=v1', originator: 'codex_exec', session_id: 's-1', 'x-stainless-lang': 'js', 'OpenAI-Organization': 'org-other' };
    const res = await post('/v1/responses', JSON.stringify(body), headers);
    assert.equal(res.status, 200);
    const sent = await lastUpstream();
    assert.equal(sent.raw, JSON.stringify(body));
    assert.equal(sent.headers['x-codex-window-id'], 'w-1');
    assert.equal(sent.headers['openai-beta'], 'responses=v1');
    assert.equal(sent.headers.originator, 'codex_exec');
    assert.equal(sent.headers.session_id, 's-1');
    assert.equal(sent.headers['x-stainless-lang'], 'js');
    assert.equal(sent.headers['openai-organization'], undefined, 'never with the gateway key: it would choose whose account pays');
    await post('/v1/responses', JSON.stringify(body), { ...headers, authorization: 'Bearer sk-user-own', 'Svc-Auth': `Bearer ${stack.apiKey}` });
    const own = await lastUpstream();
    assert.equal(own.headers.authorization, 'Bearer sk-user-own', "Svc-Auth: the client's own credential goes upstream");
    assert.equal(own.headers['openai-organization'], 'org-other');
  });

  test('a router: its member serves a bare model; its rate limit answers 429 in OpenAI’s shape', async () => {
    const r = await client('/router/house').responses.create({ model: 'gpt-4.1-nano', input: 'hi' });
    assert.equal(r.id, STORED_ID);
    assert.equal((await lastUpstream()).body.model, 'gpt-4.1-nano');
    await client('/router/tight').responses.create({ model: 'gpt-4.1-nano', input: 'hi' });
    const err = await client('/router/tight').responses.create({ model: 'gpt-4.1-nano', input: 'hi' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.ok(Number(err.headers?.get('retry-after')) > 0);
  });

  test('fallback token-limit handler: a body over the primary’s window goes to the fallback, estimated on the chat view', async () => {
    const h = { headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } };
    await client().responses.create({ model: 'gpt-4o-mini,gpt-4.1-nano', input: 'short' }, h);
    assert.equal((await lastUpstream()).body.model, 'gpt-4o-mini');
    const big = 'lorem ipsum dolor sit amet '.repeat(30_000);
    await client().responses.create({ model: 'gpt-4o-mini,gpt-4.1-nano', instructions: big, input: [{ role: 'user', content: big }] }, h);
    assert.equal((await lastUpstream()).body.model, 'gpt-4.1-nano');
    const err = await client().responses.create({ model: 'gpt-4.1-nano', input: 'x' }, { headers: { 'Svc-Token-Limit-Exception-Handler': 'middle-out' } }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.code, 'unsupported_token_limit_handler');
  });
});

describe('the Codex request', () => {
  test('reaches OpenAI byte for byte with its x-codex-* headers; the session is logged', async () => {
    const body = fixture('clients/codex-0.169.0.request.json');
    const recorded = JSON.parse(fixture('clients/codex-0.169.0.request-headers.json').toString('utf8')) as { url: string; headers: Record<string, string> };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(recorded.headers)) if (!['host', 'content-length', 'connection', 'accept-encoding'].includes(k)) headers[k] = v;
    headers.authorization = `Bearer ${stack.apiKey}`;
    const res = await fetch(`${stack.gatewayUrl}${recorded.url}`, { method: 'POST', headers, body: new Uint8Array(body) });
    assert.equal(res.status, 200, await res.clone().text());
    // Codex sends function tools: the stub answers its recorded function-call stream, byte for byte.
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), fixture('providers/openai/responses-stream-function-call.sse'));
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/responses');
    assert.equal(Buffer.compare(Buffer.from(sent.raw, 'utf8'), body), 0, 'the body bytes are unchanged');
    for (const [k, v] of Object.entries(recorded.headers)) {
      if (k.startsWith('x-codex-') || ['originator', 'session-id', 'thread-id', 'x-client-request-id'].includes(k)) assert.equal(sent.headers[k], v, k);
    }
    assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.request_properties['svc-session-id'], recorded.headers['session-id']);
    assert.equal(rec.request_properties['svc-endpoint'], 'responses');
  });
});

describe('input_tokens', () => {
  test('to OpenAI: its own count, at /v1/responses/input_tokens', async () => {
    const { data, response } = await client().responses.inputTokens.count({ model: 'gpt-4.1-mini', input: 'hi', instructions: 'be brief' }).withResponse();
    assert.deepEqual(data, { input_tokens: 16, object: 'response.input_tokens' });
    assert.equal(response.headers.get('svc-token-count'), null);
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/responses/input_tokens');
    assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
  });

  test('another provider: the gateway’s estimate, nothing sent', async () => {
    const before = (await upstream()).length;
    const { data, response } = await client('/ai')
      .responses.inputTokens.count({ model: 'groq/llama-3.3-70b-versatile', input: 'How many tokens is this sentence?', instructions: 'be brief' })
      .withResponse();
    assert.equal(data.object, 'response.input_tokens');
    assert.ok(data.input_tokens > 5 && data.input_tokens < 40, String(data.input_tokens));
    assert.equal(response.headers.get('svc-token-count'), 'estimate');
    assert.equal((await upstream()).length, before);
  });
});

describe('stored responses', () => {
  test('retrieve, input items, delete and cancel go to the provider that made the response', async () => {
    await client().responses.create({ model: 'gpt-4.1-nano', input: 'What is the capital of France?' });
    const got = await client().responses.retrieve(STORED_ID);
    assert.equal(got.output_text, 'The capital of France is Paris.');
    let sent = await lastUpstream();
    assert.equal(sent.method, 'GET');
    assert.equal(sent.url, `/v1/responses/${STORED_ID}`);
    assert.equal(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
    const items = await client().responses.inputItems.list(STORED_ID, { limit: 5, order: 'asc' });
    assert.equal(items.data[0]!.id, 'msg_stub_input');
    assert.equal((await lastUpstream()).url, `/v1/responses/${STORED_ID}/input_items?limit=5&order=asc`, 'the query as sent');
    const cancel = await client().responses.cancel(STORED_ID).catch((e: unknown) => e);
    assert.ok(cancel instanceof OpenAI.BadRequestError, "OpenAI's own 400 passes through");
    const del = await fetch(`${stack.gatewayUrl}/v1/responses/${STORED_ID}`, { method: 'DELETE', headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.deepEqual(await del.json(), { id: STORED_ID, object: 'response', deleted: true });
    sent = await lastUpstream();
    assert.equal(sent.method, 'DELETE');
    assert.equal(sent.url, `/v1/responses/${STORED_ID}`);
  });

  test('a response Azure made: created at /openai/v1/responses with api-key, retrieved from Azure without naming it', async () => {
    const { response } = await client('/ai').responses.create({ model: 'azure/gpt-4.1-nano', input: 'hi' }).withResponse();
    assert.equal(response.headers.get('svc-provider'), 'azure');
    let sent = await lastUpstream();
    assert.equal(sent.url, '/openai/v1/responses');
    assert.equal(sent.headers['api-key'], AZURE_KEY);
    assert.equal(sent.body.model, 'gpt-4.1-nano');
    const got = await client('/ai').responses.retrieve(STORED_ID);
    assert.equal(got.id, STORED_ID);
    sent = await lastUpstream();
    assert.equal(sent.url, `/openai/v1/responses/${STORED_ID}`, "the gateway remembers which provider made the id");
    assert.equal(sent.headers['api-key'], AZURE_KEY);
  });

  test('an id the gateway never saw: OpenAI by default, the provider named in Svc-Provider otherwise; OpenAI’s 404 passes through', async () => {
    const err = await client().responses.retrieve('resp_unknown1').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal((await lastUpstream()).url, '/v1/responses/resp_unknown1');
    await client().responses.retrieve('resp_unknown2', {}, { headers: { 'Svc-Provider': 'azure' } }).catch(() => null);
    assert.equal((await lastUpstream()).url, '/openai/v1/responses/resp_unknown2');
    const bad = await client().responses.retrieve('resp_unknown3', {}, { headers: { 'Svc-Provider': 'groq' } }).catch((e: unknown) => e);
    assert.ok(bad instanceof OpenAI.BadRequestError);
    assert.equal(bad.code, 'unknown_provider');
  });

  test('a method an action does not take is a 405 naming the allowed ones', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/responses/${STORED_ID}`, { method: 'PUT', headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, DELETE');
    assert.equal(((await res.json()) as any).error.code, 'method_not_allowed');
  });
});

describe('errors in OpenAI’s shape', () => {
  test('the provider’s 429 passes through with its Retry-After', async () => {
    const err = await client().responses.create({ model: 'error-429', input: 'hi' }, { headers: {} }).catch((e: unknown) => e);
    // error-429 is not an OpenAI model name: it needs its provider.
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.code, 'missing_provider');
    const limited = await client('/ai').responses.create({ model: 'openai/error-429', input: 'hi' }).catch((e: unknown) => e);
    assert.ok(limited instanceof OpenAI.RateLimitError);
    assert.equal(limited.headers?.get('retry-after'), '1');
    assert.equal((limited.error as any).type, 'tokens', "OpenAI's body as it sent it");
  });

  test('a bad body names the member; a bad key is a 401', async () => {
    const res = await post('/v1/responses', JSON.stringify({ model: 'gpt-4.1-nano', input: 42 }));
    assert.equal(res.status, 400);
    assert.deepEqual(((await res.json()) as any).error, { message: '"input" must be a string or an array of input items', type: 'invalid_request_error', param: 'input', code: 'invalid_type' });
    const item = await post('/v1/responses', JSON.stringify({ model: 'gpt-4.1-nano', input: [{ type: 'function_call', name: 'f' }] }));
    assert.equal(((await item.json()) as any).error.param, 'input[0].call_id');
    const err = await client('/v1', { apiKey: 'sk-svc-wrong' }).responses.create({ model: 'gpt-4.1-nano', input: 'hi' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.code, 'invalid_api_key');
  });

  test('a stream the provider cuts mid-way ends with the Responses API’s error event; the client raises it', async () => {
    const res = await post('/ai/responses', JSON.stringify({ model: 'openai/reset-mid-stream', input: 'hi', stream: true }));
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.startsWith(fixture('providers/openai/responses-stream.sse').toString('utf8').slice(0, 200)), 'the events before the cut are OpenAI’s');
    const last = text.trimEnd().split('\n\n').at(-1)!;
    assert.match(last, /^event: error\ndata: /);
    const data = JSON.parse(last.slice(last.indexOf('data: ') + 6));
    assert.deepEqual(data, { type: 'error', code: 'upstream_disconnected', message: 'provider connection lost mid-response', param: null });
    const err = await client('/ai').responses.stream({ model: 'openai/reset-mid-stream', input: 'hi' }).finalResponse().then(
      () => null,
      (e: unknown) => e,
    );
    // The SDK rejects with the error event it read (as the API reference types it), not a response.
    assert.deepEqual(err, { ...data });
  });
});
