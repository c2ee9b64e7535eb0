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
const P2 = '6f1c2a5e-1b7d-4c1e-9a57-3f0c9d1e2b40';
const streaming = {
  promptId: P2,
  versionId: '0b6a1f43-8d2e-4f5a-b1c9-7e3d2a1f0c58',
  version: '0.1',
  body: { model: 'openai/gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'Hi {{svc:who:string}}' }] },
};
const gw = makeRuntime({
  doc: { svc: { features: 'auth' } },
  controlPlane: fakeControlPlane({
    prompts: {
      p1: { ok: true, version },
      [P2]: { ok: true, version: streaming },
      '7c0e4b1a-2f3d-4e5a-8b6c-9d0e1f2a3b4c': { ok: false, status: 404, error: 'environment "staging" not found in prompt 7c0e4b1a-2f3d-4e5a-8b6c-9d0e1f2a3b4c' },
      v404: { ok: false, status: 404, error: 'version "x" not found in prompt v404' },
    },
  }),
});
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

test('the prompt does not choose the transport: stream never, stream_options only for a streaming request', async () => {
  const plain = validated({ body: { prompt_id: P2, inputs: { who: 'Ada' } } });
  await resolvePrompt(plain);
  assert.equal(plain.body!.stream, undefined);
  assert.equal(plain.body!.stream_options, undefined);
  const off = validated({ body: { prompt_id: P2, inputs: { who: 'Ada' }, stream: false } });
  await resolvePrompt(off);
  assert.equal(off.body!.stream, false);
  assert.equal(off.body!.stream_options, undefined);
  const on = validated({ body: { prompt_id: P2, inputs: { who: 'Ada' }, stream: true } });
  await resolvePrompt(on);
  assert.deepEqual(on.body!.stream_options, { include_usage: true });
  const own = validated({ body: { prompt_id: P2, inputs: { who: 'Ada' }, stream: true, stream_options: { include_usage: false } } });
  await resolvePrompt(own);
  assert.deepEqual(own.body!.stream_options, { include_usage: false }, "the request's own stream_options win");
});

test('a failed resolution leaves ctx.prompt naming the prompt (the version once found) for the log record', async () => {
  const missing = validated({ body: { prompt_id: P2, inputs: {} } });
  await assert.rejects(resolvePrompt(missing) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.code === 'missing_prompt_input');
  assert.equal(missing.prompt?.promptId, P2);
  assert.equal(missing.prompt?.versionId, streaming.versionId);
  assert.equal(missing.prompt?.version, '0.1');
  const env = validated({ body: { prompt_id: '7c0e4b1a-2f3d-4e5a-8b6c-9d0e1f2a3b4c', environment: 'staging' } });
  await assert.rejects(resolvePrompt(env) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.status === 404 && e.param === 'environment');
  assert.equal(env.prompt?.promptId, '7c0e4b1a-2f3d-4e5a-8b6c-9d0e1f2a3b4c');
  assert.equal(env.prompt?.versionId, null);
  assert.equal(env.prompt?.environment, 'staging');
  const version = validated({ body: { prompt_id: 'v404', version_id: 'x' } });
  await assert.rejects(resolvePrompt(version) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.status === 404 && e.param === 'version_id');
  assert.equal(version.prompt, null, 'an id that is no UUID names no prompt of admin\'s: not linked');
  const unknown = validated({ body: { prompt_id: 'nope' } });
  await assert.rejects(resolvePrompt(unknown) as Promise<void>, (e: unknown) => e instanceof GatewayError && e.status === 404 && e.param === 'prompt_id');
});
