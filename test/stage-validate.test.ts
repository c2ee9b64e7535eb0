/**
 * Stage validate: UTF-8 JSON object bounded in depth, then each endpoint kind's member checks, each
 * failure naming the member; the model's byte span, Svc-Model-Override, and the text kept for the log.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime, type RequestSpec } from './support/stage-context.ts';

const gw = makeRuntime();
const observed = makeRuntime({ doc: { svc: { features: 'observability' } }, controlPlane: fakeControlPlane() });
after(async () => {
  await closeRuntime(gw);
  await closeRuntime(observed);
});

const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const EMB = { model: 'openai/text-embedding-3-small', input: 'hi' };

function validated(spec: RequestSpec, runtime = gw) {
  const ctx = makeContext(runtime, spec);
  route(ctx);
  validate(ctx);
  return ctx;
}

/** Asserts the body is refused with a 400 whose `param` (and `code`) name the member. */
function refused(path: string, body: unknown, param: string | null, code?: string) {
  assert.throws(
    () => validated({ path, body }),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param && (code === undefined || e.code === code),
    `${JSON.stringify(body)} → ${param}`,
  );
}

test('a good chat body is parsed; ctx.body is the client body; the model span is the bytes JSON.parse read', () => {
  const raw = JSON.stringify({ ...CHAT, temperature: 0.2, stream: false, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] });
  const ctx = validated({ body: raw });
  assert.equal(ctx.body, ctx.clientBody);
  assert.equal(ctx.requestModel, 'openai/gpt-4o-mini');
  assert.equal(ctx.kind.name, 'chat');
  assert.equal(raw.slice(ctx.modelStart, ctx.modelEnd), '"openai/gpt-4o-mini"');
  assert.equal(ctx.rawBodyLogged, false, 'the bytes are logged as they are only with the request log');
});

test('a model written with escapes has no span (the body is serialized, not spliced)', () => {
  const ctx = validated({ body: '{"model":"openai\\/gpt-4o-mini","messages":[]}' });
  assert.equal(ctx.modelStart, -1);
  assert.equal(ctx.body!.model, 'openai/gpt-4o-mini');
});

test('observability logs the body bytes as they are; Svc-Model-Override replaces the model (and the bytes are then not the body)', () => {
  const raw = JSON.stringify(CHAT);
  assert.equal(validated({ body: raw }, observed).rawBodyLogged, true);
  const ctx = validated({ body: raw, headers: { 'Svc-Model-Override': 'openai/gpt-4o' } }, observed);
  assert.equal(ctx.body!.model, 'openai/gpt-4o');
  assert.equal(ctx.requestModel, 'openai/gpt-4o');
  assert.equal(ctx.rawBodyLogged, false);
});

test('not UTF-8, not JSON, too deep, or not an object: 400 with its code', () => {
  refused('/ai/chat/completions', Buffer.from([0x7b, 0xff, 0x7d]), null, 'invalid_encoding');
  refused('/ai/chat/completions', '{"model":', null, 'invalid_json');
  refused('/ai/chat/completions', '', null, 'invalid_json');
  refused('/ai/chat/completions', '['.repeat(129) + ']'.repeat(129), null, 'too_deep');
  refused('/ai/chat/completions', '[]', null, 'invalid_body');
  refused('/ai/chat/completions', 'null', null, 'invalid_body');
  refused('/ai/chat/completions', '"text"', null, 'invalid_body');
});

test('chat: each wrong member is named', () => {
  const chat = (extra: Record<string, unknown>) => ({ ...CHAT, ...extra });
  const path = '/ai/chat/completions';
  refused(path, { messages: [] }, 'model', 'missing_model');
  refused(path, chat({ model: '' }), 'model', 'missing_model');
  refused(path, chat({ model: 7 }), 'model', 'missing_model');
  refused(path, chat({ temperature: 'hot' }), 'temperature', 'invalid_type');
  refused(path, chat({ max_tokens: '10' }), 'max_tokens', 'invalid_type');
  // 1e999 parses as Infinity: a number, but not a finite one.
  refused(path, '{"model":"openai/x","messages":[],"seed":1e999}', 'seed', 'invalid_type');
  refused(path, chat({ stream: 'yes' }), 'stream', 'invalid_type');
  refused(path, chat({ user: 1 }), 'user', 'invalid_type');
  refused(path, { model: 'openai/x' }, 'messages', 'missing_messages');
  refused(path, chat({ messages: [{ content: 'no role' }] }), 'messages[0]', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'user', content: 'ok' }, 'text'] }), 'messages[1]', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'user', content: 5 }] }), 'messages[0].content', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }), 'messages[0].content[0]', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] }), 'messages[0].content[0].text', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'user', content: 'x', name: 1 }] }), 'messages[0].name', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'tool', content: 'x', tool_call_id: 1 }] }), 'messages[0].tool_call_id', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'assistant', tool_calls: {} }] }), 'messages[0].tool_calls', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'assistant', tool_calls: [{ function: { name: 'f', arguments: {} } }] }] }), 'messages[0].tool_calls[0]', 'invalid_message');
  refused(path, chat({ messages: [{ role: 'assistant', tool_calls: [{ id: 3, function: { name: 'f' } }] }] }), 'messages[0].tool_calls[0].id', 'invalid_message');
  refused(path, chat({ stream_options: true }), 'stream_options', 'invalid_type');
  refused(path, chat({ response_format: 'json' }), 'response_format', 'invalid_type');
  refused(path, chat({ stop: ['a', 1] }), 'stop', 'invalid_type');
  refused(path, chat({ tool_choice: 1 }), 'tool_choice', 'invalid_type');
  refused(path, chat({ tools: {} }), 'tools', 'invalid_type');
  refused(path, chat({ tools: [{ type: 'function', function: { name: 1 } }] }), 'tools[0]', 'invalid_type');
  refused(path, chat({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }), 'tools[0].function.parameters', 'invalid_type');
});

test('embeddings: input is required and typed; chat members are not asked for', () => {
  const path = '/ai/embeddings';
  const ctx = validated({ path, body: { ...EMB, input: [[1, 2], 'text', 3] } });
  assert.equal(ctx.kind.name, 'embeddings');
  validated({ path, body: { ...EMB, dimensions: 64 } });
  refused(path, { model: 'openai/x' }, 'input', 'missing_input');
  refused(path, { ...EMB, input: [1.5] }, 'input', 'invalid_type');
  refused(path, { ...EMB, input: { text: 'x' } }, 'input', 'invalid_type');
  refused(path, { ...EMB, dimensions: 'big' }, 'dimensions', 'invalid_type');
  refused(path, { input: 'x' }, 'model', 'missing_model');
});

test('a body naming a managed prompt: only the prompt members are checked here (the kind checks the merged body later)', () => {
  const ctx = validated({ body: { prompt_id: 'p1', inputs: { a: 1 } } });
  assert.equal(ctx.requestModel, null);
  refused('/ai/chat/completions', { prompt_id: '' }, 'prompt_id', 'invalid_type');
  refused('/ai/chat/completions', { prompt_id: 'p', version_id: 1 }, 'version_id', 'invalid_type');
  refused('/ai/chat/completions', { prompt_id: 'p', environment: [] }, 'environment', 'invalid_type');
  refused('/ai/chat/completions', { prompt_id: 'p', inputs: [] }, 'inputs', 'invalid_type');
});
