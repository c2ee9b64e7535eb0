/** Unit tests: gateway.yaml validation (key paths in errors, defaults, provider keys from env). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig, ConfigError, loadConfig, parseDuration, configPathFrom } from '../shared/config.ts';

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
