/**
 * End-to-end: a provider's error bodies reach OpenAI-dialect clients as OpenAI's error object. Gemini's
 * OpenAI-compatible endpoint wraps its error in a one-element array (`[{"error": {code, message, status}}]`),
 * which the `openai` SDK cannot read ("400 status code (no body)"); through chat completions, embeddings and
 * Responses (plain and streamed) the client gets `{"error": {message, type, param, code}}` with Gemini's message
 * and HTTP status, as a Messages client already got it in Anthropic's shape. The provider is played by
 * test/support/provider-quirks-stub.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startStubbedStack, type StubbedStack } from './support/stack.ts';

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack('test/support/provider-quirks-stub.ts', (stub) => ({ providers: { gemini: { 'base-url': `${stub}/v1beta/openai` } } }));
});
after(async () => {
  await s?.stop();
});

const client = () => new OpenAI({ baseURL: `${s.stack.gatewayUrl}/ai`, apiKey: s.stack.apiKey, maxRetries: 0 });
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${s.stack.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
};
const UNKNOWN_NAME = 'Invalid JSON payload received. Unknown name "foo": Cannot find field.';

/** What the `openai` SDK threw: an APIError whose status, message and error object are asserted. */
async function sdkError(call: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof OpenAI.APIError, String(err));
    return err;
  }
  assert.fail('the call succeeded');
}

/** Asserts OpenAI's error object with Gemini's message, the type of the status and no array around it. */
function assertOpenAIError(body: any, message: string, type: string): void {
  assert.ok(!Array.isArray(body), `an array reached the client: ${JSON.stringify(body)}`);
  assert.equal(body.error.message, message);
  assert.equal(body.error.type, type);
  assert.ok('param' in body.error && 'code' in body.error, JSON.stringify(body));
}

describe("Gemini's array-wrapped errors, to OpenAI-dialect clients", () => {
  test('chat completions: the SDK reads the 400 and its message', async () => {
    const err = await sdkError(() => client().chat.completions.create({ model: 'gemini/error-400', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(err.status, 400);
    assert.equal(err.message, `400 ${UNKNOWN_NAME}`);
    assert.equal(err.type, 'invalid_request_error');
    const raw = await post('/ai/chat/completions', { model: 'gemini/error-400', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(raw.status, 400);
    assert.match(raw.type!, /^application\/json/);
    assertOpenAIError(raw.body, UNKNOWN_NAME, 'invalid_request_error');
    assert.equal(raw.body.error.code, 'INVALID_ARGUMENT', "Google's status name is the code");
  });

  test('chat completions: a quota 429 keeps its status and message', async () => {
    const err = await sdkError(() => client().chat.completions.create({ model: 'gemini/error-429', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(err.status, 429);
    assert.equal(err.message, '429 Resource has been exhausted (e.g. check quota).');
    assert.equal(err.code, 'RESOURCE_EXHAUSTED');
  });

  test('a streamed chat completion refused before its stream', async () => {
    const err = await sdkError(() => client().chat.completions.create({ model: 'gemini/error-400', messages: [{ role: 'user', content: 'x' }], stream: true }));
    assert.equal(err.status, 400);
    assert.equal(err.message, `400 ${UNKNOWN_NAME}`);
  });

  test('embeddings', async () => {
    const err = await sdkError(() => client().embeddings.create({ model: 'gemini/error-400', input: 'x' }));
    assert.equal(err.status, 400);
    assert.equal(err.message, `400 ${UNKNOWN_NAME}`);
    assertOpenAIError((await post('/ai/embeddings', { model: 'gemini/error-400', input: 'x' })).body, UNKNOWN_NAME, 'invalid_request_error');
  });

  test('Responses, plain and streamed', async () => {
    for (const stream of [false, true]) {
      const raw = await post('/ai/responses', { model: 'gemini/error-400', input: 'x', stream });
      assert.equal(raw.status, 400, `stream: ${stream}`);
      assertOpenAIError(raw.body, UNKNOWN_NAME, 'invalid_request_error');
    }
    const err = await sdkError(() => client().responses.create({ model: 'gemini/error-429', input: 'x' }));
    assert.equal(err.status, 429);
    assert.equal(err.message, '429 Resource has been exhausted (e.g. check quota).');
  });

  test("a Messages client still gets Anthropic's shape", async () => {
    const raw = await post('/v1/messages', { model: 'gemini/error-400', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(raw.status, 400);
    assert.deepEqual(raw.body, { type: 'error', error: { type: 'invalid_request_error', message: UNKNOWN_NAME } });
  });

  test('an answer that is not an error still passes through', async () => {
    const data = await client().chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(data.object, 'chat.completion');
  });
});
