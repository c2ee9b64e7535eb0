/**
 * End-to-end: what truncate and middle-out reserve for the output, and what they answer when a
 * body cannot fit, through the running gateway. `openai/tiny` is a `models:` override: a 1,000-token
 * window and at most 100 output tokens, so at most 100 are reserved, whatever `max_tokens` asks.
 *
 *  - A `max_tokens` over the model's output limit reserves the limit (not 1000 − 5000 → no input).
 *  - When even the handler's minimum (the start of the first system message and of the last user
 *    message, the other texts at the marker) is over the allowance, the caller gets a 400
 *    `context_length_exceeded` in its own dialect naming the context window; nothing goes upstream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { estimateChatTokens } from '../proxy/tokenlimit/index.ts';
import { buildConfig } from '../shared/config.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { clearStubRequests, defaultConfig, fetchRecord, startStack, stubRequests, type Stack } from './support/stack.ts';
import { prose } from './support/text.ts';

const MODELS = { 'openai/tiny': { 'context-window': 1000, 'max-output-tokens': 100 } };
/** Input tokens openai/tiny allows with the most output reserved (1000 − 100). */
const ALLOWED = 900;

let stack: Stack;
before(async () => {
  applyModelOverrides(buildConfig({ models: MODELS }).models);
  stack = await startStack({ config: (stub) => ({ ...defaultConfig(stub), models: MODELS }) });
});
after(async () => {
  await stack?.stop();
  applyModelOverrides({});
});

const SYSTEM = 'You are the support assistant of a gateway. Answer briefly.';
const QUESTION = 'Given all that, what is the refund policy for annual plans?';

/** Twelve messages: the system prompt, ten turns of about `turnTokens` tokens, the question. */
function twelve(turnTokens: number) {
  const turns = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: prose(turnTokens * 6, 10 + i) }));
  return [{ role: 'system', content: SYSTEM }, ...turns, { role: 'user', content: QUESTION }];
}

/** `n` short alternating messages after the system prompt, ending with the question: each is tiny, together they are not. */
function many(n: number) {
  const turns = Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Note ${i}: ${prose(90, i)}` }));
  return [{ role: 'system', content: SYSTEM }, ...turns, { role: 'user', content: QUESTION }];
}

/** POSTs `body` to `path` with `headers`; the status, the JSON answer and its Svc-Id. */
async function post(path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; json: any; id: string }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json(), id: res.headers.get('svc-id') ?? '' };
}
const openaiHeaders = (handler: string) => ({ authorization: `Bearer ${stack.apiKey}`, 'svc-token-limit-exception-handler': handler });
const anthropicHeaders = (handler: string) => ({ 'x-api-key': stack.apiKey, 'anthropic-version': '2023-06-01', 'svc-token-limit-exception-handler': handler });

describe('the output reservation is at most the model\'s output limit', () => {
  test('max_tokens 5000 on a 1000-token model: the conversation is cut to 900 tokens, the system prompt and the question kept', async () => {
    const body = { model: 'openai/tiny', max_tokens: 5000, messages: twelve(150) };
    const before = estimateChatTokens(body as never, 'openai', 'tiny');
    assert.ok(before > ALLOWED, `over the limit (${before})`);
    await clearStubRequests(stack.stubUrl);
    const r = await post('/ai/chat/completions', body, openaiHeaders('truncate'));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const sent = (await stubRequests(stack.stubUrl)).at(-1)!.body;
    assert.equal(sent.messages.length, 12);
    assert.equal(sent.messages[0].content, SYSTEM, 'the system prompt is whole');
    assert.equal(sent.messages[11].content, QUESTION, 'the question is whole');
    for (const m of sent.messages.slice(1, 11)) assert.match(m.content, /^\S+ .* … \[truncated\]$/, 'each turn keeps its start');
    const after = estimateChatTokens(sent, 'openai', 'tiny');
    assert.ok(after <= ALLOWED && after > ALLOWED * 0.8, `sent ${after} tokens: cut to the allowance, not far below`);
    const rec = await fetchRecord(stack, r.id);
    assert.equal(Number(rec.properties['svc-token-limit-tokens-after']), after);
  });

  test('Messages with Claude Code\'s max_tokens 128000: the system prompt and the question reach the model', async () => {
    const body = { model: 'openai/tiny', max_tokens: 128_000, system: SYSTEM, messages: twelve(150).slice(1) };
    await clearStubRequests(stack.stubUrl);
    const r = await post('/ai/v1/messages', body, anthropicHeaders('truncate'));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const sent = (await stubRequests(stack.stubUrl)).at(-1)!.body;
    assert.equal(sent.messages[0].role, 'system');
    assert.equal(sent.messages[0].content, SYSTEM);
    assert.equal(sent.messages.at(-1).content, QUESTION);
    assert.ok(estimateChatTokens(sent, 'openai', 'tiny') <= ALLOWED);
  });
});

describe('a body whose minimum cannot fit is refused with a 400 naming the context window', () => {
  test('truncate, 150 messages on /ai chat completions: OpenAI\'s error shape, nothing sent upstream, the outcome logged', async () => {
    const body = { model: 'openai/tiny', messages: many(150) };
    await clearStubRequests(stack.stubUrl);
    const r = await post('/ai/chat/completions', body, openaiHeaders('truncate'));
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'context_length_exceeded');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(r.json.error.param, 'messages');
    assert.match(r.json.error.message, /context window of openai\/tiny: 1000 tokens, 100 of them reserved for the output, leaves 900 for the input/);
    assert.deepEqual(await stubRequests(stack.stubUrl), [], 'no provider call');
    const rec = await fetchRecord(stack, r.id);
    assert.equal(rec.response_status, 400);
    assert.equal(rec.properties['svc-token-limit-handler'], 'truncate');
    assert.ok(Number(rec.properties['svc-token-limit-tokens-after']) > ALLOWED);
  });

  test('middle-out, a tool definition larger than the window: refused the same way', async () => {
    const tool = { type: 'function', function: { name: 'lookup', description: prose(1500 * 6, 7), parameters: { type: 'object', properties: {} } } };
    const body = { model: 'openai/tiny', tools: [tool], messages: twelve(150) };
    await clearStubRequests(stack.stubUrl);
    const r = await post('/ai/chat/completions', body, openaiHeaders('middle-out'));
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'context_length_exceeded');
    assert.match(r.json.error.message, /context window of openai\/tiny: 1000 tokens/);
    assert.match(r.json.error.message, /middle-out/);
    assert.deepEqual(await stubRequests(stack.stubUrl), []);
  });

  test('truncate on Messages: the 400 in Anthropic\'s error shape', async () => {
    const body = { model: 'openai/tiny', max_tokens: 1024, system: SYSTEM, messages: many(150).slice(1) };
    await clearStubRequests(stack.stubUrl);
    const r = await post('/ai/v1/messages', body, anthropicHeaders('truncate'));
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, /context window of openai\/tiny: 1000 tokens/);
    assert.deepEqual(await stubRequests(stack.stubUrl), []);
  });
});
