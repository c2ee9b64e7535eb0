/**
 * Stage translate: the passthrough fast path forwards the client's own bytes with only the model
 * spliced in; a provider with another wire format builds its own body; a rewritten body is serialized.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { chooseProvider } from '../proxy/stages/choose-provider.ts';
import { resolvePrompt } from '../proxy/stages/resolve-prompt.ts';
import { route } from '../proxy/stages/route.ts';
import { translate } from '../proxy/stages/translate.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

const prompt = { promptId: 'p1', versionId: 'v1', version: '1.0', body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }] } };
const gw = makeRuntime({ doc: { svc: { features: 'auth' } }, controlPlane: fakeControlPlane({ prompts: { p1: { ok: true, version: prompt } } }) });
after(() => closeRuntime(gw));

async function translated(spec: RequestSpec) {
  const ctx = makeContext(gw, spec);
  route(ctx);
  validate(ctx);
  await resolvePrompt(ctx);
  chooseProvider(ctx);
  const pending = translate(ctx);
  if (pending) await pending;
  return ctx;
}

test('passthrough: the client\'s bytes exactly, with the provider\'s model spliced in', async () => {
  // Spacing, member order, unicode escapes and unknown members as the client wrote them.
  const raw = '{ "messages" : [{"role":"user","content":"caf\\u00e9 \u00e9"}],\n  "model":"openai/gpt-4o-mini", "x_custom": {"a":[1,2]} }';
  const ctx = await translated({ body: raw });
  const expected = Buffer.from('{ "messages" : [{"role":"user","content":"caf\\u00e9 \u00e9"}],\n  "model":"gpt-4o-mini", "x_custom": {"a":[1,2]} }');
  assert.deepEqual(ctx.call!.rawBody, expected);
  assert.deepEqual(ctx.upstream!.body, expected);
  assert.equal(ctx.upstream!.headers['content-length'], String(expected.length));
  assert.equal(ctx.upstream!.url.href, 'https://api.openai.com/v1/chat/completions');
  assert.equal(ctx.upstream!.headers.authorization, 'Bearer sk-test');
  assert.equal(ctx.body!.model, 'openai/gpt-4o-mini', 'ctx.body keeps the model it was chosen from');
});

test('passthrough with a rewritten body (a prompt): serialized again, prompt members stripped', async () => {
  const ctx = await translated({ body: { prompt_id: 'p1', inputs: {}, messages: [{ role: 'user', content: 'hi' }] } });
  assert.equal(ctx.call!.rawBody, undefined);
  const sent = JSON.parse(ctx.upstream!.body.toString());
  assert.equal(sent.model, 'gpt-4o-mini');
  assert.deepEqual(sent.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }]);
  for (const k of ['prompt_id', 'version_id', 'environment', 'inputs']) assert.ok(!(k in sent), k);
});

test('a provider with its own wire format (Anthropic Messages) builds its own body', async () => {
  const raw = JSON.stringify({ model: 'anthropic/claude-3-5-haiku-latest', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], max_tokens: 50 });
  const ctx = await translated({ body: raw });
  assert.notDeepEqual(ctx.upstream!.body, Buffer.from(raw));
  const sent = JSON.parse(ctx.upstream!.body.toString());
  assert.equal(sent.model, 'claude-3-5-haiku-latest');
  assert.equal(sent.max_tokens, 50);
  assert.equal(sent.system, 'Be brief.');
  assert.deepEqual(sent.messages.map((m: { role: string }) => m.role), ['user']);
  assert.equal(ctx.upstream!.url.href, 'https://api.anthropic.com/v1/messages');
  assert.equal(ctx.upstream!.headers['x-api-key'], 'sk-ant-test');
  assert.equal(ctx.upstream!.headers['content-length'], String(ctx.upstream!.body.length));
});
