/**
 * A managed prompt (`prompt_id`) on the Messages, Responses or embeddings API (and the token-count paths) is
 * refused as such even when the body has no `model`: the refusal says where managed prompts are
 * served, not that a model is missing (which sent the client looking for the wrong fix).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

const gw = makeRuntime({ env: { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' } });
after(() => closeRuntime(gw));

const CASES: Array<[path: string, body: Record<string, unknown>, api: string]> = [
  ['/v1/messages', { prompt_id: 'p1', max_tokens: 1, messages: [] }, 'Messages'],
  ['/v1/messages/count_tokens', { prompt_id: 'p1', messages: [] }, 'Messages'],
  ['/v1/responses', { prompt_id: 'p1', input: 'hi' }, 'Responses'],
  ['/v1/responses/input_tokens', { prompt_id: 'p1', input: 'hi' }, 'Responses'],
  // Embeddings merged a chat prompt's messages and temperature into the provider's body.
  ['/v1/embeddings', { prompt_id: 'p1', input: 'hi' }, 'embeddings'],
];

for (const [path, body, api] of CASES) {
  test(`${path}: prompt_id is refused before the missing model, and with a model too`, () => {
    for (const b of [body, { ...body, model: api === 'Messages' ? 'claude-sonnet-4-5' : api === 'embeddings' ? 'text-embedding-3-small' : 'gpt-4.1-mini' }]) {
      const ctx = makeContext(gw, { path, body: b });
      route(ctx);
      assert.throws(
        () => validate(ctx),
        (e: unknown) =>
          e instanceof GatewayError &&
          e.status === 400 &&
          e.code === 'unsupported_member' &&
          e.param === 'prompt_id' &&
          e.message === `managed prompts ("prompt_id") are served on chat completions, not on the ${api} API`,
        JSON.stringify(b),
      );
    }
  });
}

test('without prompt_id a missing model is still the answer', () => {
  for (const [path, body] of CASES) {
    const { prompt_id: _, ...rest } = body;
    const ctx = makeContext(gw, { path, body: rest });
    route(ctx);
    assert.throws(() => validate(ctx), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.code === 'missing_model' && e.param === 'model', path);
  }
});
