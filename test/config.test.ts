/** Unit tests: gateway.yaml validation (key paths in errors, defaults, provider keys from env). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig, ConfigError, loadConfig, parseDuration, configPathFrom } from '../shared/config.ts';
import { bindingFor } from '../proxy/providers/index.ts';
import { offersEmbeddings, PROVIDER_NAMES } from '../shared/providers.ts';

const bad = (doc: unknown, pattern: RegExp) => assert.throws(() => buildConfig(doc, {}), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));

test('the shipped gateway.yaml is valid and turns observability on', () => {
  const c = loadConfig('gateway.yaml', {});
  assert.equal(c.features, 'observability');
  assert.equal(c.routers.default!.chat.strategy, 'latency');
});

test('defaults: providers get default base URLs and their keys from the environment only', () => {
  const c = buildConfig({}, { OPENAI_API_KEY: 'sk-x', GROQ_API_KEY: 'g' });
  assert.equal(c.providers.openai.baseUrl, 'https://api.openai.com/v1');
  assert.equal(c.providers.openai.apiKey, 'sk-x');
  assert.equal(c.providers.groq.apiKey, 'g');
  assert.equal(c.providers.ollama.apiKey, null);
  assert.equal(c.server.maxBodyBytes, 10 * 1024 * 1024);
  const pointed = buildConfig({ providers: { openai: { 'base-url': 'http://127.0.0.1:9/v1/' } } }, {});
  assert.equal(pointed.providers.openai.baseUrl, 'http://127.0.0.1:9/v1');
});

test('an unknown key names its path', () => bad({ svc: { featurez: 'auth' } }, /svc\.featurez: unknown key/));
test('a wrong type names its path', () => bad({ server: { 'max-body-size': 'big' } }, /server\.max-body-size/));
test('an unknown feature value', () => bad({ svc: { features: 'all' } }, /svc\.features/));
test('an unknown provider in a router', () =>
  bad({ routers: { r: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'nope'] } } } } }, /routers\.r\.load-balance\.chat\.providers\.1: unknown provider "nope"/));
test('an unknown strategy', () => bad({ routers: { r: { 'load-balance': { chat: { strategy: 'random', providers: ['openai'] } } } } }, /routers\.r\.load-balance\.chat\.strategy/));
test('an unknown provider under providers', () => bad({ providers: { foo: {} } }, /providers\.foo/));
test('an invalid duration', () => bad({ global: { 'rate-limit': { 'per-api-key': { capacity: 5, 'refill-frequency': 'soon' } } } }, /refill-frequency/));
test('rate limits with features none stop the start', () =>
  bad({ svc: { features: 'none' }, global: { 'rate-limit': { 'per-api-key': { capacity: 5, 'refill-frequency': '1s' } } } }, /need "auth" or "observability"/));
test('redis store needs a url', () => bad({ 'rate-limit-store': { type: 'redis' } }, /rate-limit-store\.url/));

test('durations', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1s'), 1000);
  assert.equal(parseDuration('5m'), 300_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.throws(() => parseDuration('-1s'), ConfigError);
  const c = buildConfig({ global: { 'rate-limit': { 'per-api-key': { capacity: 3, 'refill-frequency': '1s' } } } }, {});
  assert.deepEqual(c.rateLimit.global.perApiKey, { capacity: 3, periodMs: 1000 });
});

test('--config and GATEWAY_CONFIG select the file', () => {
  assert.equal(configPathFrom(['--config', 'x.yaml'], {}), 'x.yaml');
  assert.equal(configPathFrom(['--config=y.yaml'], {}), 'y.yaml');
  assert.equal(configPathFrom([], { GATEWAY_CONFIG: 'z.yaml' }), 'z.yaml');
  assert.equal(configPathFrom([], {}), 'gateway.yaml');
});

// ---- operator mistakes that must stop the start (each names its key) ----

const router = (chat: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ routers: { r: { 'load-balance': { chat }, ...extra } } });

test('providers.<p>.base-url must be an absolute http: or https: URL', () => {
  for (const url of ['not a url', '127.0.0.1:18393/v1', 'ftp://127.0.0.1/v1', 'localhost:11434']) {
    bad({ providers: { openai: { 'base-url': url } } }, /^gateway\.yaml: providers\.openai\.base-url: expected an absolute http: or https: URL/);
  }
  assert.equal(buildConfig({ providers: { ollama: { 'base-url': 'https://ollama.internal:443/v1' } } }, {}).providers.ollama.baseUrl, 'https://ollama.internal:443/v1');
});

test('control-plane.url must be a ws:, wss: (or http:, https:, which the ws client takes as the same) URL, from the file or SVC_CONTROL_PLANE_URL', () => {
  for (const url of ['garbage', 'ftp://127.0.0.1:8585/v1/control-plane', '127.0.0.1:8585']) {
    bad({ 'control-plane': { url } }, /^gateway\.yaml: control-plane\.url: expected an absolute ws: or wss: or http: or https: URL/);
  }
  assert.throws(() => buildConfig({}, { SVC_CONTROL_PLANE_URL: 'garbage' }), (e: unknown) => e instanceof ConfigError && /SVC_CONTROL_PLANE_URL: expected an absolute ws: or wss:/.test(e.message));
  assert.equal(buildConfig({ 'control-plane': { url: 'wss://admin.internal/v1/control-plane' } }, {}).controlPlane.url, 'wss://admin.internal/v1/control-plane');
  // Accepted before these checks existed, and by the ws client: kept.
  assert.equal(buildConfig({ 'control-plane': { url: 'http://127.0.0.1:8585/v1/control-plane' } }, {}).controlPlane.url, 'http://127.0.0.1:8585/v1/control-plane');
});

test('a model-mappings target names a known provider as <provider>/<model>', () => {
  bad(router({ strategy: 'model-mappings', providers: ['openai'], 'model-mappings': { 'gpt-4o': ['opneai/gpt-4o-mini'] } }), /routers\.r\.load-balance\.chat\.model-mappings\.gpt-4o\.0: unknown provider "opneai"/);
  bad(router({ strategy: 'model-mappings', providers: ['groq'], 'model-mappings': { m: ['groq/x', 'grok/llama-3.3-70b'] } }), /model-mappings\.m\.1: unknown provider "grok"/);
  bad(router({ strategy: 'model-mappings', providers: ['openai'], 'model-mappings': { m: ['gpt-4o-mini'] } }), /model-mappings\.m\.0: expected "<provider>\/<model>"/);
  bad(router({ strategy: 'model-mappings', providers: ['openai'], 'model-mappings': { m: ['openai/'] } }), /model-mappings\.m\.0: expected "<provider>\/<model>"/);
});

test('weights only on a weighted router; model-mappings only on a model-mappings router', () => {
  bad(router({ strategy: 'latency', providers: [{ provider: 'openai', weight: 3 }, 'groq'] }), /routers\.r\.load-balance\.chat\.providers\.0\.weight: only a "weighted" router uses weights; this one is "latency"/);
  bad(router({ strategy: 'latency', providers: ['openai'], 'model-mappings': { m: ['openai/x'] } }), /routers\.r\.load-balance\.chat\.model-mappings: only a "model-mappings" router applies mappings; this one is "latency"/);
  bad(router({ strategy: 'weighted', providers: ['openai'], 'model-mappings': { m: ['openai/x'] } }), /chat\.model-mappings: .*this one is "weighted"/);
});

test('a provider listed twice in a router', () =>
  bad(router({ strategy: 'weighted', providers: [{ provider: 'openai', weight: 1 }, 'groq', { provider: 'openai', weight: 2 }] }), /routers\.r\.load-balance\.chat\.providers\.2: openai is listed twice/));

test('an embeddings pool with no provider that offers embeddings', () => {
  bad({ routers: { r: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] }, embeddings: { strategy: 'latency', providers: ['anthropic'] } } } } }, /routers\.r\.load-balance\.embeddings\.providers: none of anthropic offers embeddings/);
  // A chat-only router without an embeddings group stays valid (embeddings there are a 400 unsupported_endpoint).
  assert.ok(buildConfig(router({ strategy: 'latency', providers: ['anthropic'] }), {}));
});

test('retries: min-delay above max-delay', () => {
  bad(router({ strategy: 'latency', providers: ['openai'] }, { retries: { 'min-delay': '5s', 'max-delay': '1s' } }), /routers\.r\.retries\.min-delay: 5000 ms is above routers\.r\.retries\.max-delay \(1000 ms\)/);
  bad(router({ strategy: 'latency', providers: ['openai'] }, { retries: { 'min-delay': '5s' } }), /retries\.min-delay: 5000 ms is above routers\.r\.retries\.max-delay \(2000 ms, its default\)/);
  // A constant delay does not use max-delay.
  assert.equal(buildConfig(router({ strategy: 'latency', providers: ['openai'] }, { retries: { strategy: 'constant', delay: '5s' } }), {}).routers.r!.retries!.minDelayMs, 5000);
});

test('durations a timer runs are at most 2147483647 ms', () => {
  const tooLong = /at most 2147483647 ms \(about 24\.8 days; /;
  bad({ server: { 'shutdown-timeout': '30d' } }, /server\.shutdown-timeout: .*at most 2147483647 ms/);
  bad({ global: { 'rate-limit': { 'cleanup-interval': '30d' } } }, /global\.rate-limit\.cleanup-interval: .*at most 2147483647 ms/);
  bad({ 'log-queue': { 'flush-interval': '30d' } }, /log-queue\.flush-interval: .*at most 2147483647 ms/);
  bad({ server: { 'upstream-timeout': 2_147_483_648 } }, tooLong);
  bad(router({ strategy: 'latency', providers: ['openai'] }, { retries: { 'max-delay': '25d' } }), /routers\.r\.retries\.max-delay: .*at most 2147483647 ms/);
  assert.equal(buildConfig({ server: { 'shutdown-timeout': 2_147_483_647 } }, {}).server.shutdownTimeoutMs, 2_147_483_647);
  // Not timers: a month-long refill and a 30-day cache lifetime stay valid.
  assert.equal(buildConfig({ global: { 'rate-limit': { 'per-api-key': { capacity: 1000, 'refill-frequency': '30d' } } } }, {}).rateLimit.global.perApiKey!.periodMs, 30 * 86_400_000);
  assert.equal(buildConfig({ cache: { 'default-max-age': '30d' } }, {}).cache.defaultTtlMs, 30 * 86_400_000);
});

test('"expected at least one provider" carries the file prefix', () =>
  bad(router({ strategy: 'latency', providers: [] }), /^gateway\.yaml: routers\.r\.load-balance\.chat\.providers: expected at least one provider/));

test('metrics.enabled: default true, false read', () => {
  assert.equal(buildConfig({}, {}).metrics.enabled, true);
  assert.equal(buildConfig({ metrics: { enabled: false } }, {}).metrics.enabled, false);
});

test('which providers offer embeddings: the config check agrees with the proxy\'s bindings', () => {
  for (const p of PROVIDER_NAMES) assert.equal(offersEmbeddings(p), bindingFor(p, 'embeddings') !== undefined, p);
});
