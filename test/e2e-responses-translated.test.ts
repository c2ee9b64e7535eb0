/**
 * End-to-end: the Responses API on a provider that speaks only chat completions (Groq, played by the
 * stub from OpenAI's recorded chat fixtures), through the openai-responses → openai-chat translator
 * (and on Anthropic and Bedrock, through their translators),
 * driven by the official `openai` client against real processes: `responses.create` and
 * `responses.stream`, function calling, structured output, hosted tools removed and named in
 * `Svc-Removed-Members` and the log, and the gateway's own response store: `previous_response_id`
 * rebuilds the conversation the chat provider receives, `GET`/`DELETE`/`input_items` are answered
 * from the store, an unknown id is OpenAI's 404, input_tokens counts the whole conversation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { AWS_TEST_ENV, fetchRecord, startStack, type Stack } from './support/stack.ts';

const MODEL = 'groq/llama-3.3-70b-versatile';
let stack: Stack;

before(async () => {
  stack = await startStack({
    proxyEnv: AWS_TEST_ENV,
    config: (stub) => ({
      svc: { features: 'observability' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        groq: { 'base-url': `${stub}/openai/v1` },
        anthropic: { 'base-url': `${stub}/v1` },
        bedrock: { 'base-url': stub, region: 'us-east-1' },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
  });
});
after(async () => {
  await stack?.stop();
});

const client = () => new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, maxRetries: 0 });
const upstream = async (): Promise<any[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
const lastUpstream = async () => (await upstream()).at(-1);

/** A chat message's text: its string content, or its text parts joined. */
function textOf(message: { content?: unknown }): string {
  const c = message.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? '').join('') : '';
}

describe('translated to chat completions', () => {
  test('responses.create: a response built from the chat completion; the chat body sent to Groq; logged with its wire format', async () => {
    const { data, response } = await client().responses.create({ model: MODEL, instructions: 'Be brief.', input: 'What is the capital of France?' }).withResponse();
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.equal(data.output_text, 'The capital of France is Paris.');
    assert.equal(data.usage?.input_tokens, 24);
    assert.equal(data.usage?.output_tokens, 8);
    assert.equal(response.headers.get('svc-provider'), 'groq');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/openai/v1/chat/completions');
    assert.equal(sent.body.model, 'llama-3.3-70b-versatile');
    assert.deepEqual(sent.body.messages.map((m: { role: string }) => m.role), ['system', 'user']);
    assert.equal(textOf(sent.body.messages[1]), 'What is the capital of France?');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.request_properties['svc-endpoint'], 'responses');
    assert.equal(rec.request_properties['svc-wire-format'], 'openai-chat');
    assert.equal(rec.response_body.id, data.id);
    assert.equal(rec.prompt_tokens, 24);
  });

  test('responses.stream: Responses events token by token from the chat chunks', async () => {
    const events: string[] = [];
    const stream = client().responses.stream({ model: MODEL, input: 'capital of the UK?' });
    stream.on('event', (e) => events.push(e.type));
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'The capital of the UK is London.');
    assert.equal(final.usage?.input_tokens, 78);
    assert.equal(events[0], 'response.created');
    assert.equal(events.at(-1), 'response.completed');
    assert.ok(events.filter((t) => t === 'response.output_text.delta').length >= 8, 'one delta per chunk');
  });

  test('hosted tools a chat provider cannot run are removed, named in Svc-Removed-Members and in the log', async () => {
    const { response } = await client()
      .responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'web_search' }], store: false })
      .withResponse();
    const removed = response.headers.get('svc-removed-members') ?? '';
    assert.match(removed, /tools\[0\]/);
    assert.equal((await lastUpstream()).body.tools, undefined, 'nothing of the hosted tool reached Groq');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.match(rec.request_properties['svc-removed-members'] ?? '', /tools\[0\]/);
  });

  test('function calling: a function_call item with its call_id; the output goes back as a tool message', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_capital', description: 'capital', parameters: { type: 'object', properties: { country: { type: 'string' } } }, strict: false }];
    const first = await client().responses.create({ model: MODEL, input: 'capital of England?', tools });
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.name, 'get_capital');
    assert.equal(call.call_id, 'call_SkEQ3ZGSJC8m6AvaIGNuuKdm');
    assert.deepEqual(JSON.parse(call.arguments), { country: 'England' });
    assert.equal((await lastUpstream()).body.tools[0].function.name, 'get_capital');
    await client().responses.create({ model: MODEL, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'London' }], tools });
    const sent = await lastUpstream();
    const roles = sent.body.messages.map((m: { role: string }) => m.role);
    assert.deepEqual(roles, ['user', 'assistant', 'tool'], 'the stored conversation, then the tool output');
    assert.equal(sent.body.messages[1].tool_calls[0].id, call.call_id);
    assert.equal(sent.body.messages[2].tool_call_id, call.call_id);
    assert.equal(sent.body.messages[2].content, 'London');
  });

  test('structured output: text.format json_schema becomes response_format', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    await client().responses.create({ model: MODEL, input: 'capital?', text: { format: { type: 'json_schema', name: 'capital', schema, strict: true } } });
    const sent = await lastUpstream();
    assert.equal(sent.body.response_format.type, 'json_schema');
    assert.deepEqual(sent.body.response_format.json_schema.schema, schema);
  });
});

describe('translated to Anthropic and Bedrock', () => {
  test('Anthropic: the Messages body to /v1/messages with the gateway’s key; the message as a response, streamed and not', async () => {
    const { data, response } = await client().responses.create({ model: 'anthropic/claude-sonnet-4-5', instructions: 'Be brief.', input: 'What is Python?' }).withResponse();
    assert.equal(response.headers.get('svc-provider'), 'anthropic');
    assert.match(data.output_text, /^Python is a beginner-friendly/);
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], 'sk-ant-provider-secret');
    assert.equal(sent.body.system, 'Be brief.');
    const final = await client().responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: '1+1?' }).finalResponse();
    assert.equal(final.output_text, '2');
    const made = await client().responses.create({ model: 'anthropic/claude-sonnet-4-5', previous_response_id: data.id, input: 'More?' });
    assert.equal(made.status, 'completed');
    assert.deepEqual(
      (await lastUpstream()).body.messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user'],
      'the stored conversation reaches Anthropic too',
    );
  });

  test("a 400 from the chat step names the client's Responses member, in OpenAI's shape; nothing goes upstream", async () => {
    const before = (await upstream()).length;
    const input = [
      { role: 'user' as const, content: 'List the files.' },
      { type: 'function_call' as const, call_id: 'c1', name: 'ls', arguments: '{}' },
      { type: 'function_call' as const, call_id: 'c2', name: 'cat', arguments: '{"path": ' },
      { type: 'function_call_output' as const, call_id: 'c1', output: 'a.txt' },
      { type: 'function_call_output' as const, call_id: 'c2', output: 'hi' },
    ];
    const tools = ['ls', 'cat'].map((name) => ({ type: 'function' as const, name, parameters: { type: 'object' }, strict: false }));
    const err = await client()
      .responses.create({ model: 'anthropic/claude-sonnet-4-5', input, tools })
      .then(() => null, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.param, 'input[2].arguments');
    assert.equal(err.message, '400 input[2].arguments is not valid JSON');
    assert.equal((await upstream()).length, before);
  });

  test('Bedrock: Converse with the answer as a response', async () => {
    const { data, response } = await client().responses.create({ model: 'bedrock/anthropic.claude-3-haiku-20240307-v1:0', input: 'hi' }).withResponse();
    assert.equal(response.headers.get('svc-provider'), 'bedrock');
    assert.equal(data.status, 'completed');
    assert.ok(data.output_text.length > 0);
    assert.match((await lastUpstream()).url, /\/converse$/);
  });
});

describe('the gateway’s response store', () => {
  test('previous_response_id: the chat provider receives the whole conversation (without the earlier instructions)', async () => {
    const first = await client().responses.create({ model: MODEL, instructions: 'Be brief.', input: 'What is the capital of France?' });
    const second = await client().responses.create({ model: MODEL, previous_response_id: first.id, input: 'And of Germany?' });
    assert.notEqual(second.id, first.id);
    const sent = await lastUpstream();
    assert.deepEqual(
      sent.body.messages.map((m: { role: string; content?: unknown }) => [m.role, textOf(m)]),
      [
        ['user', 'What is the capital of France?'],
        ['assistant', 'The capital of France is Paris.'],
        ['user', 'And of Germany?'],
      ],
    );
    assert.equal(sent.body.previous_response_id, undefined);
    // A third turn chains through the second.
    await client().responses.create({ model: MODEL, previous_response_id: second.id, input: 'Thanks.' });
    assert.equal((await lastUpstream()).body.messages.length, 5);
  });

  test('retrieve, input_items and delete are answered from the store; nothing goes upstream', async () => {
    const made = await client().responses.create({ model: MODEL, input: 'What is the capital of France?' });
    const before = (await upstream()).length;
    const got = await client().responses.retrieve(made.id);
    assert.equal(got.id, made.id);
    assert.equal(got.output_text, 'The capital of France is Paris.');
    const items = await client().responses.inputItems.list(made.id);
    assert.equal(items.data.length, 1);
    assert.equal(items.data[0]!.type, 'message');
    assert.deepEqual((items.data[0] as OpenAI.Responses.ResponseInputMessageItem).content, [{ type: 'input_text', text: 'What is the capital of France?' }]);
    const cancel = await client().responses.cancel(made.id).catch((e: unknown) => e);
    assert.ok(cancel instanceof OpenAI.BadRequestError);
    const del = await fetch(`${stack.gatewayUrl}/ai/responses/${made.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.deepEqual(await del.json(), { id: made.id, object: 'response', deleted: true });
    assert.equal((await upstream()).length, before, 'the store answered');
    const gone = await client().responses.create({ model: MODEL, previous_response_id: made.id, input: 'again' }).catch((e: unknown) => e);
    assert.ok(gone instanceof OpenAI.NotFoundError);
  });

  test('input_items pages as OpenAI does: newest first by default, limit and after', async () => {
    const first = await client().responses.create({ model: MODEL, input: 'one' });
    const second = await client().responses.create({ model: MODEL, previous_response_id: first.id, input: [{ role: 'user', content: 'two' }] });
    const page = await client().responses.inputItems.list(second.id, { limit: 2 });
    assert.equal(page.data.length, 2);
    assert.equal(page.has_more, true);
    assert.equal(((page.data[0] as OpenAI.Responses.ResponseInputMessageItem).content[0] as { text: string }).text, 'two');
    assert.equal(page.data[1]!.type, 'message', "the first response's answer");
    const rest = await client().responses.inputItems.list(second.id, { limit: 2, after: page.data[1]!.id });
    assert.equal(rest.data.length, 1);
    assert.equal(((rest.data[0] as OpenAI.Responses.ResponseInputMessageItem).content[0] as { text: string }).text, 'one');
    assert.equal(rest.has_more, false);
  });

  test('store: false keeps nothing; an unknown id is OpenAI’s 404 and nothing is sent', async () => {
    const unstored = await client().responses.create({ model: MODEL, input: 'x', store: false });
    const before = (await upstream()).length;
    const err = await client().responses.create({ model: MODEL, previous_response_id: unstored.id, input: 'y' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.deepEqual(err.error, {
      message: `Previous response with id '${unstored.id}' not found.`,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
    assert.equal((await upstream()).length, before);
  });

  test('input_tokens: the estimate counts the stored conversation too', async () => {
    const first = await client().responses.create({ model: MODEL, input: 'What is the capital of France? '.repeat(20) });
    const alone = await client().responses.inputTokens.count({ model: MODEL, input: 'And of Germany?' });
    const withHistory = await client().responses.inputTokens.count({ model: MODEL, previous_response_id: first.id, input: 'And of Germany?' });
    assert.ok(withHistory.input_tokens > alone.input_tokens + 100, `${withHistory.input_tokens} vs ${alone.input_tokens}`);
  });
});
