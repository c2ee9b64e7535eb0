/** Stage token-limit: the header's handler shortens a body over a (tiny) input allowance; nothing without it. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { buildConfig } from '../shared/config.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { GatewayError } from '../proxy/errors.ts';
import { route } from '../proxy/stages/route.ts';
import { tokenLimit } from '../proxy/stages/token-limit.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';
import { prose } from './support/text.ts';

const gw = makeRuntime({ doc: { routers: { r: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } } } } });
// A model that may write its whole window (a `models:` override, as main.ts applies them), so
// `max_tokens` sets any input allowance: the reservation is capped at the model's output limit.
const window = 20_000;
applyModelOverrides(buildConfig({ models: { 'openai/roomy': { 'context-window': window, 'max-output-tokens': window } } }).models);
after(async () => {
  applyModelOverrides({});
  await closeRuntime(gw);
});

/** A body whose `max_tokens` leaves an input allowance of `allowed` tokens. */
const tight = (allowed: number, text: string, model = 'openai/roomy') => ({ model, max_tokens: window - allowed, messages: [{ role: 'user', content: text }] });

function validated(spec: RequestSpec) {
  const ctx = makeContext(gw, spec);
  route(ctx);
  validate(ctx);
  return ctx;
}

test('no header: nothing is estimated and the body is the client\'s', () => {
  const ctx = validated({ body: tight(50, prose(4000)) });
  tokenLimit(ctx);
  assert.equal(ctx.tokenLimit, null);
  assert.equal(ctx.body, ctx.clientBody);
});

test('truncate on a tiny window: a rewritten copy within the allowance, the client body untouched', () => {
  const text = prose(4000);
  const ctx = validated({ body: tight(200, text), headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
  tokenLimit(ctx);
  const r = ctx.tokenLimit!;
  assert.equal(r.handler, 'truncate');
  assert.equal(r.allowedInput, 200);
  assert.ok(r.tokensBefore! > 200);
  assert.ok(r.tokensAfter! <= 200, `${r.tokensAfter} tokens after`);
  assert.notEqual(ctx.body, ctx.clientBody);
  assert.ok((ctx.body!.messages[0]!.content as string).length < text.length);
  assert.equal(ctx.body!.model, 'openai/roomy', 'the model keeps its provider prefix on /ai');
  assert.equal(ctx.clientBody!.messages[0]!.content, text);
});

test('within the limit the body stays the client\'s (its bytes can still be forwarded)', () => {
  const ctx = validated({ body: tight(10_000, 'short'), headers: { 'Svc-Token-Limit-Exception-Handler': 'middle-out' } });
  tokenLimit(ctx);
  assert.equal(ctx.tokenLimit!.skipped, 'within-limit');
  assert.equal(ctx.body, ctx.clientBody);
});

test('on a router a bare model is measured against the router\'s members (here one); the model stays bare', () => {
  const ctx = validated({ path: '/router/r/chat/completions', body: tight(200, prose(4000), 'roomy'), headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
  tokenLimit(ctx);
  assert.equal(ctx.tokenLimit!.allowedInput, 200);
  assert.equal(ctx.body!.model, 'roomy');
});

test('embeddings take no handler, but an unknown handler name is refused for every kind', () => {
  const emb = validated({ path: '/ai/embeddings', body: { model: 'openai/text-embedding-3-small', input: prose(4000) }, headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
  tokenLimit(emb);
  assert.equal(emb.tokenLimit, null);
  const bad = validated({ path: '/ai/embeddings', body: { model: 'openai/text-embedding-3-small', input: 'x' }, headers: { 'Svc-Token-Limit-Exception-Handler': 'shrink' } });
  assert.throws(() => tokenLimit(bad), (e: unknown) => e instanceof GatewayError && e.code === 'invalid_token_limit_handler');
});
