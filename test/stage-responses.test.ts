/**
 * The Responses endpoint kinds through the stages, without a server: routing of /v1/responses,
 * /ai/responses, router tails, input_tokens and the stored-response paths; validation naming the
 * member; the provider of a bare OpenAI model; previous_response_id against the response store
 * (rebuilt, passed on, or OpenAI's 404); the stored-response stage answering from the store (an
 * organization's own responses only) or choosing the provider; the token-limit handlers offered; the
 * log record's session id of Codex.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { sessionIdOf } from '../proxy/observers/log-record.ts';
import { SUSPEND } from '../proxy/pipeline/pipeline.ts';
import { MemoryResponseStore, RedisResponseStore } from '../proxy/response-store/index.ts';
import { chooseProvider } from '../proxy/stages/choose-provider.ts';
import { previousResponseProvider, responsesHistory } from '../proxy/stages/responses-history.ts';
import { route } from '../proxy/stages/route.ts';
import { storedResponse } from '../proxy/stages/stored-response.ts';
import { tokenLimit } from '../proxy/stages/token-limit.ts';
import { translate } from '../proxy/stages/translate.ts';
import { withoutMadeReasoning } from '../proxy/stages/minted-reasoning.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

const gw = makeRuntime({
  doc: { routers: { r: { 'load-balance': { chat: { strategy: 'latency', providers: ['groq', 'openai'] } } } } },
  env: { OPENAI_API_KEY: 'sk-test', GROQ_API_KEY: 'gsk-test' },
});
after(async () => {
  await closeRuntime(gw);
});

const refusal = (status: number, code: string, param?: string) => (e: unknown) =>
  e instanceof GatewayError && e.status === status && e.code === code && (param === undefined || e.param === param);

/** route → validate → token-limit → choose-provider of `spec`. */
function chosen(spec: RequestSpec) {
  const ctx = makeContext(gw, { path: '/v1/responses', ...spec });
  route(ctx);
  validate(ctx);
  tokenLimit(ctx);
  chooseProvider(ctx);
  return ctx;
}

describe('routing', () => {
  test('the create, count and stored-response paths, with {id} in the metric label', () => {
    const cases: Array<[string, string, string]> = [
      ['/v1/responses', 'responses', '/v1/responses'],
      ['/ai/responses', 'responses', '/ai/responses'],
      ['/router/r/responses', 'responses', 'router:responses'],
      ['/v1/responses/input_tokens', 'input_tokens', '/v1/responses/input_tokens'],
      ['/router/r/responses/input_tokens', 'input_tokens', 'router:input_tokens'],
      ['/v1/responses/resp_abc', 'stored_response', '/v1/responses/{id}'],
      ['/ai/responses/resp_abc/input_items', 'stored_response', '/ai/responses/{id}/input_items'],
      ['/router/r/responses/resp_abc/cancel', 'stored_response', 'router:responses/{id}/cancel'],
    ];
    for (const [path, kind, label] of cases) {
      const ctx = makeContext(gw, { path });
      route(ctx);
      assert.equal(ctx.kind.name, kind, path);
      assert.equal(ctx.routeLabel, label, path);
    }
  });

  test('a path that names no stored response is a 404', () => {
    for (const path of ['/v1/responses/resp_1/other', '/v1/responses/bad%20id', '/v1/responses/', '/router/nope/responses/resp_1']) {
      const ctx = makeContext(gw, { path });
      assert.throws(() => route(ctx), (e: unknown) => e instanceof GatewayError && e.status === 404, path);
    }
  });
});

describe('validation and the provider', () => {
  test('a bad member is a 400 naming it', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ input: 'x' }, 'model', 'missing_model'],
      [{ model: 'gpt-4.1', input: { text: 'x' } }, 'input', 'invalid_type'],
      [{ model: 'gpt-4.1', input: ['x'] }, 'input[0]', 'invalid_input'],
      [{ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text', 'invalid_input'],
      [{ model: 'gpt-4.1', input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id', 'invalid_input'],
      [{ model: 'gpt-4.1', tools: [{ type: 'function' }] }, 'tools[0].name', 'invalid_type'],
      [{ model: 'gpt-4.1', tools: [{ type: 'namespace', name: 'n' }] }, 'tools[0].tools', 'invalid_type'],
      [{ model: 'gpt-4.1', max_output_tokens: 0 }, 'max_output_tokens', 'invalid_type'],
      [{ model: 'gpt-4.1', store: 'yes' }, 'store', 'invalid_type'],
      [{ model: 'gpt-4.1', previous_response_id: 7 }, 'previous_response_id', 'invalid_type'],
      [{ model: 'gpt-4.1', prompt_id: 'p1' }, 'prompt_id', 'unsupported_member'],
    ];
    for (const [body, param, code] of cases) {
      const ctx = makeContext(gw, { path: '/v1/responses', body });
      route(ctx);
      assert.throws(() => validate(ctx), refusal(400, code, param), JSON.stringify(body));
    }
    const count = makeContext(gw, { path: '/v1/responses/input_tokens', body: { model: 'gpt-4.1', input: 'x', stream: true } });
    route(count);
    assert.throws(() => validate(count), refusal(400, 'invalid_type', 'stream'));
  });

  test('a bare OpenAI model goes to openai; another bare model needs its provider', () => {
    for (const model of ['gpt-4.1-nano', 'o3-mini', 'o4-mini', 'codex-mini-latest', 'gpt-5.1-codex']) {
      const ctx = chosen({ body: { model, input: 'hi' } });
      assert.equal(ctx.provider, 'openai', model);
      assert.equal(ctx.model, model);
      assert.equal(ctx.binding!.passthrough, true);
    }
    assert.throws(() => chosen({ body: { model: 'llama-3.3-70b', input: 'hi' } }), refusal(400, 'missing_provider'));
    const groq = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', input: 'hi' } });
    assert.equal(groq.binding!.wireFormat, 'openai-chat');
    // Anthropic is bound (through chat to Messages) but this runtime holds no key for it.
    assert.throws(() => chosen({ path: '/ai/responses', body: { model: 'anthropic/claude-sonnet-4-5', input: 'hi' } }), refusal(503, 'provider_key_missing'));
  });

  test('only the fallback token-limit handler applies', () => {
    const spec = (h: string): RequestSpec => ({ body: { model: 'gpt-4o-mini,gpt-4.1-nano', input: 'hi' }, headers: { 'Svc-Token-Limit-Exception-Handler': h } });
    const ctx = chosen(spec('fallback'));
    assert.equal(ctx.model, 'gpt-4o-mini');
    assert.equal(ctx.tokenLimit!.handler, 'fallback');
    for (const h of ['truncate', 'middle-out']) assert.throws(() => chosen(spec(h)), refusal(400, 'unsupported_token_limit_handler'), h);
  });
});

describe('previous_response_id', () => {
  const store = gw.responseStore as MemoryResponseStore;
  const made = (org: string) => ({
    kind: 'made' as const,
    org,
    provider: 'groq',
    response: { id: 'resp_m', object: 'response', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris.' }] }] },
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Capital of France?' }] }],
  });

  test('a response the gateway made: its conversation, its answer, then the new input; the member removed', () => {
    store.put('resp_m', made(''));
    const ctx = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', previous_response_id: 'resp_m', input: 'And Germany?', instructions: 'new' } });
    assert.equal(responsesHistory(ctx), undefined, 'synchronous with the in-memory store');
    const body = ctx.body as Record<string, any>;
    assert.equal(body.previous_response_id, undefined);
    assert.equal(body.instructions, 'new');
    assert.deepEqual(
      body.input.map((i: any) => [i.role, i.content[0].text]),
      [
        ['user', 'Capital of France?'],
        ['assistant', 'Paris.'],
        ['user', 'And Germany?'],
      ],
    );
    assert.notEqual(ctx.body, ctx.clientBody, "the client's body is logged as sent");
  });

  /** responses-history, then (once the provider is chosen) previous-response-provider. */
  const history = (ctx: ReturnType<typeof chosen>) => {
    responsesHistory(ctx);
    previousResponseProvider(ctx);
  };

  test('another organization’s response, or an unknown id on a translated provider: OpenAI’s 404', () => {
    store.put('resp_foreign', made('org-2'));
    store.put('resp_relayed', { kind: 'relayed', org: '', provider: 'openai' });
    for (const id of ['resp_foreign', 'resp_nowhere', 'resp_relayed']) {
      const ctx = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', previous_response_id: id, input: 'x' } });
      assert.throws(() => history(ctx), refusal(404, 'previous_response_not_found', 'previous_response_id'), id);
    }
    const relayed = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', previous_response_id: 'resp_relayed', input: 'x' } });
    assert.throws(() => history(relayed), /It is kept by openai/);
    const foreignOnOpenAI = chosen({ body: { model: 'gpt-4.1', previous_response_id: 'resp_foreign', input: 'x' } });
    assert.throws(() => responsesHistory(foreignOnOpenAI), refusal(404, 'previous_response_not_found'), "not even through the gateway's OpenAI key, before a provider is chosen");
  });

  test('to OpenAI, an id it may know goes on untouched', () => {
    for (const id of ['resp_nowhere', 'resp_relayed']) {
      const ctx = chosen({ body: { model: 'gpt-4.1', previous_response_id: id, input: 'x' } });
      history(ctx);
      assert.equal(ctx.body, ctx.clientBody, id);
    }
  });

  test('the fallback handler estimates the whole conversation: a long stored one moves the request to the larger model', () => {
    const long = 'hello '.repeat(150_000);
    store.put('resp_long', { kind: 'made', org: '', provider: 'groq', response: { id: 'resp_long', output: [] }, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: long }] }] });
    const spec = (previous: boolean): RequestSpec => ({
      path: '/v1/responses',
      body: { model: 'gpt-4o-mini,gpt-4.1-nano', input: 'And then?', ...(previous ? { previous_response_id: 'resp_long' } : {}) },
      headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' },
    });
    for (const previous of [false, true]) {
      const ctx = makeContext(gw, spec(previous));
      route(ctx);
      validate(ctx);
      responsesHistory(ctx);
      tokenLimit(ctx);
      chooseProvider(ctx);
      assert.equal(ctx.model, previous ? 'gpt-4.1-nano' : 'gpt-4o-mini', previous ? 'the stored 150k tokens count' : 'a short request keeps the first model');
    }
  });
});

describe('item_reference to an item the gateway made', () => {
  const store = gw.responseStore as MemoryResponseStore;
  const hex = '0123456789abcdef0123456789abcdef';
  const answer = { id: `msg_${hex}_0`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Paris.' }] };
  const ref = (id: string) => ({ type: 'item_reference', id });
  const user = (text: string) => ({ role: 'user', content: text });

  test('replaced by the item itself (as the AI SDK sends its earlier answers with store on); other references kept', () => {
    store.put(`resp_${hex}`, { kind: 'made', org: '', provider: 'groq', response: { id: `resp_${hex}`, output: [answer] }, input: [] });
    const input = [user('Capital of France?'), ref(`msg_${hex}_0`), ref('msg_openai_kept'), ref(`msg_${hex}_7`), user('And Germany?')];
    const ctx = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', input } });
    assert.equal(responsesHistory(ctx), undefined, 'synchronous with the in-memory store');
    assert.deepEqual((ctx.body as Record<string, any>).input, [user('Capital of France?'), answer, ref('msg_openai_kept'), ref(`msg_${hex}_7`), user('And Germany?')]);
    assert.deepEqual((ctx.clientBody as Record<string, any>).input, input, "the client's body is logged as sent");
  });

  test("another organization's item stays a reference (the translator refuses it); a request without references passes untouched", () => {
    const other = 'fedcba9876543210fedcba9876543210';
    store.put(`resp_${other}`, { kind: 'made', org: 'org-2', provider: 'groq', response: { id: `resp_${other}`, output: [{ ...answer, id: `msg_${other}_0` }] }, input: [] });
    const ctx = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', input: [ref(`msg_${other}_0`)] } });
    responsesHistory(ctx);
    assert.deepEqual((ctx.body as Record<string, any>).input, [ref(`msg_${other}_0`)]);
    const plain = chosen({ path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', input: [user('hi')] } });
    responsesHistory(plain);
    assert.equal(plain.body, plain.clientBody);
  });
});

describe('reasoning the gateway made, on the way to OpenAI itself (translate)', () => {
  const store = gw.responseStore as MemoryResponseStore;
  const hex = 'abcdefabcdefabcdefabcdefabcdef01';
  const thought = { id: `rs_${hex}_0`, type: 'reasoning', summary: [{ type: 'summary_text', text: 'Anthropic thought' }] };
  const answer = { id: `msg_${hex}_1`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Paris.' }] };
  const openaiItem = { id: 'rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff', type: 'reasoning', summary: [], encrypted_content: 'gAAAAB==' };
  store.put(`resp_${hex}`, { kind: 'made', org: '', provider: 'anthropic', response: { id: `resp_${hex}`, output: [thought, answer] }, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Capital?' }] }] });
  const translated = (body: Record<string, unknown>) => {
    const ctx = chosen({ path: '/ai/responses', body });
    responsesHistory(ctx);
    previousResponseProvider(ctx);
    translate(ctx);
    return ctx;
  };

  test('from a conversation the gateway made, and from item references: removed and named; OpenAI’s own item kept', () => {
    const ctx = translated({ model: 'openai/gpt-4.1', previous_response_id: `resp_${hex}`, input: [openaiItem, { type: 'item_reference', id: `rs_${hex}_0` }, { role: 'user', content: 'Germany?' }] });
    assert.deepEqual(ctx.call!.removed, ['previous_response_id.input[1]', 'input[1]']);
    const sent = JSON.parse(ctx.upstream!.body.toString('utf8'));
    assert.deepEqual(sent.input.map((i: any) => i.id ?? i.role), ['user', `msg_${hex}_1`, openaiItem.id, 'user']);
    assert.equal((ctx.body as any).input.length, 6, 'the stage copy only: a retry on a translated provider still has them');
  });

  test('a translated provider gets them (its translator reads them); a body without them goes as its bytes', () => {
    const groq = translated({ model: 'groq/llama-3.3-70b-versatile', input: [thought, { role: 'user', content: 'more' }] });
    assert.equal(withoutMadeReasoning(groq, { ...(groq.body as any) }), null, 'its translator decides');
    const plain = translated({ model: 'openai/gpt-4.1', input: [openaiItem, { role: 'user', content: 'more' }] });
    assert.equal(plain.call!.removed, undefined);
    assert.equal(plain.upstream!.body.toString('utf8'), plain.rawBody!.toString('utf8').replace('openai/gpt-4.1', 'gpt-4.1'), "the client's bytes, the model spliced");
  });
});

test('previous_response_id with a store that cannot be read: 503 response_store_unavailable', async () => {
  const down = makeRuntime({ env: { GROQ_API_KEY: 'gsk-test' } });
  const store = new RedisResponseStore({ url: 'redis://127.0.0.1:1', timeoutMs: 200 }, null);
  Object.assign(down, { responseStore: store });
  try {
    const ctx = makeContext(down, { path: '/ai/responses', body: { model: 'groq/llama-3.3-70b-versatile', previous_response_id: 'resp_x', input: 'x' } });
    route(ctx);
    validate(ctx);
    chooseProvider(ctx);
    const pending = responsesHistory(ctx);
    assert.ok(pending instanceof Promise, 'asynchronous with Redis');
    await assert.rejects(pending, refusal(503, 'response_store_unavailable'));
  } finally {
    await store.close();
    await closeRuntime(down);
  }
});

describe('the stored-response stage', () => {
  const store = gw.responseStore as MemoryResponseStore;
  store.put('resp_own', {
    kind: 'made',
    org: '',
    provider: 'groq',
    response: { id: 'resp_own', object: 'response', status: 'completed', output: [] },
    input: [
      { type: 'message', role: 'user', content: 'first' },
      { type: 'message', role: 'user', content: 'second' },
    ],
  });
  store.put('resp_theirs', { kind: 'relayed', org: 'org-2', provider: 'openai' });

  /** Runs route and the stage for `method url` (a query after the path); the context, and what the stage threw. */
  function served(method: string, url: string, headers: Record<string, string> = {}) {
    const q = url.indexOf('?');
    const ctx = makeContext(gw, { path: q < 0 ? url : url.slice(0, q), method, headers });
    ctx.req.url = url;
    route(ctx);
    try {
      assert.equal(storedResponse(ctx), SUSPEND);
    } catch (err) {
      return { ctx, err };
    }
    return { ctx, err: null };
  }

  test('a made response, its items and its deletion, from the store', () => {
    const got = served('GET', '/v1/responses/resp_own').ctx;
    assert.equal(got.res.statusCode, 200);
    assert.equal(got.res.json().id, 'resp_own');
    assert.equal(got.res.headers['svc-provider'], 'groq');
    const items = served('GET', '/v1/responses/resp_own/input_items?order=asc&limit=1').ctx;
    assert.deepEqual(items.res.json(), {
      object: 'list',
      data: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }], id: 'msg_own0000' }],
      first_id: 'msg_own0000',
      last_id: 'msg_own0000',
      has_more: true,
    });
    const bad = served('GET', '/v1/responses/resp_own/input_items?limit=500').ctx;
    assert.equal(bad.res.statusCode, 400);
    assert.equal(bad.res.json().error.param, 'limit');
    assert.equal(served('POST', '/v1/responses/resp_own/cancel').ctx.res.statusCode, 400);
    const del = served('DELETE', '/v1/responses/resp_own').ctx;
    assert.deepEqual(del.res.json(), { id: 'resp_own', object: 'response', deleted: true });
    assert.equal(store.get('resp_own'), null);
  });

  test('another organization’s id is a 404; a wrong method a 405', () => {
    const theirs = served('GET', '/v1/responses/resp_theirs').ctx;
    assert.equal(theirs.res.statusCode, 404);
    assert.equal(theirs.res.json().error.code, 'response_not_found');
    assert.equal(theirs.upstream, null, 'nothing is sent');
    const { err } = served('POST', '/v1/responses/resp_own');
    assert.ok(refusal(405, 'method_not_allowed')(err));
    assert.equal((err as GatewayError).headers.allow, 'GET, DELETE');
  });

  test('an unknown id goes to openai, to the provider in Svc-Provider, or to a router’s member that keeps responses', () => {
    const plain = served('GET', '/v1/responses/resp_x?include[]=reasoning.encrypted_content').ctx;
    assert.equal(plain.provider, 'openai');
    assert.equal(plain.upstream!.method, 'GET');
    assert.equal(plain.upstream!.url.pathname, '/v1/responses/resp_x');
    assert.equal(plain.upstream!.url.search, '?include[]=reasoning.encrypted_content');
    assert.equal(plain.router, null, 'no retries elsewhere');
    const routed = served('DELETE', '/router/r/responses/resp_x').ctx;
    assert.equal(routed.provider, 'openai', "groq keeps no responses: the router's next member");
    assert.equal(routed.upstream!.method, 'DELETE');
    const named = served('GET', '/v1/responses/resp_x', { 'Svc-Provider': 'groq' }).ctx;
    assert.equal(named.res.statusCode, 400);
    assert.equal(named.res.json().error.code, 'unknown_provider');
  });
});

test('the log record’s session: Claude Code’s header, Codex’s session_id header, else its client_metadata', () => {
  const bySession = makeContext(gw, { headers: { session_id: 's-header' } });
  assert.equal(sessionIdOf(bySession), 's-header');
  const byMetadata = makeContext(gw, { path: '/v1/responses', body: { model: 'gpt-4.1', input: 'x', client_metadata: { session_id: 's-body' } } });
  route(byMetadata);
  validate(byMetadata);
  assert.equal(sessionIdOf(byMetadata), 's-body');
  assert.equal(sessionIdOf(makeContext(gw, { headers: { 'x-claude-code-session-id': 'cc' } })), 'cc');
  assert.equal(sessionIdOf(makeContext(gw, {})), null);
});
