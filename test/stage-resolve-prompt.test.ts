/** Stage resolve-prompt: synchronous without a prompt; a Promise that merges a managed prompt's body. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { resolvePrompt } from '../proxy/stages/resolve-prompt.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

const version = {
  promptId: 'p1',
  versionId: 'v1',
  version: '1.0',
  body: { model: 'openai/gpt-4o-mini', temperature: 0.3, messages: [{ role: 'system', content: 'You are {{svc:persona:string}}.' }] },
};
const gw = makeRuntime({ doc: { svc: { features: 'auth' } }, controlPlane: fakeControlPlane({ prompts: { p1: { ok: true, version } } }) });
const noControlPlane = makeRuntime();
after(async () => {
  await closeRuntime(gw);
  await closeRuntime(noControlPlane);
});

function validated(spec: RequestSpec, runtime = gw) {
  const ctx = makeContext(runtime, spec);
  route(ctx);
  validate(ctx);
  return ctx;
}

test('a body without prompt_id passes synchronously and untouched', () => {
  const ctx = validated({ body: { model: 'openai/gpt-4o-mini', messages: [] } });
  const body = ctx.body;
  assert.equal(resolvePrompt(ctx), undefined);
  assert.equal(ctx.body, body);
  assert.equal(ctx.prompt, null);
});

test('a prompt_id: the version\'s body is merged (inputs substituted, the request\'s members win, its messages follow)', async () => {
  const ctx = validated({ body: { prompt_id: 'p1', inputs: { persona: 'Ada' }, temperature: 0.9, messages: [{ role: 'user', content: 'Hi' }] } });
  const pending = resolvePrompt(ctx);
  assert.ok(pending instanceof Promise);
  await pending;
  assert.equal(ctx.prompt?.versionId, 'v1');
  assert.equal(ctx.body!.model, 'openai/gpt-4o-mini');
  assert.equal(ctx.requestModel, 'openai/gpt-4o-mini');
  assert.equal(ctx.body!.temperature, 0.9);
  assert.deepEqual(ctx.body!.messages, [{ role: 'system', content: 'You are Ada.' }, { role: 'user', content: 'Hi' }]);
  assert.notEqual(ctx.body, ctx.clientBody, 'the client body is kept for the log');
});

test('the merged body is checked by the endpoint kind; a missing input and an unknown prompt are refused', async () => {
  const bad = validated({ body: { prompt_id: 'p1', inputs: { persona: 'Ada' }, temperature: 'warm' } });
  await assert.rejects(resolvePrompt(bad) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.param === 'temperature');
  const missing = validated({ body: { prompt_id: 'p1', inputs: {} } });
  await assert.rejects(resolvePrompt(missing) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.code === 'missing_prompt_input' && e.param === 'inputs.persona');
  const unknown = validated({ body: { prompt_id: 'nope' } });
  await assert.rejects(resolvePrompt(unknown) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.status === 404 && e.code === 'prompt_not_found');
});

test('without a control plane (svc.features none) a prompt is a 400 naming prompt_id', async () => {
  const ctx = validated({ body: { prompt_id: 'p1' } }, noControlPlane);
  await assert.rejects(resolvePrompt(ctx) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'prompt_id');
});
