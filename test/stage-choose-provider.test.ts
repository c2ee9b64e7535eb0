/** Stage choose-provider: /ai by prefix, routers pinned or by strategy, and the refusals. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { chooseProvider } from '../proxy/stages/choose-provider.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

const gw = makeRuntime({
  doc: {
    routers: {
      pair: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] }, embeddings: { strategy: 'latency', providers: ['mistral'] } } },
      mapped: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['anthropic'], 'model-mappings': { 'gpt-4o': ['anthropic/claude-3-5-haiku-latest'] } } } },
      keyless: { 'load-balance': { chat: { strategy: 'latency', providers: ['xai', 'openai'] } } },
      chatonly: { 'load-balance': { chat: { strategy: 'latency', providers: ['groq', 'deepseek'] } } },
      mixed: { 'load-balance': { chat: { strategy: 'latency', providers: ['groq', 'openai'] } } },
    },
  },
});
after(() => closeRuntime(gw));

function chosen(spec: RequestSpec) {
  const ctx = makeContext(gw, spec);
  route(ctx);
  validate(ctx);
  chooseProvider(ctx);
  return ctx;
}
const chat = (path: string, model: string) => ({ path, body: { model, messages: [{ role: 'user', content: 'x' }] } });
const refused = (spec: RequestSpec, status: number, code: string) =>
  assert.throws(() => chosen(spec), (e: unknown) => e instanceof GatewayError && e.status === status && e.code === code, `${spec.path} ${JSON.stringify(spec.body)}`);

test('/ai: the provider is the model\'s prefix; the bare model is sent; ctx.body keeps the prefix', () => {
  const ctx = chosen(chat('/ai/chat/completions', 'anthropic/claude-3-5-haiku-latest'));
  assert.equal(ctx.provider, 'anthropic');
  assert.equal(ctx.model, 'claude-3-5-haiku-latest');
  assert.equal(ctx.binding?.transport.name, 'anthropic');
  assert.equal(ctx.body!.model, 'anthropic/claude-3-5-haiku-latest');
  assert.equal(ctx.pinned, false);
  // Only the first slash separates: the rest is the provider's model name.
  assert.equal(chosen(chat('/ai/chat/completions', 'groq/meta-llama/llama-4-scout')).model, 'meta-llama/llama-4-scout');
});

test('/ai refusals: no prefix, unknown provider, a provider that does not offer the kind', () => {
  refused(chat('/ai/chat/completions', 'gpt-4o-mini'), 400, 'missing_provider');
  refused(chat('/ai/chat/completions', '/gpt-4o-mini'), 400, 'missing_provider');
  refused(chat('/ai/chat/completions', 'nobody/gpt-4o-mini'), 400, 'unknown_provider');
  refused(chat('/ai/chat/completions', '__proto__/gpt-4o-mini'), 400, 'unknown_provider');
  refused({ path: '/ai/embeddings', body: { model: 'groq/some-embedder', input: 'x' } }, 400, 'unsupported_endpoint');
});

test('a provider without credentials is refused with 503 provider_key_missing naming the variable', () => {
  assert.throws(
    () => chosen(chat('/ai/chat/completions', 'xai/grok-3-mini')),
    (e: unknown) => e instanceof GatewayError && e.status === 503 && e.code === 'provider_key_missing' && /XAI_API_KEY/.test(e.message),
  );
});

test('a router: the client may pin a member (retries stay with it); a non-member is refused', () => {
  const ctx = chosen(chat('/router/pair/chat/completions', 'groq/llama-3.1-8b-instant'));
  assert.equal(ctx.provider, 'groq');
  assert.equal(ctx.model, 'llama-3.1-8b-instant');
  assert.equal(ctx.pinned, true);
  assert.equal(ctx.router, gw.routers.get('pair'));
  refused(chat('/router/pair/chat/completions', 'mistral/mistral-small-latest'), 400, 'provider_not_in_router');
});

test('a router: a bare model is chosen by the strategy from the kind\'s pool, avoiding providers tried', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) seen.add(chosen(chat('/router/pair/chat/completions', 'gpt-4o-mini')).provider!);
  assert.deepEqual([...seen].sort(), ['groq', 'openai']);
  const retry = makeContext(gw, chat('/router/pair/chat/completions', 'gpt-4o-mini'));
  route(retry);
  validate(retry);
  retry.tried.add('openai');
  for (let i = 0; i < 10; i++) {
    chooseProvider(retry);
    assert.equal(retry.provider, 'groq');
  }
  const emb = chosen({ path: '/router/pair/embeddings', body: { model: 'mistral-embed', input: 'x' } });
  assert.equal(emb.provider, 'mistral');
  const mapped = chosen(chat('/router/mapped/chat/completions', 'gpt-4o'));
  assert.equal(mapped.provider, 'anthropic');
  assert.equal(mapped.model, 'claude-3-5-haiku-latest');
});

test('a router never chooses a member without credentials while another remains', () => {
  for (let i = 0; i < 30; i++) assert.equal(chosen(chat('/router/keyless/chat/completions', 'gpt-4o-mini')).provider, 'openai');
  refused(chat('/router/keyless/chat/completions', 'xai/grok-3-mini'), 503, 'provider_key_missing');
});

test('a router chooses for each kind among the members that offer it; none: 400 naming the router', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) seen.add(chosen({ path: '/router/mixed/embeddings', body: { model: 'text-embedding-3-small', input: 'x' } }).provider!);
  assert.deepEqual([...seen], ['openai'], 'groq offers no embeddings');
  const spec = { path: '/router/chatonly/embeddings', body: { model: 'text-embedding-3-small', input: 'x' } };
  assert.throws(
    () => chosen(spec),
    (e: unknown) =>
      e instanceof GatewayError && e.status === 400 && e.code === 'unsupported_endpoint' && e.message === 'router "chatonly" has no provider that offers embeddings (its providers: groq, deepseek)',
  );
  refused({ path: '/router/mixed/embeddings', body: { model: 'groq/some-embedder', input: 'x' } }, 400, 'unsupported_endpoint');
});
