/**
 * OpenAI Responses records through ingestion and the REST API, on a real database: `llmSchema`
 * mapped from the recorded Responses fixtures (a string input and its text answer; a function call,
 * then the follow-up turn carrying `function_call` / `function_call_output` items; reasoning
 * summaries) and from Codex's captured request (developer messages in `input_text` parts, functions,
 * a namespace flattened, a hosted tool). Every SvcRequest is checked against the reference schema.
 * Run: node --import tsx --test test/rest-responses-schema.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { LogRecord } from '../shared/record.ts';
import { assertDocumented, assertSchema, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/providers/openai/${name}`, import.meta.url), 'utf8'));
const textRequest = fixture('responses-text.request.json');
const textResponse = fixture('responses-text.json');
const callRequest = fixture('responses-function-call.request.json');
const callResponse = fixture('responses-function-call.json');
const reasoningRequest = fixture('responses-reasoning.request.json');
const reasoningResponse = fixture('responses-reasoning.json');
const codexRequest = JSON.parse(readFileSync(new URL('./fixtures/clients/codex-0.169.0.request.json', import.meta.url), 'utf8'));

const functionCall = callResponse.output[0];
/** The turn after the recorded function call: the call, as the client sends it back, and its output. */
const followUpRequest = {
  ...callRequest,
  instructions: 'Answer with the tool result.',
  input: [
    ...callRequest.input,
    { type: 'function_call', call_id: functionCall.call_id, name: functionCall.name, arguments: functionCall.arguments },
    { type: 'function_call_output', call_id: functionCall.call_id, output: '{"temperature_c":18,"sky":"cloudy"}' },
  ],
};

/** A Responses record, as the proxy sends it for `POST /v1/responses`, with `over` applied. */
function responsesRecord(organizationId: string, request: Record<string, unknown>, response: Record<string, unknown> | null, over: Partial<LogRecord> = {}): LogRecord {
  return logRecord(organizationId, {
    path: '/v1/responses',
    targetUrl: 'https://api.openai.com/v1/responses',
    provider: 'openai',
    requestModel: String(request.model),
    modelSent: String(request.model),
    requestBody: request,
    responseBody: response,
    usage: (response?.usage as Record<string, unknown> | undefined) ?? null,
    endpoint: 'responses',
    wireFormat: 'openai-responses',
    ...over,
  });
}

let env: RestEnv;
const ids: Record<string, string> = {};

before(async () => {
  env = await startRest();
  const records: Record<string, LogRecord> = {
    text: responsesRecord(env.orgA, textRequest, textResponse),
    functionCall: responsesRecord(env.orgA, callRequest, callResponse),
    followUp: responsesRecord(env.orgA, followUpRequest, textResponse),
    reasoning: responsesRecord(env.orgA, reasoningRequest, reasoningResponse),
    codex: responsesRecord(env.orgA, codexRequest, textResponse, { streamed: true }),
    failed: responsesRecord(env.orgA, textRequest, null, { status: 429, error: 'Rate limit reached', usage: null }),
  };
  for (const [name, rec] of Object.entries(records)) ids[name] = rec.requestId;
  await ingest(env, env.orgA, Object.values(records));
});
after(async () => {
  await env?.close();
});

const get = async (name: string) => {
  const r = await call(env, 'GET', `/v1/request/${ids[name]}`);
  assertDocumented('GET', '/v1/request/{requestId}', r, 'ResultSuccess_SvcRequest_');
  assertSchema('SvcRequest', r.body.data);
  return r.body.data;
};

describe('llmSchema of Responses', () => {
  test('a string input is a user message; the output_text is the response text (responses-text)', async () => {
    const r = await get('text');
    assert.equal(r.properties['svc-endpoint'], 'responses');
    assert.deepEqual([r.prompt_tokens, r.completion_tokens], [14, 8]);
    const { request, response } = r.llmSchema;
    assert.equal(request.llm_type, 'chat');
    assert.equal(request.model, 'gpt-4.1-nano');
    assert.deepEqual(request.messages, [{ _type: 'message', role: 'user', content: 'What is the capital of France?' }]);
    assert.equal(request.input, undefined, 'the Responses input is mapped to messages, not copied');
    assert.equal(response.model, 'gpt-4.1-nano-2025-04-14');
    assert.equal(response.messages.length, 1);
    assert.equal(response.messages[0].role, 'assistant');
    assert.equal(response.messages[0].content, 'The capital of France is Paris.');
    assert.equal(response.messages[0].status, undefined, 'a completed response adds no status');
  });

  test('a function call: the tool, tool_choice required → any, the call with parsed arguments (responses-function-call)', async () => {
    const { request, response } = (await get('functionCall')).llmSchema;
    assert.deepEqual(request.tools, [{ name: 'get_weather', description: callRequest.tools[0].description, parameters: callRequest.tools[0].parameters }]);
    assert.deepEqual(request.tool_choice, { type: 'any' });
    assert.deepEqual(request.messages, [{ _type: 'message', role: 'user', content: "What's the weather in Paris?" }]);
    const m = response.messages[0];
    assert.equal(m._type, 'functionCall');
    assert.deepEqual(m.tool_calls, [{ id: functionCall.call_id, name: 'get_weather', arguments: { location: 'Paris' } }]);
  });

  test('the follow-up turn: instructions as system, the function_call and its function_call_output', async () => {
    const { request, response } = (await get('followUp')).llmSchema;
    assert.equal(request.instructions, 'Answer with the tool result.');
    assert.deepEqual(
      request.messages.map((m: { _type: string; role: string }) => [m._type, m.role]),
      [['message', 'system'], ['message', 'user'], ['functionCall', 'assistant'], ['function', 'tool']],
    );
    assert.equal(request.messages[0].content, 'Answer with the tool result.');
    assert.deepEqual(request.messages[2].tool_calls, [{ id: functionCall.call_id, name: 'get_weather', arguments: { location: 'Paris' } }]);
    assert.deepEqual(request.messages[3], { _type: 'function', role: 'tool', tool_call_id: functionCall.call_id, content: '{"temperature_c":18,"sky":"cloudy"}' });
    assert.equal(response.messages[0].content, 'The capital of France is Paris.');
  });

  test('reasoning: effort, the summary texts as reasoning, the answer as content (responses-reasoning)', async () => {
    const r = await get('reasoning');
    const { request, response } = r.llmSchema;
    assert.equal(request.reasoning_effort, 'medium');
    const m = response.messages[0];
    const reasoningItem = reasoningResponse.output.find((i: { type: string }) => i.type === 'reasoning');
    const answer = reasoningResponse.output.find((i: { type: string }) => i.type === 'message');
    assert.equal(m.reasoning, reasoningItem.summary.map((s: { text: string }) => s.text).join('\n\n'));
    assert.match(m.reasoning, /^\*\*Explaining sky color\*\*/);
    assert.equal(m.content, answer.content.filter((p: { type: string }) => p.type === 'output_text').map((p: { text: string }) => p.text).join(''));
    assert.ok(m.content.length > 0);
    assert.deepEqual(m.contentArray.map((p: { _type: string }) => p._type), reasoningResponse.output.map((i: { type: string }) => (i.type === 'reasoning' ? 'message' : 'contentArray')));
  });

  test("Codex's request: developer and user messages in input_text parts, functions, a namespace flattened, a hosted tool", async () => {
    const { request } = (await get('codex')).llmSchema;
    assert.equal(request.stream, true);
    assert.equal(request.parallel_tool_calls, true);
    assert.deepEqual(request.tool_choice, { type: 'auto' });
    assert.deepEqual(request.messages.map((m: { role: string }) => m.role), ['developer', 'developer', 'user', 'user']);
    assert.equal(request.messages[1].contentArray.length, 2);
    assert.match(request.messages[0].content, /^You are a coding agent running in the Codex CLI/);
    assert.equal(request.messages[3].content, 'What is 2+2?');
    assert.deepEqual(request.messages[3].contentArray, [{ _type: 'message', role: 'user', content: 'What is 2+2?' }]);
    const names = request.tools.map((t: { name: string }) => t.name);
    const namespace = codexRequest.tools.find((t: { type: string }) => t.type === 'namespace');
    for (const inner of namespace.tools) assert.ok(names.includes(`multi_agent_v1__${inner.name}`), inner.name);
    assert.ok(names.includes('exec_command'));
    assert.ok(names.includes('web_search'), 'a hosted tool named by its type');
    assert.equal(request.tools.length, codexRequest.tools.length - 1 + namespace.tools.length);
    const spawn = request.tools.find((t: { name: string }) => t.name === 'multi_agent_v1__spawn_agent');
    assert.deepEqual(spawn.parameters, namespace.tools.find((t: { name: string }) => t.name === 'spawn_agent').parameters);
  });

  test('a failed request without a response body: the request mapped, the error as svcMessage', async () => {
    const { request, response } = (await get('failed')).llmSchema;
    assert.equal(request.messages[0].content, 'What is the capital of France?');
    assert.deepEqual(response.error, { svcMessage: 'Rate limit reached' });
    assert.equal(response.messages, undefined);
  });

  test('an incomplete response keeps its status and reason on the message', async () => {
    const incomplete = { ...textResponse, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    const rec = responsesRecord(env.orgA, { ...textRequest, max_output_tokens: 8 }, incomplete);
    await ingest(env, env.orgA, [rec]);
    const r = await call(env, 'GET', `/v1/request/${rec.requestId}`);
    assertSchema('SvcRequest', r.body.data);
    const { request, response } = r.body.data.llmSchema;
    assert.equal(request.max_tokens, 8);
    assert.equal(response.messages[0].status, 'incomplete');
    assert.equal(response.messages[0].status_reason, 'max_output_tokens');
  });
  test('image and file parts, an output_text turn, and an item of an unknown type kept as its JSON text', async () => {
    const body = {
      model: 'gpt-4.1-nano',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Describe these.' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'JVBERi0=' },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A picture and a PDF.' }] },
        { type: 'item_reference', id: 'msg_1' },
      ],
    };
    const rec = responsesRecord(env.orgA, body, textResponse);
    await ingest(env, env.orgA, [rec]);
    const r = await call(env, 'GET', `/v1/request/${rec.requestId}`);
    assertSchema('SvcRequest', r.body.data);
    const [user, assistant, unknown] = r.body.data.llmSchema.request.messages;
    assert.deepEqual(user.contentArray, [
      { _type: 'message', role: 'user', content: 'Describe these.' },
      { _type: 'image', role: 'user', type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
      { _type: 'file', role: 'user', type: 'input_file', file_data: 'JVBERi0=', filename: 'a.pdf' },
    ]);
    assert.equal(user.content, 'Describe these.');
    assert.deepEqual([assistant.role, assistant.content], ['assistant', 'A picture and a PDF.']);
    assert.deepEqual(JSON.parse(unknown.content), { type: 'item_reference', id: 'msg_1' });
  });
});
