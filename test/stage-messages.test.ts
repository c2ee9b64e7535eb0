/**
 * The Messages endpoint kinds through the stages, without a server: routing of /v1/messages,
 * /ai/v1/messages, router tails and count_tokens; the service key in `x-api-key` or `Svc-Auth`;
 * validation; the provider of a bare `claude-…` model; bring-your-own-key; the passthrough body and
 * the Anthropic headers sent on; the token-limit handlers offered; the gateway's own token count;
 * errors in Anthropic's shape; the log record's and the recorder's Messages fields.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { hashApiKey } from '../shared/apikey.ts';
import { countTokens } from '../proxy/endpoints/count-tokens.ts';
import { applyChatViewEdits, messagesChatView } from '../proxy/endpoints/messages-chat-view.ts';
import { messages } from '../proxy/endpoints/messages.ts';
import { GatewayError } from '../proxy/errors.ts';
import { buildLogRecordHead } from '../proxy/observers/log-record.ts';
import { recordFromHead } from '../shared/record-head.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { fail } from '../proxy/pipeline/fail.ts';
import { SUSPEND } from '../proxy/pipeline/pipeline.ts';
import { authenticate } from '../proxy/stages/authenticate.ts';
import { chooseProvider } from '../proxy/stages/choose-provider.ts';
import { countTokensLocally } from '../proxy/stages/count-tokens.ts';
import { route } from '../proxy/stages/route.ts';
import { tokenLimit } from '../proxy/stages/token-limit.ts';
import { translate } from '../proxy/stages/translate.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

/** The record object of the positional head the log-record observer queues. */
const buildLogRecord = (...args: Parameters<typeof buildLogRecordHead>) => recordFromHead(buildLogRecordHead(...args));

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));

const KEY = 'sk-svc-good-key-0123456789';
const entry = { hash: hashApiKey(KEY), keyId: 'key-1', organizationId: 'org-1' };
const gw = makeRuntime({
  doc: {
    svc: { features: 'observability' },
    routers: {
      r: { 'load-balance': { chat: { strategy: 'latency', providers: ['anthropic', 'openai'] } } },
    },
  },
  controlPlane: fakeControlPlane({ keys: { [entry.hash]: entry } }),
});
// No ANTHROPIC_API_KEY: only a client's own credential can reach Anthropic.
const keyless = makeRuntime({ env: { OPENAI_API_KEY: 'sk-test' } });
after(async () => {
  await closeRuntime(gw);
  await closeRuntime(keyless);
});

const refusal = (status: number, code: string) => (e: unknown) => e instanceof GatewayError && e.status === status && e.code === code;
const hi = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

/** route → validate → choose-provider (→ count-tokens) on `runtime`. */
function chosen(spec: RequestSpec, runtime = gw) {
  const ctx = makeContext(runtime, { path: '/v1/messages', ...spec });
  route(ctx);
  validate(ctx);
  tokenLimit(ctx);
  chooseProvider(ctx);
  return ctx;
}

/** Through translate (synchronous for Anthropic and the OpenAI-compatible providers). */
function translated(spec: RequestSpec, runtime = gw) {
  const ctx = chosen(spec, runtime);
  assert.equal(translate(ctx), undefined);
  return ctx;
}

test('routing: /v1/messages, /ai/v1/messages, router tails, count_tokens', () => {
  for (const [path, kind, label] of [
    ['/v1/messages', 'messages', '/v1/messages'],
    ['/ai/v1/messages', 'messages', '/ai/v1/messages'],
    ['/v1/messages/count_tokens', 'count_tokens', '/v1/messages/count_tokens'],
    ['/ai/v1/messages/count_tokens', 'count_tokens', '/ai/v1/messages/count_tokens'],
    ['/router/r/v1/messages', 'messages', 'router:messages'],
    ['/router/r/v1/messages/count_tokens', 'count_tokens', 'router:count_tokens'],
  ] as const) {
    const ctx = makeContext(gw, { path });
    route(ctx);
    assert.equal(ctx.kind.name, kind, path);
    assert.equal(ctx.routeLabel, label, path);
  }
});

test("unknown paths an Anthropic client calls, and unknown routers on a Messages tail, answer in Anthropic's shape", () => {
  for (const spec of [{ path: '/v1/messages/batches' }, { path: '/v1/complete', headers: { 'anthropic-version': '2023-06-01' } }, { path: '/router/nope/v1/messages' }]) {
    const ctx = makeContext(gw, spec);
    assert.throws(() => route(ctx), (e: unknown) => e instanceof GatewayError && e.status === 404);
    assert.equal(ctx.kind, messages, spec.path);
  }
  const chat = makeContext(gw, { path: '/v1/completions' });
  assert.throws(() => route(chat));
  assert.equal(chat.kind.name, 'chat', 'an OpenAI client keeps OpenAI’s shape');
});

test("errors of Messages requests are Anthropic's: type by status, Retry-After kept", () => {
  const cases: Array<[GatewayError, string]> = [
    [new GatewayError(400, 'bad', 'invalid_request_error', 'invalid_json'), 'invalid_request_error'],
    [new GatewayError(401, 'no key', 'invalid_request_error', 'invalid_api_key'), 'authentication_error'],
    [new GatewayError(404, 'gone', 'invalid_request_error', 'not_found'), 'not_found_error'],
    [new GatewayError(408, 'stalled', 'invalid_request_error', 'request_timeout'), 'timeout_error'],
    [new GatewayError(413, 'big', 'invalid_request_error', 'request_too_large'), 'request_too_large'],
    [new GatewayError(429, 'slow down', 'rate_limit_exceeded', 'rate_limit_exceeded', null, { 'retry-after': '7' }), 'rate_limit_error'],
    [new GatewayError(502, 'down', 'server_error', 'upstream_unreachable'), 'api_error'],
    [new GatewayError(503, 'no key', 'server_error', 'provider_key_missing'), 'api_error'],
    [new GatewayError(504, 'silent', 'server_error', 'upstream_timeout'), 'timeout_error'],
  ];
  for (const [err, type] of cases) {
    const ctx = makeContext(gw, { path: '/v1/messages' });
    route(ctx);
    fail(ctx, err);
    assert.equal(ctx.res.statusCode, err.status);
    assert.deepEqual(ctx.res.json(), { type: 'error', error: { type, message: err.message } }, err.code!);
    if (err.status === 429) assert.equal(ctx.res.headers['retry-after'], '7');
  }
});

test('the service key: x-api-key, Authorization: Bearer, or Svc-Auth (which then wins)', () => {
  const variants: Array<Record<string, string>> = [{ 'x-api-key': KEY }, { Authorization: `Bearer ${KEY}` }, { 'Svc-Auth': `Bearer ${KEY}`, 'x-api-key': 'sk-ant-user', Authorization: 'Bearer sk-ant-oat-user' }];
  for (const headers of variants) {
    const ctx = makeContext(gw, { path: '/v1/messages', headers });
    authenticate(ctx);
    assert.equal(ctx.key, entry, JSON.stringify(headers));
  }
  // With Svc-Auth the other headers are the provider's: a good key there does not authenticate.
  assert.throws(() => authenticate(makeContext(gw, { headers: { 'Svc-Auth': 'Bearer sk-svc-wrong', 'x-api-key': KEY } })), refusal(401, 'invalid_api_key'));
  assert.throws(() => authenticate(makeContext(gw, { headers: { 'Svc-Auth': KEY } })), refusal(401, 'invalid_api_key'), 'Svc-Auth takes the Bearer form');
});

test('validation names the member; managed prompts are refused; count_tokens needs no max_tokens', () => {
  const invalid = (body: unknown, param: string, path = '/v1/messages') => {
    const ctx = makeContext(gw, { path, body });
    route(ctx);
    assert.throws(() => validate(ctx), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param, `${param}: ${JSON.stringify(body)}`);
  };
  invalid({ max_tokens: 1, messages: [] }, 'model');
  invalid({ model: 'claude-x', messages: [] }, 'max_tokens');
  invalid({ model: 'claude-x', max_tokens: 0, messages: [] }, 'max_tokens');
  invalid({ model: 'claude-x', max_tokens: 1 }, 'messages');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [{ role: 'user', content: 3 }] }, 'messages[0].content');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] }, 'messages[0].content[0].text');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [], system: 5 }, 'system');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [], tools: [{ description: 'no name' }] }, 'tools[0]');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [], thinking: 'on' }, 'thinking');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [], stream: 'yes' }, 'stream');
  invalid({ model: 'claude-x', max_tokens: 1, messages: [], prompt_id: 'p1' }, 'prompt_id');
  invalid({ model: 'claude-x', messages: [], stream: true }, 'stream', '/v1/messages/count_tokens');
  // Claude Code's request, with its mid-conversation system message and everything else, is valid.
  const ctx = makeContext(gw, { path: '/v1/messages', body: fixture('clients/claude-code-2.1.328.request.json') });
  route(ctx);
  validate(ctx);
  const count = makeContext(gw, { path: '/v1/messages/count_tokens', body: { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] } });
  route(count);
  validate(count);
});

test('a bare claude- model goes to anthropic; another bare model needs its prefix; routers choose as for chat', () => {
  const bare = chosen({ body: hi });
  assert.equal(bare.provider, 'anthropic');
  assert.equal(bare.model, 'claude-sonnet-4-5');
  assert.equal(bare.binding!.passthrough, true);
  const prefixed = chosen({ path: '/ai/v1/messages', body: { ...hi, model: 'openai/gpt-4o' } });
  assert.equal(prefixed.provider, 'openai');
  assert.equal(prefixed.binding!.wireFormat, 'openai-chat');
  assert.throws(() => chosen({ body: { ...hi, model: 'gpt-4o' } }), refusal(400, 'missing_provider'));
  const routed = chosen({ path: '/router/r/v1/messages', body: { ...hi, model: 'openai/gpt-4o' } });
  assert.equal(routed.provider, 'openai');
  assert.equal(routed.pinned, true);
});

test('bring your own key: Svc-Auth makes the client credential the one sent; without one it is a 401', () => {
  // The gateway holds no Anthropic key: refused with it, sent with the client's own.
  assert.throws(() => chosen({ body: hi }, keyless), refusal(503, 'provider_key_missing'));
  const own = translated({ body: hi, headers: { 'Svc-Auth': 'Bearer whatever', 'x-api-key': 'sk-ant-user-key' } }, keyless);
  assert.equal(own.upstream!.headers['x-api-key'], 'sk-ant-user-key');
  assert.equal(own.upstream!.headers.authorization, undefined);
  const oauth = translated({ body: hi, headers: { 'Svc-Auth': 'Bearer whatever', Authorization: 'Bearer sk-ant-oat01-user' } }, keyless);
  assert.equal(oauth.upstream!.headers.authorization, 'Bearer sk-ant-oat01-user');
  assert.equal(oauth.upstream!.headers['x-api-key'], undefined);
  assert.throws(() => chosen({ body: hi, headers: { 'Svc-Auth': 'Bearer whatever' } }, keyless), refusal(401, 'missing_provider_credential'));
  // OpenAI-compatible: the client's Authorization as sent, or its x-api-key as a Bearer token.
  const openai = translated({ body: { ...hi, model: 'openai/gpt-4o' }, headers: { 'Svc-Auth': 'Bearer k', 'x-api-key': 'sk-user-openai' } });
  assert.equal(openai.upstream!.headers.authorization, 'Bearer sk-user-openai');
  // Without Svc-Auth the client's credential headers never leave.
  const plain = translated({ body: hi, headers: { 'x-api-key': KEY } });
  assert.equal(plain.upstream!.headers['x-api-key'], 'sk-ant-test');
});

test("passthrough: the client's bytes as sent for a bare model, spliced for anthropic/<model>; anthropic-* and x-stainless-* go along", () => {
  const raw = fixture('clients/claude-code-2.1.328.request.json');
  const headers = JSON.parse(fixture('clients/claude-code-2.1.328.request-headers.json').toString('utf8')).headers as Record<string, string>;
  const ctx = translated({ path: '/v1/messages', body: raw, headers: { ...headers, 'X-Stainless-Extra': 'case kept apart', 'Anthropic-Beta': 'second-beta' } });
  assert.equal(ctx.upstream!.body, raw, 'the very bytes the client sent');
  assert.equal(ctx.upstream!.url.href, 'https://api.anthropic.com/v1/messages');
  const sent = ctx.upstream!.headers;
  assert.equal(sent['anthropic-beta'], `${headers['anthropic-beta']}, second-beta`, 'every anthropic-beta value, in order');
  assert.equal(sent['anthropic-version'], '2023-06-01');
  assert.equal(sent['anthropic-dangerous-direct-browser-access'], 'true');
  assert.equal(sent['x-stainless-package-version'], '0.128.0');
  assert.equal(sent['x-stainless-extra'], 'case kept apart');
  assert.equal(sent['x-api-key'], 'sk-ant-test', "the gateway's key, not the client's");
  for (const name of ['x-claude-code-session-id', 'user-agent', 'x-app', 'host']) assert.equal(sent[name], undefined, name);
  const spliced = translated({ path: '/ai/v1/messages', body: '{"model":"anthropic/claude-x","max_tokens":5,"messages":[]}' });
  assert.equal(spliced.upstream!.body.toString(), '{"model":"claude-x","max_tokens":5,"messages":[]}');
  // Chat clients' headers are not forwarded to Anthropic.
  const chat = makeContext(gw, { path: '/ai/chat/completions', body: { model: 'anthropic/claude-x', messages: [{ role: 'user', content: 'hi' }] }, headers: { 'anthropic-beta': 'x' } });
  route(chat);
  validate(chat);
  chooseProvider(chat);
  translate(chat);
  assert.equal(chat.upstream!.headers['anthropic-beta'], undefined);
});

test('token limits on Messages: fallback estimates the Messages body; middle-out is refused', () => {
  const big = { model: 'openai/gpt-4o,anthropic/claude-sonnet-4-5', max_tokens: 16_000, messages: [{ role: 'user', content: 'lorem ipsum dolor '.repeat(40_000) }] };
  const ctx = chosen({ path: '/ai/v1/messages', body: big, headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } });
  assert.equal(ctx.provider, 'anthropic', 'over gpt-4o’s window: the fallback');
  assert.equal(ctx.body!.model, 'anthropic/claude-sonnet-4-5');
  assert.ok(ctx.body!.messages === ctx.clientBody!.messages, 'the Messages body itself, not its chat view');
  assert.ok(ctx.tokenLimit!.tokensBefore! > 100_000);
  const small = chosen({ path: '/ai/v1/messages', body: { ...big, messages: hi.messages }, headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } });
  assert.equal(small.provider, 'openai');
  assert.throws(() => chosen({ body: hi, headers: { 'Svc-Token-Limit-Exception-Handler': 'middle-out' } }), refusal(400, 'unsupported_token_limit_handler'));
});

test("truncate on Messages: the cuts land in the Messages body's text blocks; thinking, tool calls and small bodies are untouched", () => {
  const long = (word: string) => `${word} `.repeat(60_000);
  const body = {
    model: 'openai/gpt-4o',
    max_tokens: 1000,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: long('alpha') }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: long('ponder'), signature: 'sig' },
          { type: 'tool_use', id: 'tu1', name: 'read', input: { path: 'x' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: long('beta') }] }, { type: 'text', text: 'Now summarize.' }] },
    ],
  };
  const ctx = chosen({ path: '/ai/v1/messages', body, headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
  const sent = ctx.body as any;
  const client = ctx.clientBody as any;
  assert.ok(ctx.tokenLimit!.tokensAfter! <= ctx.tokenLimit!.allowedInput!, 'it fits');
  assert.ok(sent.messages[0].content[0].text.length < client.messages[0].content[0].text.length, 'the user text was cut');
  assert.match(sent.messages[0].content[0].text, /… \[truncated\]$/);
  assert.ok(sent.messages[2].content[0].content[0].text.length < client.messages[2].content[0].content[0].text.length, 'the tool result was cut');
  assert.equal(sent.messages[1].content[0].thinking, client.messages[1].content[0].thinking, 'signed thinking is never cut');
  assert.deepEqual(sent.messages[1].content[1], client.messages[1].content[1]);
  assert.deepEqual(sent.system, client.system);
  assert.equal(sent.messages[2].content[1].text, 'Now summarize.');
  assert.equal(sent.messages[2].content[0].tool_use_id, 'tu1');
  assert.equal(client.messages[0].content[0].text, long('alpha'), "the client's body is not mutated");
  assert.equal(ctx.model, 'gpt-4o');
  // Within the limit: the very body the client sent (its bytes can go as they are).
  const small = chosen({ path: '/ai/v1/messages', body: { ...body, messages: [{ role: 'user', content: 'hi' }] }, headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
  assert.equal(small.body, small.clientBody);
  assert.equal(small.tokenLimit!.skipped, 'within-limit');
});

test("count_tokens: Anthropic's own endpoint, else the gateway's estimate with the provider's tokenizer", () => {
  const body = { model: 'openai/gpt-4o', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there, how are you today?' }] };
  const anthropicCount = translated({ path: '/v1/messages/count_tokens', body: { ...body, model: 'claude-opus-5' } });
  assert.equal(anthropicCount.upstream!.url.href, 'https://api.anthropic.com/v1/messages/count_tokens');
  assert.equal(countTokensLocally(anthropicCount), undefined, 'Anthropic counts');
  const ctx = chosen({ path: '/v1/messages/count_tokens', body });
  assert.equal(ctx.binding, null);
  assert.equal(countTokensLocally(ctx), SUSPEND);
  assert.equal(ctx.res.statusCode, 200);
  assert.equal(ctx.res.headers['svc-token-count'], 'estimate');
  const { input_tokens } = ctx.res.json() as { input_tokens: number };
  assert.ok(input_tokens >= 15 && input_tokens <= 30, String(input_tokens));
  // A longer conversation counts more.
  const longer = chosen({ path: '/v1/messages/count_tokens', body: { ...body, messages: [...body.messages, { role: 'assistant', content: 'Fine, thanks. '.repeat(20) }, { role: 'user', content: 'Good.' }] } });
  countTokensLocally(longer);
  assert.ok((longer.res.json() as { input_tokens: number }).input_tokens > input_tokens + 40);
  assert.equal(countTokens.logged, false);
});

test('the chat view keeps every text where the estimator counts it, and knows where each came from', () => {
  const body = {
    model: 'claude-x',
    max_tokens: 7,
    system: [{ type: 'text', text: 'S1' }, { type: 'text', text: 'S2' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Q' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'T', signature: 'sig' }, { type: 'tool_use', id: 'tu1', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'R' }] }, { type: 'text', text: 'Go' }] },
      { role: 'user', content: 'plain' },
    ],
    tools: [{ name: 'f', description: 'd', input_schema: { type: 'object' } }],
  };
  const view = messagesChatView(body);
  assert.equal(view.max_tokens, 7);
  assert.deepEqual(view.messages, [
    { role: 'system', content: [{ type: 'text', text: 'S1' }, { type: 'text', text: 'S2' }] },
    { role: 'user', content: [{ type: 'text', text: 'Q' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,' } }] },
    { role: 'assistant', content: [{ type: 'input_text', text: 'T' }], tool_calls: [{ id: 'tu1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    { role: 'tool', tool_call_id: 'tu1', content: [{ type: 'text', text: 'R' }] },
    { role: 'user', content: [{ type: 'text', text: 'Go' }] },
    { role: 'user', content: 'plain' },
  ]);
  assert.deepEqual(view.tools, [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } }]);
  // Every text edited in the view lands in its own block; nothing else changes.
  const rewritten = structuredClone(view);
  (rewritten.messages[0]!.content as any)[1].text = 's2';
  (rewritten.messages[1]!.content as any)[0].text = 'q';
  (rewritten.messages[3]!.content as any)[0].text = 'r';
  (rewritten.messages[4]!.content as any)[0].text = 'go';
  rewritten.messages[5]!.content = 'p';
  const back = applyChatViewEdits(body, view, rewritten);
  const expected = structuredClone(body) as any;
  expected.system[1].text = 's2';
  expected.messages[0].content[0].text = 'q';
  expected.messages[2].content[0].content[0].text = 'r';
  expected.messages[2].content[1].text = 'go';
  expected.messages[3].content = 'p';
  assert.deepEqual(back, expected);
  assert.equal(back.messages[1], body.messages[1], 'untouched turns are shared, not copied');
  assert.equal(body.system[1]!.text, 'S2', 'the body is not mutated');
});

test('the log record of a Messages request: endpoint, session, wire format, removed members', () => {
  const ctx = translated({
    path: '/v1/messages',
    body: { ...hi, model: 'openai/gpt-4o', context_management: { edits: [] } },
    headers: { 'x-api-key': KEY, 'x-claude-code-session-id': 'sess-123' },
  });
  authenticate(ctx);
  const rec = buildLogRecord(ctx, null);
  assert.equal(rec.endpoint, 'messages');
  assert.equal(rec.sessionId, 'sess-123');
  assert.equal(rec.wireFormat, 'openai-chat');
  assert.deepEqual(rec.removedMembers, ['context_management']);
  const pass = translated({ body: hi, headers: { 'x-api-key': KEY } });
  authenticate(pass);
  const passRec = buildLogRecord(pass, null);
  assert.equal(passRec.wireFormat, 'anthropic-messages');
  assert.equal(passRec.removedMembers, null);
  assert.equal(passRec.sessionId, null);
});

test('the recorder folds an Anthropic stream into one message; usage of message_start and message_delta merged', () => {
  const rec = new ResponseRecorder(true, 1 << 20, messages);
  const sse = fixture('providers/anthropic/message-stream-recorded.sse');
  for (let i = 0; i < sse.length; i += 7) rec.push(sse.subarray(i, i + 7));
  const out = rec.finish(200);
  const body = out.body as Record<string, any>;
  assert.equal(body.type, 'message');
  assert.equal(body.id, 'msg_018E1hg8GoVTGEKQY3ovMcSJ');
  assert.deepEqual(body.content, [{ type: 'text', text: '2' }]);
  assert.equal(body.stop_reason, 'end_turn');
  assert.equal((out.usage as any).input_tokens, 20);
  assert.equal((out.usage as any).output_tokens, 5);
  assert.equal((out.usage as any).service_tier, 'standard', 'what only message_start said is kept');

  const tools = new ResponseRecorder(true, 1 << 20, messages);
  tools.push(fixture('providers/anthropic/message-stream-tool-use.sse'));
  const toolBody = tools.finish(200).body as Record<string, any>;
  const use = toolBody.content.find((b: { type: string }) => b.type === 'tool_use');
  assert.equal(use.name, 'get_weather');
  assert.equal(typeof use.input, 'object', 'input_json_delta fragments parsed into input');
  assert.equal(toolBody.stop_reason, 'tool_use');

  const failed = new ResponseRecorder(true, 1 << 20, messages);
  failed.push(fixture('providers/anthropic/error-stream-event.sse'));
  assert.match(failed.finish(200).error!, /overloaded_error/);
});
