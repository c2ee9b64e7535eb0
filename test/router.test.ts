/**
 * Unit tests: router health (ejection, cool-down probe, 429), strategies (weighted, model-mappings),
 * the members each endpoint kind chooses among, retry delays.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../shared/config.ts';
import type { EndpointKind } from '../proxy/endpoints/types.ts';
import type { ProviderName } from '../shared/providers.ts';
import { retryDelay, RouterRuntime, isRetryable } from '../proxy/router.ts';

/** A router `r` built from `router`; `serves` replaces the providers' bindings when given. */
function runtime(router: Record<string, unknown>, random = Math.random, serves?: (provider: ProviderName, kind: EndpointKind) => boolean) {
  // A region for bedrock members: without one, config validation refuses them.
  const config = buildConfig({ routers: { r: router } }, { AWS_REGION: 'us-east-1' });
  let t = 1000;
  const rt = new RouterRuntime(config.routers.r!, config.providers, () => t, random, undefined, serves);
  return { rt, advance: (ms: number) => (t += ms) };
}

/** The providers 200 choices at `endpoint` went to. */
function picks(rt: RouterRuntime, endpoint: Parameters<RouterRuntime['choose']>[0], model: string): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) seen.add(rt.choose(endpoint, model)?.provider ?? 'none');
  return [...seen].sort();
}

const twoProviders = {
  'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } },
  health: { window: '10s', 'error-threshold': 0.5, 'min-requests': 4, 'cool-down': '5s' },
};

test('a provider over the error threshold leaves the pool, then returns after a successful probe', () => {
  const { rt, advance } = runtime(twoProviders);
  for (let i = 0; i < 3; i++) rt.record('groq', 500);
  assert.equal(rt.healthView().find((h) => h.provider === 'groq')!.healthy, true, 'below the minimum request count');
  rt.record('groq', 0);
  assert.equal(rt.healthView().find((h) => h.provider === 'groq')!.healthy, false);
  for (let i = 0; i < 50; i++) assert.equal(rt.choose('chat', 'gpt-4o-mini')!.provider, 'openai');
  advance(5001);
  // After the cool-down one probe goes through; until it answers, groq takes no other request.
  const picks = new Set<string>();
  let probe = null;
  for (let i = 0; i < 50; i++) {
    const c = rt.choose('chat', 'gpt-4o-mini')!;
    picks.add(c.provider);
    if (c.probe) probe = c;
  }
  assert.ok(probe && probe.provider === 'groq');
  rt.record('groq', 200);
  assert.equal(rt.healthView().find((h) => h.provider === 'groq')!.healthy, true);
});

test('a failed probe restarts the cool-down', () => {
  const { rt, advance } = runtime(twoProviders);
  for (let i = 0; i < 4; i++) rt.record('groq', 503);
  advance(5001);
  let c;
  do c = rt.choose('chat', 'm')!;
  while (c.provider !== 'groq');
  assert.equal(c.probe, true);
  rt.record('groq', 502);
  assert.ok(rt.healthView().find((h) => h.provider === 'groq')!.ejectedForMs > 4000);
});

test('a 429 takes the provider out for its Retry-After', () => {
  const { rt, advance } = runtime(twoProviders);
  rt.record('openai', 429, 2000);
  for (let i = 0; i < 20; i++) assert.equal(rt.choose('chat', 'm')!.provider, 'groq');
  advance(2001);
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) seen.add(rt.choose('chat', 'm')!.provider);
  assert.ok(seen.has('openai'));
});

test('when every provider is out, the one whose ejection ends first is used', () => {
  const { rt } = runtime(twoProviders);
  rt.record('openai', 429, 5000);
  rt.record('groq', 429, 1000);
  assert.equal(rt.choose('chat', 'm')!.provider, 'groq');
});

test('a retry goes to a provider not yet tried', () => {
  const { rt } = runtime(twoProviders);
  for (let i = 0; i < 20; i++) assert.equal(rt.choose('chat', 'm', new Set(['openai']))!.provider, 'groq');
});

test('weighted: shares hold within statistical bounds', () => {
  const { rt } = runtime({ 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'openai', weight: 3 }, { provider: 'groq', weight: 1 }] } } });
  const n = 20_000;
  let openai = 0;
  for (let i = 0; i < n; i++) if (rt.choose('chat', 'm')!.provider === 'openai') openai++;
  // Binomial(n, 0.75): sd ≈ 61; allow 5 sd.
  assert.ok(Math.abs(openai - 0.75 * n) < 5 * Math.sqrt(n * 0.75 * 0.25), `openai got ${openai} of ${n}`);
});

test('model-mappings: a provider lacking the model gets its mapped model', () => {
  const { rt } = runtime({
    'load-balance': {
      chat: { strategy: 'model-mappings', providers: ['anthropic'], 'model-mappings': { 'gpt-4o': ['anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-pro'] } },
    },
  });
  assert.deepEqual(rt.choose('chat', 'gpt-4o'), { provider: 'anthropic', model: 'claude-sonnet-4-5', probe: false });
  assert.equal(rt.choose('chat', 'claude-haiku-4-5')!.model, 'claude-haiku-4-5', 'a model the provider has is kept');
});

test('a router without an embeddings group sends embeddings only to the chat members that offer them', () => {
  const { rt } = runtime({ 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } } });
  assert.deepEqual(picks(rt, 'chat', 'gpt-4o-mini'), ['groq', 'openai']);
  assert.deepEqual(picks(rt, 'embeddings', 'text-embedding-3-small'), ['openai'], 'groq has no embeddings endpoint');
  assert.deepEqual(rt.targets('embeddings', 'text-embedding-3-small'), [{ provider: 'openai', model: 'text-embedding-3-small' }]);
  assert.deepEqual(rt.members('embeddings'), ['openai', 'groq'], 'the group as configured');
  // A retry that has tried every member that offers them stays with those.
  for (let i = 0; i < 20; i++) assert.equal(rt.choose('embeddings', 'text-embedding-3-small', new Set(['openai']))!.provider, 'openai');
  const weighted = runtime({ 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'groq', weight: 100 }, { provider: 'mistral', weight: 1 }] } } }).rt;
  assert.deepEqual(picks(weighted, 'embeddings', 'mistral-embed'), ['mistral']);
});

test('a kind no member serves has no choice (null), whatever the strategy', () => {
  for (const strategy of ['latency', 'weighted', 'model-mappings']) {
    const { rt } = runtime({ 'load-balance': { chat: { strategy, providers: ['groq', 'deepseek'] } } });
    assert.equal(rt.choose('embeddings', 'text-embedding-3-small'), null, strategy);
    assert.deepEqual(rt.targets('embeddings', 'text-embedding-3-small'), []);
    assert.equal(rt.choose('stored_response', 'gpt-4o-mini'), null, 'only openai and azure keep responses');
    assert.ok(rt.choose('count_tokens', 'x'), 'a count the gateway answers itself is served by every member');
  }
});

test('every endpoint kind chooses among the members that serve it (Responses, Messages as embeddings)', () => {
  const serves = (p: ProviderName, kind: EndpointKind) => !((p === 'groq' && kind.name === 'responses') || (p === 'openai' && kind.name === 'messages'));
  const { rt } = runtime({ 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } } }, Math.random, serves);
  assert.deepEqual(picks(rt, 'chat', 'm'), ['groq', 'openai']);
  assert.deepEqual(picks(rt, 'responses', 'm'), ['openai']);
  assert.deepEqual(picks(rt, 'messages', 'm'), ['groq']);
  assert.deepEqual(rt.targets('responses', 'm').map((t) => t.provider), ['openai']);
});

test('model-mappings: a mapped model never goes to a member that neither offers it nor has a mapping for it', () => {
  const { rt } = runtime({
    'load-balance': {
      chat: { strategy: 'model-mappings', providers: ['openai', 'anthropic', 'bedrock'], 'model-mappings': { 'gpt-4o-mini': ['anthropic/claude-sonnet-4-5'] } },
    },
  });
  const sent = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const c = rt.choose('chat', 'gpt-4o-mini')!;
    sent.add(`${c.provider}/${c.model}`);
  }
  assert.deepEqual([...sent].sort(), ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'], 'openai offers the model; bedrock neither offers nor maps it');
  assert.deepEqual(rt.targets('chat', 'gpt-4o-mini'), [{ provider: 'openai', model: 'gpt-4o-mini' }, { provider: 'anthropic', model: 'claude-sonnet-4-5' }]);
  assert.deepEqual(picks(rt, 'chat', 'unmapped-model'), ['anthropic', 'bedrock', 'openai'], 'a model without mappings is balanced over every member');
});

test('model-mappings: a member the model table covers lacks a model the table does not list at it', () => {
  // Every provider has models in the table (Ollama a few of its library's), so without a configured
  // `providers.<p>.models` list a member is eligible for a mapped model only where the table lists it
  // or where it has a mapping for it: qwen3, mapped only for openai, went to anthropic/qwen3 (a 404).
  const { rt } = runtime({
    'load-balance': {
      chat: {
        strategy: 'model-mappings',
        providers: ['openai', 'ollama', 'anthropic'],
        'model-mappings': { qwen3: ['openai/gpt-4o-mini'], 'gpt-9-newer-than-the-table': ['anthropic/claude-sonnet-4-5'], 'llama3.2': ['openai/gpt-4o-mini'] },
      },
    },
  });
  const sent = (model: string) => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const c = rt.choose('chat', model)!;
      seen.add(`${c.provider}/${c.model}`);
    }
    return [...seen].sort();
  };
  assert.deepEqual(sent('qwen3'), ['openai/gpt-4o-mini'], 'the table lists qwen3 at neither anthropic nor ollama');
  assert.deepEqual(sent('gpt-9-newer-than-the-table'), ['anthropic/claude-sonnet-4-5']);
  assert.deepEqual(sent('llama3.2'), ['ollama/llama3.2', 'openai/gpt-4o-mini'], 'the table lists llama3.2 at ollama');
});

test('model-mappings: a configured models list decides for its provider', () => {
  // Ollama serves what was pulled: its operator lists it, and the list wins over the table.
  const config = buildConfig(
    {
      providers: { ollama: { models: ['qwen3'] } },
      routers: { r: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['openai', 'ollama', 'anthropic'], 'model-mappings': { qwen3: ['openai/gpt-4o-mini'] } } } } },
    },
    {},
  );
  const rt = new RouterRuntime(config.routers.r!, config.providers, () => 1000);
  const seen = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const c = rt.choose('chat', 'qwen3')!;
    seen.add(`${c.provider}/${c.model}`);
  }
  assert.deepEqual([...seen].sort(), ['ollama/qwen3', 'openai/gpt-4o-mini']);
});

test('model-mappings: a member whose configured models list lacks the mapped model is left out', () => {
  const config = buildConfig(
    {
      providers: { ollama: { models: ['llama3.2'] } },
      routers: { r: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['openai', 'ollama'], 'model-mappings': { qwen3: ['openai/gpt-4o-mini'] } } } } },
    },
    {},
  );
  const rt = new RouterRuntime(config.routers.r!, config.providers, () => 1000);
  assert.deepEqual(rt.targets('chat', 'qwen3'), [{ provider: 'openai', model: 'gpt-4o-mini' }]);
});

test('retry delays: exponential with full jitter, bounded; constant; none past max-retries', () => {
  const policy = { strategy: 'exponential' as const, maxRetries: 3, minDelayMs: 100, maxDelayMs: 250, factor: 2 };
  assert.equal(retryDelay(policy, 1, () => 0.999999), 99.9999);
  assert.ok(Math.abs(retryDelay(policy, 2, () => 0.5)! - 100) < 1e-9);
  assert.ok(Math.abs(retryDelay(policy, 3, () => 0.999999)! - 250 * 0.999999) < 1e-9, 'capped at max-delay');
  assert.equal(retryDelay(policy, 4), null);
  assert.equal(retryDelay({ ...policy, strategy: 'constant' }, 2), 100);
  assert.equal(retryDelay(null, 1), null);
  assert.ok(isRetryable(0) && isRetryable(429) && isRetryable(503) && !isRetryable(400) && !isRetryable(200));
});
