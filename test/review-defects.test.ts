/**
 * Defects found in review, tested in one process: router names and model mappings that collide with
 * Object.prototype, providers without credentials (start log, router choice, bindings), Azure errors
 * through `mapError`, and a `/metrics` collection that fails. The gateway runs in this process
 * (`svc.features: none`) in front of a small local upstream; the stack-level cases are in
 * e2e-review-defects.test.ts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Gauge } from 'prom-client';
import pino from 'pino';
import YAML from 'yaml';
import { buildConfig, type GatewayConfig } from '../shared/config.ts';
import { createGateway, type Gateway } from '../proxy/gateway.ts';
import { createMetrics } from '../proxy/metrics.ts';
import { bindingFor, missingCredentials } from '../proxy/providers/index.ts';
import { RouterRuntime } from '../proxy/router.ts';
import { GatewayError } from '../proxy/errors.ts';

/** What the local upstream received: method, path, headers. */
const received: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }> = [];

/**
 * Azure's API gateway answer to a wrong key, as Microsoft documents it ("401 Access denied due to
 * invalid subscription key or wrong API endpoint", Azure OpenAI troubleshooting): not OpenAI's shape.
 */
const AZURE_APIM_401 = '{"statusCode":401,"message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}';
const CHAT_OK = '{"id":"chatcmpl-local","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';

let upstream: http.Server;
let upstreamUrl: string;

before(async () => {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      // Azure deployment `denied` answers like Azure's API gateway does to a wrong key.
      const status = req.url!.includes('/deployments/denied/') ? 401 : 200;
      const text = status === 401 ? AZURE_APIM_401 : CHAT_OK;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
after(async () => {
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

/** A gateway in this process on a free port, logging into `lines`. */
async function startGateway(config: GatewayConfig, lines: string[] = [], metrics = createMetrics(null)): Promise<{ gw: Gateway; url: string; metrics: typeof metrics }> {
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
  const gw = createGateway({ config, logger, controlPlane: null, metrics });
  await new Promise<void>((r) => gw.server.listen(0, '127.0.0.1', r));
  return { gw, url: `http://127.0.0.1:${(gw.server.address() as AddressInfo).port}`, metrics };
}

const chat = (url: string, path: string, model: string) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }), signal: AbortSignal.timeout(10_000) });

describe('router names and model mappings are own keys only', () => {
  const doc = YAML.parse(`
routers:
  __proto__:
    load-balance: { chat: { strategy: latency, providers: [openai] } }
  mapped:
    load-balance:
      chat:
        strategy: model-mappings
        providers: [openai]
        model-mappings: { gpt-4o: [openai/gpt-4o-mini] }
`);

  test('a router named "__proto__" in gateway.yaml is a router, not the routers object\'s prototype', () => {
    const config = buildConfig(doc, {});
    assert.ok(Object.hasOwn(config.routers, '__proto__'));
    assert.equal(config.routers['__proto__']!.name, '__proto__');
    assert.equal(Object.getPrototypeOf(config.routers), null);
    assert.equal(config.routers.chat, undefined, 'no router name finds a property of another router');
    assert.deepEqual(Object.keys(config.routers).sort(), ['__proto__', 'mapped']);
  });

  const config = () => buildConfig({ ...doc, svc: { features: 'none' }, providers: { openai: { 'base-url': upstreamUrl } } }, { OPENAI_API_KEY: 'sk-local' });

  test('/router/__proto__/… is served by the router of that name when one is configured', async () => {
    const { gw, url } = await startGateway(config());
    try {
      const res = await chat(url, '/router/__proto__/chat/completions', 'gpt-4o-mini');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('svc-provider'), 'openai');
      await res.text();
    } finally {
      await gw.close();
    }
  });

  test('on a model-mappings router, a model named like an Object.prototype member is an unmapped model, not a 500', async () => {
    const { gw, url } = await startGateway(config());
    try {
      for (const model of ['constructor', 'toString', '__proto__']) {
        const r = await chat(url, '/router/mapped/chat/completions', model);
        assert.equal(r.status, 200, model);
        await r.text();
        assert.equal(JSON.parse(received.at(-1)!.body).model, model);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('providers without credentials', () => {
  test('missingCredentials: the key variable of each provider that needs one; none for ollama', () => {
    const config = buildConfig({}, {});
    assert.equal(missingCredentials(config.providers.openai, {}), 'OPENAI_API_KEY');
    assert.equal(missingCredentials(config.providers.anthropic, {}), 'ANTHROPIC_API_KEY');
    assert.equal(missingCredentials(config.providers.azure, {}), 'AZURE_OPENAI_API_KEY');
    assert.equal(missingCredentials(config.providers.groq, {}), 'GROQ_API_KEY');
    assert.equal(missingCredentials(config.providers.ollama, {}), null);
    assert.match(missingCredentials(config.providers.bedrock, {})!, /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    assert.equal(missingCredentials(config.providers.bedrock, { AWS_BEARER_TOKEN_BEDROCK: 't' }), null);
    assert.equal(missingCredentials(config.providers.bedrock, { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's' }), null);
    // An empty variable is no key.
    assert.equal(missingCredentials(buildConfig({}, { OPENAI_API_KEY: '' }).providers.openai, {}), 'OPENAI_API_KEY');
    assert.equal(missingCredentials(buildConfig({}, { OPENAI_API_KEY: 'sk' }).providers.openai, {}), null);
  });

  test('an OpenAI-compatible binding refuses to build a request without its key; ollama sends none', () => {
    const config = buildConfig({}, {});
    const call = (name: 'openai' | 'ollama') => ({ config: config.providers[name], body: { model: 'm', messages: [] }, stream: false, requestId: 'r' });
    assert.throws(
      () => bindingFor('openai', 'chat')!.buildRequest(call('openai')),
      (err: unknown) => err instanceof GatewayError && err.status === 503 && err.code === 'provider_key_missing' && /set OPENAI_API_KEY/.test(err.message),
    );
    const req = bindingFor('ollama', 'chat')!.buildRequest(call('ollama')) as { headers: Record<string, string> };
    assert.equal(req.headers.authorization, undefined);
  });

  test('a router never chooses a member without credentials while one with them remains', () => {
    const config = buildConfig({ routers: { r: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq', 'mistral'] } } } } }, {});
    const rt = new RouterRuntime(config.routers.r!, config.providers, undefined, undefined, new Set(['openai', 'mistral']));
    for (let i = 0; i < 50; i++) assert.equal(rt.choose('chat', 'm', new Set(i % 2 ? ['groq'] : []))!.provider, 'groq');
    // Every member without credentials: one is chosen, and the gateway refuses it by name.
    const all = new RouterRuntime(config.routers.r!, config.providers, undefined, undefined, new Set(['openai', 'groq', 'mistral']));
    assert.ok(['openai', 'groq', 'mistral'].includes(all.choose('chat', 'm')!.provider));
  });

  test('at start, one log line names every provider without credentials and what to set; requests to them are 503 provider_key_missing', async () => {
    const lines: string[] = [];
    const config = buildConfig(
      {
        svc: { features: 'none' },
        providers: { openai: { 'base-url': upstreamUrl }, anthropic: { 'base-url': upstreamUrl }, ollama: { 'base-url': upstreamUrl } },
        // Weighted towards openai, so that choosing the member without a key would show at once.
        routers: { mixed: { 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'openai', weight: 1000 }, { provider: 'ollama', weight: 1 }] } } } },
      },
      { GROQ_API_KEY: 'g' },
    );
    const { gw, url } = await startGateway(config, lines);
    try {
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.providersWithoutCredentials);
      assert.equal(logged.length, 1, lines.join(''));
      const missing = logged[0].providersWithoutCredentials;
      assert.equal(missing.openai, 'OPENAI_API_KEY');
      assert.equal(missing.anthropic, 'ANTHROPIC_API_KEY');
      assert.equal(missing.groq, undefined, 'groq has its key');
      assert.equal(missing.ollama, undefined, 'ollama needs none');
      assert.equal(logged[0].level, 40, 'warn: router "mixed" counts on openai');
      const before = received.length;
      for (const [model, env] of [['openai/gpt-4o-mini', 'OPENAI_API_KEY'], ['anthropic/claude-sonnet-4-5', 'ANTHROPIC_API_KEY']]) {
        const res = await chat(url, '/ai/chat/completions', model!);
        assert.equal(res.status, 503, model);
        const body = (await res.json()) as { error: { code: string; type: string; message: string } };
        assert.equal(body.error.code, 'provider_key_missing');
        assert.equal(body.error.type, 'server_error');
        assert.ok(body.error.message.includes(`set ${env}`), body.error.message);
      }
      assert.equal(received.length, before, 'nothing went upstream');
      // The router serves every request from its member with credentials (ollama takes none).
      for (let i = 0; i < 6; i++) {
        const res = await chat(url, '/router/mixed/chat/completions', 'llama3');
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('svc-provider'), 'ollama');
        await res.text();
      }
      assert.ok(received.slice(before).every((r) => r.headers.authorization === undefined));
    } finally {
      await gw.close();
    }
  });
});

describe('Azure errors go through its mapError', () => {
  test("an error of Azure's API gateway reaches the client in OpenAI's shape; answers still pass through", async () => {
    const config = buildConfig({ svc: { features: 'none' }, providers: { azure: { 'base-url': upstreamUrl } } }, { AZURE_OPENAI_API_KEY: 'azure-local-key' });
    const { gw, url } = await startGateway(config);
    try {
      const denied = await chat(url, '/ai/chat/completions', 'azure/denied');
      assert.equal(denied.status, 401);
      assert.equal(denied.headers.get('content-type'), 'application/json');
      const body = (await denied.json()) as { error: Record<string, unknown> };
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(body.error.type, 'authentication_error');
      assert.match(String(body.error.message), /^Access denied due to invalid subscription key/);
      const ok = await chat(url, '/ai/chat/completions', 'azure/gpt-4o-mini');
      assert.equal(ok.status, 200);
      assert.equal(await ok.text(), CHAT_OK, 'a 2xx answer is passed through byte for byte');
      assert.match(received.at(-1)!.url, /^\/openai\/deployments\/gpt-4o-mini\/chat\/completions\?api-version=/);
    } finally {
      await gw.close();
    }
  });
});

describe('GET /metrics', () => {
  test('a collection that fails is a logged 500 in OpenAI\'s shape, never an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    const lines: string[] = [];
    const metrics = createMetrics(null);
    new Gauge({
      name: 'test_failing_gauge',
      help: 'a collector that throws',
      registers: [metrics.registry],
      collect() {
        throw new Error('collector failed');
      },
    });
    const { gw, url } = await startGateway(buildConfig({ svc: { features: 'none' } }, {}), lines, metrics);
    try {
      const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error: { code: string; type: string } };
      assert.equal(body.error.type, 'server_error');
      assert.equal(body.error.code, 'metrics_unavailable');
      assert.ok(lines.some((l) => JSON.parse(l).msg === 'could not collect the metrics'));
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await gw.close();
    }
  });
});
