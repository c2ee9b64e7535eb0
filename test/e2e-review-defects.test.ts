/**
 * End-to-end regression tests for defects found in review, on the real processes (stub provider,
 * admin on PostgreSQL, proxy): a router retry after a body rewrite sends each provider its own
 * mapped model; router names that are Object.prototype members or undecodable; per-attempt
 * latency, the provider of a request refused before any provider was chosen, the latency
 * balancer's in-flight count when a client leaves during a retry's backoff; providers without
 * keys; `GET /ai/models/<id>`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { NotFoundError } from 'openai';
import { fetchRecord, PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, waitFor, type Stack, type Started } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stub) => ({
      svc: { features: 'observability' },
      server: { 'upstream-timeout': '30s' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        groq: { 'base-url': `${stub}/mode/error-500/openai/v1` },
        deepseek: { 'base-url': `${stub}/deepseek` },
        anthropic: { 'base-url': `${stub}/v1` },
        together: { 'base-url': 'http://127.0.0.1:1/v1' },
        ollama: { 'base-url': `${stub}/ollama/v1` },
      },
      routers: {
        mapped: {
          'load-balance': {
            chat: {
              strategy: 'model-mappings',
              providers: ['groq', 'deepseek'],
              'model-mappings': { 'gpt-4o': ['groq/llama-3.3-70b-versatile', 'deepseek/deepseek-chat'] },
            },
          },
          retries: { strategy: 'constant', 'max-retries': 1, 'min-delay': '5ms' },
          health: { 'min-requests': 1, 'error-threshold': 0.5, 'cool-down': '1h', window: '1h' },
        },
        refused: {
          'load-balance': { chat: { strategy: 'latency', providers: ['together'] } },
          retries: { strategy: 'constant', 'max-retries': 2, 'min-delay': '300ms' },
        },
        backoff: {
          'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } },
          retries: { strategy: 'constant', 'max-retries': 1, 'min-delay': '20s' },
        },
        // Weighted towards openai, so that choosing a member without a key would show at once.
        mixed: { 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'openai', weight: 1000 }, { provider: 'deepseek', weight: 1 }] } } },
        keyless: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'anthropic'] } } },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
  });
});
after(async () => {
  await stack?.stop();
});

type Upstream = { url: string; headers: Record<string, string>; body: any };
const upstreamRequests = async (): Promise<Upstream[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as Upstream[];
const clearUpstream = async (): Promise<void> => void (await (await fetch(`${stack.stubUrl}/__requests`, { method: 'DELETE' })).text());

function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}
const msg = [{ role: 'user', content: 'Hello' }];

/** The router's health entry of one provider, as `GET /health` shows it. */
async function providerHealth(router: string, provider: string): Promise<{ healthy: boolean; windowErrors: number; inFlight: number }> {
  const h = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { routers: Record<string, Array<{ provider: string; healthy: boolean; windowErrors: number; inFlight: number }>> };
  return h.routers[router]!.find((p) => p.provider === provider)!;
}

/** The value of one Prometheus series of the proxy (0 when absent). */
async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  for (const line of text.split('\n')) if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  return 0;
}

describe('a router retry after a body rewrite', () => {
  test('each provider gets its own mapped model: the retry never sends the previous attempt\'s', async () => {
    // Take deepseek out of the pool (a pinned request that fails), so the first choice is groq
    // (always 500) and the retry, with groq tried, goes to deepseek: the order is fixed.
    const eject = await post(stack.gatewayUrl, '/router/mapped/chat/completions', { model: 'deepseek/error-500', messages: msg });
    assert.equal(eject.status, 500);
    await eject.text();
    assert.equal((await providerHealth('mapped', 'deepseek')).healthy, false);

    await clearUpstream();
    // The fallback handler rewrites the body (a new object carrying the model), as a managed prompt does.
    const res = await post(stack.gatewayUrl, '/router/mapped/chat/completions', { model: 'gpt-4o', messages: msg }, { 'svc-token-limit-exception-handler': 'fallback' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('svc-provider'), 'deepseek');
    await res.text();
    const sent = await upstreamRequests();
    assert.deepEqual(
      sent.map((r) => [r.url, r.body.model]),
      [
        ['/mode/error-500/openai/v1/chat/completions', 'llama-3.3-70b-versatile'],
        ['/deepseek/chat/completions', 'deepseek-chat'],
      ],
    );
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.deepEqual(JSON.parse(rec.properties['svc-attempts']).map((a: { provider: string; status: number }) => [a.provider, a.status]), [['groq', 500], ['deepseek', 200]]);
  });
});

describe('router names in the path', () => {
  test('names of Object.prototype members are unknown routers (404), never /ai or a 500', async () => {
    for (const path of ['/router/__proto__/chat/completions', '/router/constructor/chat/completions', '/router/toString/chat/completions', '/router/hasOwnProperty/embeddings', '/router/nope/chat/completions']) {
      const res = await post(stack.gatewayUrl, path, { model: 'openai/gpt-4o-mini', messages: msg });
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { error: { code: string; type: string } };
      assert.equal(body.error.code, 'router_not_found', path);
      assert.equal(body.error.type, 'invalid_request_error');
    }
  });

  test('a name that is not valid percent-encoding is a 400 naming it; an encoded valid name still works', async () => {
    const bad = await post(stack.gatewayUrl, '/router/%E0/chat/completions', { model: 'openai/gpt-4o-mini', messages: msg });
    assert.equal(bad.status, 400);
    const body = (await bad.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'invalid_router_name');
    assert.match(body.error.message, /%E0/);
    const ok = await post(stack.gatewayUrl, '/router/%6Dixed/chat/completions', { model: 'gpt-4o-mini', messages: msg });
    assert.equal(ok.status, 200);
    await ok.text();
  });
});

describe('attempt accounting', () => {
  test("the last failed attempt's latency is its own, not the whole request's (backoffs excluded)", async () => {
    // Three refused connections with 300 ms between them: the request takes over 600 ms, each attempt a moment.
    const res = await post(stack.gatewayUrl, '/router/refused/chat/completions', { model: 'gpt-4o-mini', messages: msg });
    assert.equal(res.status, 502);
    await res.text();
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    const attempts = JSON.parse(rec.properties['svc-attempts']) as Array<{ provider: string; status: number; latencyMs: number }>;
    assert.deepEqual(attempts.map((a) => [a.provider, a.status]), [['together', 0], ['together', 0], ['together', 0]]);
    // The request's duration holds two 300 ms backoffs that no attempt may include.
    for (const a of attempts) assert.ok(a.latencyMs < rec.delay_ms - 500, `attempt ${a.latencyMs} ms of a ${rec.delay_ms} ms request`);
  });

  test('a request refused before any provider was chosen is recorded as answered by the gateway (SVC), not by openai', async () => {
    for (const model of ['nope/some-model', 'gpt-4o-mini']) {
      const res = await post(stack.gatewayUrl, '/ai/chat/completions', { model, messages: msg });
      assert.equal(res.status, 400, model);
      assert.equal(res.headers.get('svc-provider'), null);
      await res.text();
      const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
      assert.equal(rec.provider, 'SVC', model);
      assert.equal(rec.response_status, 400);
    }
  });

  test('a client leaving during a retry backoff ends its attempt in the latency balancer once', async () => {
    const series = 'svc_proxy_requests_total{route="router:chat",router="backoff",provider="openai",status="499"}';
    const closedBefore = await metric(series);
    // X stays in flight at openai (the stub never answers `hang`): the count the balancer must keep.
    const x = new AbortController();
    const pendingX = post(stack.gatewayUrl, '/router/backoff/chat/completions', { model: 'hang', messages: msg }, {}, x.signal).catch(() => null);
    await waitFor(async () => (await providerHealth('backoff', 'openai')).inFlight === 1);
    // Y fails with a 500; its retry waits 20 s, and Y's client leaves meanwhile.
    const y = new AbortController();
    const pendingY = post(stack.gatewayUrl, '/router/backoff/chat/completions', { model: 'error-500', messages: msg }, {}, y.signal).catch(() => null);
    await waitFor(async () => (await providerHealth('backoff', 'openai')).windowErrors === 1);
    y.abort();
    await pendingY;
    await waitFor(async () => (await metric(series)) === closedBefore + 1);
    assert.equal((await providerHealth('backoff', 'openai')).inFlight, 1, 'X is still in flight; Y ended once');
    x.abort();
    await pendingX;
    await waitFor(async () => (await metric(series)) === closedBefore + 2);
    assert.equal((await providerHealth('backoff', 'openai')).inFlight, 0);
  });
});

describe('providers without keys', () => {
  let keyless: (Started & { url: string }) | undefined;
  before(async () => {
    // The same admin and configuration, without OPENAI_API_KEY and ANTHROPIC_API_KEY.
    keyless = await startLinkedProxy({
      adminPort: stack.admin.port,
      apiKey: stack.apiKey,
      configFile: stack.configFile,
      env: { ...PROVIDER_KEYS, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    });
  });
  after(async () => {
    await stopProcess(keyless);
  });

  test('the start log names each provider without a key and its variable', () => {
    const lines = keyless!.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const line = lines.find((l) => l.providersWithoutCredentials);
    assert.ok(line, keyless!.output());
    assert.equal(line.providersWithoutCredentials.openai, 'OPENAI_API_KEY');
    assert.equal(line.providersWithoutCredentials.anthropic, 'ANTHROPIC_API_KEY');
    assert.equal(line.providersWithoutCredentials.deepseek, undefined);
    assert.ok(!JSON.stringify(line).includes(PROVIDER_KEYS.DEEPSEEK_API_KEY!));
  });

  test('OpenAI and Anthropic alike: 503 provider_key_missing naming the variable, and nothing goes upstream', async () => {
    await clearUpstream();
    for (const [model, env] of [['openai/gpt-4o-mini', 'OPENAI_API_KEY'], ['anthropic/claude-sonnet-4-5', 'ANTHROPIC_API_KEY']] as const) {
      for (const stream of [false, true]) {
        const res = await post(keyless!.url, '/ai/chat/completions', { model, messages: msg, stream });
        assert.equal(res.status, 503, model);
        const body = (await res.json()) as { error: { code: string; type: string; message: string } };
        assert.equal(body.error.code, 'provider_key_missing');
        assert.equal(body.error.type, 'server_error');
        assert.equal(body.error.message, `provider ${model.split('/')[0]} has no API key: set ${env}`);
      }
    }
    const keylessRouter = await post(keyless!.url, '/router/keyless/chat/completions', { model: 'gpt-4o-mini', messages: msg });
    assert.equal(keylessRouter.status, 503);
    assert.equal(((await keylessRouter.json()) as { error: { code: string } }).error.code, 'provider_key_missing');
    assert.deepEqual(await upstreamRequests(), [], 'the stub received nothing');
  });

  test('a router serves from its members that have keys; ollama needs none', async () => {
    await clearUpstream();
    for (let i = 0; i < 8; i++) {
      const res = await post(keyless!.url, '/router/mixed/chat/completions', { model: 'deepseek-chat', messages: msg });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('svc-provider'), 'deepseek');
      await res.text();
    }
    const local = await post(keyless!.url, '/ai/chat/completions', { model: 'ollama/llama3.2', messages: msg });
    assert.equal(local.status, 200);
    await local.text();
    const sent = await upstreamRequests();
    assert.equal(sent.length, 9);
    assert.ok(sent.slice(0, 8).every((r) => r.url === '/deepseek/chat/completions' && r.headers.authorization === `Bearer ${PROVIDER_KEYS.DEEPSEEK_API_KEY}`));
    assert.equal(sent[8]!.url, '/ollama/v1/chat/completions');
    assert.equal(sent[8]!.headers.authorization, undefined);
  });
});

describe('GET /ai/models/<id> and /v1/models/<id>', () => {
  const client = (path: string) => new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0 });
  const expected = { id: 'openai/gpt-4o-mini', object: 'model', created: 0, owned_by: 'openai' };

  test('the openai client retrieves a model (its slash encoded, and as is)', async () => {
    for (const base of ['/ai', '/v1']) {
      assert.deepEqual({ ...(await client(base).models.retrieve('openai/gpt-4o-mini')) }, expected, base);
      assert.deepEqual(await client(base).get('/models/openai/gpt-4o-mini'), expected, `${base} unencoded`);
    }
  });

  test('raw GETs: encoded or not, a model whose name has a slash of its own', async () => {
    for (const path of ['/ai/models/openai/gpt-4o-mini', '/ai/models/openai%2Fgpt-4o-mini', '/v1/models/openai%2fgpt-4o-mini', '/v1/models/openai/gpt-4o-mini']) {
      const res = await fetch(`${stack.gatewayUrl}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.deepEqual(await res.json(), expected, path);
    }
    const nested = await fetch(`${stack.gatewayUrl}/ai/models/groq/openai/gpt-oss-120b`);
    assert.equal(nested.status, 200);
    assert.equal(((await nested.json()) as { id: string }).id, 'groq/openai/gpt-oss-120b');
  });

  test("an unknown model is a 404 model_not_found in OpenAI's shape; an undecodable id a 400", async () => {
    await assert.rejects(client('/ai').models.retrieve('openai/no-such-model'), (err: unknown) => err instanceof NotFoundError && err.status === 404 && (err as NotFoundError).code === 'model_not_found');
    const res = await fetch(`${stack.gatewayUrl}/v1/models/no-such-model`);
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string; type: string; param: string; message: string } };
    assert.deepEqual([body.error.code, body.error.type, body.error.param], ['model_not_found', 'invalid_request_error', 'model']);
    assert.match(body.error.message, /no-such-model/);
    const bad = await fetch(`${stack.gatewayUrl}/ai/models/%E0`);
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_model');
  });
});
