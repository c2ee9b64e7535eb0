/**
 * The `openai-responses` → `openai-chat` translator, answer side: recorded chat completions (OpenAI, Groq, DeepSeek,
 * Gemini, Mistral) mapped to Responses `response` objects, and recorded chunk streams mapped to the Responses event
 * sequence, token by token, however the bytes are split (every byte, random sizes), including the provider failing
 * mid-stream; namespaced and custom tool calls named as the client knows them; the official `openai` client reading
 * the output (its stream accumulator checks every event's indices).
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { createResponsesStreamTranslator, openAIResponsesToOpenAIChat, toResponse, toolNamesOf } from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
import { decodeCarried } from '../proxy/translators/shared/carried-reasoning.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { clientAnswering, events, fold, run, split, SPLITS, type Event } from './support/responses-stream.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const bytes = (path: string): Buffer => readFileSync(new URL(`providers/${path}`, FIXTURES));
const json = (path: string): any => JSON.parse(bytes(path).toString('utf8'));
const REQUEST_ID = '00000000-0000-4000-8000-000000000001';
const HEX = '00000000000040008000000000000001';
const CODEX = JSON.parse(readFileSync(new URL('clients/codex-0.169.0.request.json', FIXTURES), 'utf8'));

function call(extra: Record<string, unknown> = {}, provider?: string): TranslatorCall {
  const body = { model: 'requested-model', input: 'hi', stream: true, ...extra };
  return { body: body as unknown as ChatCompletionRequest, stream: true, requestId: REQUEST_ID, removed: [], ...(provider ? { provider } : {}) };
}

/** The response object's members that do not depend on the answer, for a request with no parameters but `input`. */
const DEFAULT_ECHO = {
  background: false,
  frequency_penalty: 0,
  instructions: null,
  max_output_tokens: null,
  max_tool_calls: null,
  parallel_tool_calls: true,
  presence_penalty: 0,
  previous_response_id: null,
  prompt_cache_key: null,
  prompt_cache_retention: null,
  reasoning: { effort: null, summary: null },
  safety_identifier: null,
  service_tier: 'default',
  store: true,
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'medium' },
  tool_choice: 'auto',
  tools: [],
  top_logprobs: 0,
  top_p: 1,
  truncation: 'disabled',
  user: null,
  metadata: {},
};

/** A response object without its wall-clock `completed_at` (checked to be a time in seconds). */
function timeless(response: any): any {
  if (response.status === 'completed') assert.ok(Number.isInteger(response.completed_at) && Math.abs(response.completed_at - Date.now() / 1000) < 60, 'completed_at is now, in seconds');
  else assert.equal(response.completed_at, null);
  const { completed_at: _completedAt, ...rest } = response;
  return rest;
}

describe('chat.completion → Responses response (recorded answers)', () => {
  it('OpenAI text: the whole response object, members in the order OpenAI sends them', () => {
    const { status, body } = openAIResponsesToOpenAIChat.translateResponse(bytes('openai/chat-completion.json'), call());
    assert.equal(status, 200);
    const response = body as any;
    assert.deepEqual(timeless(response), {
      id: `resp_${HEX}`,
      object: 'response',
      created_at: 1744043456,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'gpt-4o-2024-08-06',
      output: [
        { id: `msg_${HEX}_0`, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'The capital of France is Paris.' }], role: 'assistant' },
      ],
      usage: { input_tokens: 24, input_tokens_details: { cached_tokens: 0 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 32 },
      ...DEFAULT_ECHO,
    });
    const recorded = Object.keys(json('openai/responses-text.json')).filter((k) => k !== 'billing');
    assert.deepEqual(Object.keys(response), recorded, 'the members of the recorded OpenAI response, in its order');
    assert.deepEqual(Object.keys(response.output[0]), Object.keys(json('openai/responses-text.json').output[0]));
    assert.deepEqual(Object.keys(response.usage), Object.keys(json('openai/responses-text.json').usage));
  });

  it('OpenAI tool call: a function_call item shaped as OpenAI\'s; the request\'s tools and tool_choice echoed', () => {
    const request = json('openai/responses-function-call.request.json');
    const response = toResponse(json('openai/chat-completion-tool-call.json'), call(request)) as any;
    assert.deepEqual(response.output, [
      { id: `fc_${HEX}_0`, type: 'function_call', status: 'completed', arguments: '{"country":"England"}', call_id: 'call_SkEQ3ZGSJC8m6AvaIGNuuKdm', name: 'get_capital' },
    ]);
    assert.deepEqual(Object.keys(response.output[0]), Object.keys(json('openai/responses-function-call.json').output[0]));
    assert.deepEqual(response.tools, request.tools);
    assert.equal(response.tool_choice, 'required');
  });

  it('Groq gpt-oss: message.reasoning → a reasoning item with its summary before the call; the fc_ id is the call_id', () => {
    const c = json('groq/chat-completion-tool-call.json');
    const response = toResponse(c, call()) as any;
    assert.deepEqual(response.output, [
      { id: `rs_${HEX}_0`, type: 'reasoning', summary: [{ type: 'summary_text', text: c.choices[0].message.reasoning }] },
      { id: `fc_${HEX}_1`, type: 'function_call', status: 'completed', arguments: '{"name":"test"}', call_id: 'fc_311ba17b-89f9-48d3-8fd9-7e74a1264855', name: 'get_something_by_name' },
    ]);
    assert.deepEqual(response.usage, { input_tokens: 301, input_tokens_details: { cached_tokens: 0 }, output_tokens: 52, output_tokens_details: { reasoning_tokens: 22 }, total_tokens: 353 });
  });

  it('DeepSeek reasoner: reasoning_content → reasoning, then the message; reasoning tokens', () => {
    const c = json('deepseek/chat-completion-reasoner.json');
    const response = toResponse(c, call()) as any;
    assert.deepEqual(response.output.map((i: any) => i.type), ['reasoning', 'message']);
    assert.equal(response.output[0].summary[0].text, c.choices[0].message.reasoning_content);
    assert.equal(response.output[1].content[0].text, c.choices[0].message.content);
    assert.deepEqual(response.usage.output_tokens_details, { reasoning_tokens: 415 });
    assert.equal(response.model, 'deepseek-reasoner');
  });

  it('Mistral: cached tokens; a tool call with empty content gives no message; its 9-character id kept', () => {
    assert.deepEqual(toResponse(json('mistral/chat-completion-cached-tokens.json'), call()).usage, {
      input_tokens: 268,
      input_tokens_details: { cached_tokens: 224 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 273,
    });
    const tool = toResponse(json('mistral/chat-completion-tool-call.json'), call()) as any;
    assert.deepEqual(tool.output.map((i: any) => [i.type, i.call_id]), [['function_call', 'FI5qQGzDE']]);
    assert.match((toResponse(json('mistral/chat-completion.json'), call()) as any).output[0].content[0].text, /^Hello! 😊/);
  });

  it('Gemini tool call: an empty id gets a call id; the thought signature rides in a last reasoning item; thinking Gemini counts only in the total becomes reasoning tokens', () => {
    const c = json('gemini/openai-compat-chat-completion-tool-call.json');
    const response = toResponse(c, call({}, 'gemini')) as any;
    assert.deepEqual(response.output.slice(0, 1), [
      { id: `fc_${HEX}_0`, type: 'function_call', status: 'completed', arguments: '{}', call_id: `call_${HEX}_0`, name: 'get_current_time' },
    ]);
    const carrier = response.output[1];
    assert.deepEqual(Object.keys(carrier), ['id', 'type', 'summary', 'encrypted_content']);
    assert.deepEqual(carrier.summary, []);
    assert.deepEqual(decodeCarried(carrier.encrypted_content), { google: { message: c.choices[0].message.extra_content.google.thought_signature } });
    assert.deepEqual(response.usage, { input_tokens: 35, input_tokens_details: { cached_tokens: 0 }, output_tokens: 74, output_tokens_details: { reasoning_tokens: 62 }, total_tokens: 109 });
    const plain = toResponse(json('gemini/openai-compat-chat-completion.json'), call()) as any;
    assert.equal(plain.model, 'gemini-2.0-flash');
    assert.equal(plain.usage.total_tokens, 1634);
  });

  it('a namespaced tool is answered with its name and namespace, from call.toolNames or derived from the request\'s tools', () => {
    const completion = {
      id: 'c1',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"go"}' } }] } }],
    };
    const withMap = call(CODEX);
    withMap.toolNames = toolNamesOf(CODEX.tools).bySent;
    for (const c of [withMap, call(CODEX)]) {
      const item = (toResponse(completion, c) as any).output[0];
      assert.deepEqual(item, { id: `fc_${HEX}_0`, type: 'function_call', status: 'completed', arguments: '{"message":"go"}', call_id: 'call_1', name: 'spawn_agent', namespace: 'multi_agent_v1' });
    }
    const echo = toResponse(completion, call(CODEX)) as any;
    assert.deepEqual(echo.tools.map((t: any) => t.type), ['function', 'function', 'function', 'function', 'namespace', 'function', 'function', 'function'], 'the hosted web_search is not echoed');
    assert.equal(echo.store, false);
    assert.deepEqual(echo.reasoning, { effort: null, summary: 'auto' });
    assert.equal(echo.prompt_cache_key, CODEX.prompt_cache_key);
  });

  it('a custom tool\'s call is a custom_tool_call with the input unwrapped', () => {
    const tools = [{ type: 'custom', name: 'apply_patch' }];
    const completion = {
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'c1', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n"}' } }, { id: 'c2', function: { name: 'apply_patch', arguments: 'raw text' } }] } }],
    };
    assert.deepEqual((toResponse(completion, call({ tools })) as any).output, [
      { id: `ctc_${HEX}_0`, type: 'custom_tool_call', status: 'completed', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n' },
      { id: `ctc_${HEX}_1`, type: 'custom_tool_call', status: 'completed', call_id: 'c2', name: 'apply_patch', input: 'raw text' },
    ]);
  });

  it('status: length → incomplete (max_output_tokens), content_filter → incomplete; a refusal is a refusal part', () => {
    const answer = (finish_reason: string, message: Record<string, unknown>) => toResponse({ choices: [{ index: 0, finish_reason, message }] }, call()) as any;
    const cut = answer('length', { content: 'partial' });
    assert.equal(cut.status, 'incomplete');
    assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(cut.output[0].status, 'incomplete');
    assert.equal(cut.completed_at, null);
    const filtered = answer('content_filter', { content: '' });
    assert.deepEqual([filtered.status, filtered.incomplete_details, filtered.output], ['incomplete', { reason: 'content_filter' }, []]);
    const refused = answer('stop', { content: null, refusal: 'I cannot help with that.' });
    assert.deepEqual(refused.output[0].content, [{ type: 'refusal', refusal: 'I cannot help with that.' }]);
    assert.equal(refused.model, 'requested-model');
  });

  it('content parts of unknown types are dropped and recorded; a body that is not a chat completion is a 502 in OpenAI\'s shape', () => {
    const c = call();
    const response = toResponse({ choices: [{ message: { content: [{ type: 'text', text: 'a' }, { type: 'image', url: 'x' }, { type: 'thinking', thinking: [{ type: 'text', text: 'hm' }] }] } }] }, c) as any;
    assert.deepEqual(response.output.map((i: any) => i.type), ['reasoning', 'message']);
    assert.equal(response.output[0].summary[0].text, 'hm');
    assert.deepEqual(c.removed, ['response.choices[0].message.content[1]']);
    for (const body of ['not json', '{"object":"list"}', '{"choices":[]}']) {
      const { status, body: out } = openAIResponsesToOpenAIChat.translateResponse(Buffer.from(body), call({}, 'groq'));
      assert.equal(status, 502);
      assert.deepEqual(out, { error: { message: 'groq returned a response that is not a chat completion', type: 'server_error', param: null, code: 'upstream_bad_response' } });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

/** The chat chunks of a recorded `.sse` (for expectations computed from the fixture itself). */
function chunks(path: string): any[] {
  return bytes(path).toString('utf8').split('\n\n').map((e) => e.trim()).filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
}

function joined(path: string, member: 'content' | 'reasoning' | 'reasoning_content'): string {
  return chunks(path).map((c) => c.choices[0]?.delta?.[member]).filter((t) => typeof t === 'string').join('');
}

describe('chunk stream → Responses stream (recorded streams)', () => {
  const eachSplit = (path: string, c: () => TranslatorCall, check: (list: Event[]) => void) => {
    for (const how of SPLITS) {
      it(`${path} split ${JSON.stringify(how)}`, async () => {
        const out = await run(createResponsesStreamTranslator(c()), split(bytes(path), how));
        check(events(out));
      });
    }
  };

  describe('OpenAI text', () => {
    const path = 'openai/chat-completion-stream.sse';
    eachSplit(path, () => call(), (list) => {
      const id = `msg_${HEX}_0`;
      const texts = chunks(path).map((c) => c.choices[0]?.delta?.content).filter((t) => t);
      assert.deepEqual(list.map((e) => e.type), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...texts.map(() => 'response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      assert.deepEqual(list[0], {
        type: 'response.created',
        sequence_number: 0,
        response: { id: `resp_${HEX}`, object: 'response', created_at: chunks(path)[0].created, status: 'in_progress', completed_at: null, error: null, incomplete_details: null, model: 'gpt-4o-mini-2024-07-18', output: [], usage: null, ...DEFAULT_ECHO },
      });
      assert.deepEqual(list[2], { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
      assert.deepEqual(list[3], { type: 'response.content_part.added', sequence_number: 3, item_id: id, output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      assert.deepEqual(list[4], { type: 'response.output_text.delta', sequence_number: 4, item_id: id, output_index: 0, content_index: 0, delta: texts[0], logprobs: [] });
      const { final } = fold(list);
      assert.equal(final.response.status, 'completed');
      assert.equal(final.response.output[0].content[0].text, joined(path, 'content'));
      assert.deepEqual(final.response.usage, { input_tokens: 78, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 87 });
      assert.deepEqual(Object.keys(final.response), Object.keys(json('openai/responses-text.json')).filter((k) => k !== 'billing'));
    });
  });

  describe('OpenAI tool call', () => {
    eachSplit('openai/chat-completion-stream-tool-call.sse', () => call(), (list) => {
      const id = `fc_${HEX}_0`;
      assert.deepEqual(list.slice(2, -1), [
        { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital' } },
        ...['{"', 'country', '":"', 'UK', '"}'].map((delta, k) => ({ type: 'response.function_call_arguments.delta', sequence_number: 3 + k, item_id: id, output_index: 0, delta })),
        { type: 'response.function_call_arguments.done', sequence_number: 8, item_id: id, output_index: 0, arguments: '{"country":"UK"}' },
        { type: 'response.output_item.done', sequence_number: 9, output_index: 0, item: { id, type: 'function_call', status: 'completed', arguments: '{"country":"UK"}', call_id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital' } },
      ]);
      const { final } = fold(list);
      assert.equal(final.type, 'response.completed');
      assert.deepEqual(final.response.usage, { input_tokens: 53, input_tokens_details: { cached_tokens: 0 }, output_tokens: 15, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 68 });
    });
  });

  describe('Groq reasoning then a whole tool call in one delta', () => {
    const path = 'groq/chat-completion-stream-tool-call.sse';
    eachSplit(path, () => call(), (list) => {
      const { final } = fold(list);
      assert.deepEqual(final.response.output, [
        { id: `rs_${HEX}_0`, type: 'reasoning', summary: [{ type: 'summary_text', text: joined(path, 'reasoning') }] },
        { id: `fc_${HEX}_1`, type: 'function_call', status: 'completed', arguments: '{"name":"example"}', call_id: 'fc_bfb39741-3748-4def-9886-a93fc9c64a90', name: 'get_something_by_name' },
      ]);
      assert.equal(list.filter((e) => e.type === 'response.reasoning_summary_text.delta').length, chunks(path).filter((c) => c.choices[0]?.delta?.reasoning).length, 'one summary delta per reasoning chunk');
      assert.deepEqual(final.response.usage, { input_tokens: 304, input_tokens_details: { cached_tokens: 0 }, output_tokens: 49, output_tokens_details: { reasoning_tokens: 23 }, total_tokens: 353 });
      assert.deepEqual(
        list.filter((e) => e.output_index === 0).map((e) => e.type).filter((t) => !t.endsWith('.delta')),
        ['response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done'],
      );
    });
  });

  describe('DeepSeek reasoner: reasoning, then the message; usage on the finish chunk', () => {
    const path = 'deepseek/chat-completion-stream-reasoner.sse';
    eachSplit(path, () => call(), (list) => {
      const { final } = fold(list);
      assert.deepEqual(final.response.output.map((i: any) => i.type), ['reasoning', 'message']);
      assert.equal(final.response.output[0].summary[0].text, joined(path, 'reasoning_content'));
      assert.equal(final.response.output[1].content[0].text, joined(path, 'content'));
      assert.equal(final.response.model, 'deepseek-reasoner');
      assert.deepEqual(final.response.usage.output_tokens_details, { reasoning_tokens: 198 });
    });
  });

  describe('Groq failing mid-stream (event: error)', () => {
    const path = 'groq/chat-completion-stream-error.sse';
    eachSplit(path, () => call({}, 'groq'), (list) => {
      const { final, items } = fold(list);
      assert.equal(final.type, 'response.failed');
      assert.deepEqual(final.response.error, {
        code: 'tool_use_failed',
        message: "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed]",
      });
      assert.deepEqual(final.response.output, [], 'the reasoning item was never done');
      assert.equal(items[0].summary[0].text, joined(path, 'reasoning'));
      assert.ok(!list.some((e) => e.type === 'response.completed'));
    });
  });
});

describe('chunk stream → Responses stream (edge cases)', () => {
  const sse = (...lines: string[]) => Buffer.from(lines.map((l) => `${l}\n\n`).join(''));
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1700000000, model: 'm1', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}`;
  const tool = (index: number, fn: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ tool_calls: [{ index, ...extra, function: fn }] });
  const translate = async (input: Buffer, c: TranslatorCall = call()) => events(await run(createResponsesStreamTranslator(c), [input]));

  it('a namespaced tool call is named as the client knows it, with its namespace', async () => {
    const c = call(CODEX);
    c.toolNames = toolNamesOf(CODEX.tools).bySent;
    const list = await translate(sse(chunk(tool(0, { name: 'multi_agent_v1__spawn_agent', arguments: '' }, { id: 'call_9' })), chunk(tool(0, { arguments: '{"message":"x"}' })), chunk({}, 'tool_calls'), 'data: [DONE]'), c);
    const { final } = fold(list);
    assert.deepEqual(list[2]!.item, { id: `fc_${HEX}_0`, type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_9', name: 'spawn_agent', namespace: 'multi_agent_v1' });
    assert.equal(final.response.output[0].namespace, 'multi_agent_v1');
    assert.equal(final.response.tools.length, 8);
  });

  it('a custom tool call: its input sent whole at the end, unwrapped from the arguments', async () => {
    const c = call({ tools: [{ type: 'custom', name: 'apply_patch' }] });
    const list = await translate(sse(chunk(tool(0, { name: 'apply_patch', arguments: '{"input":"*** Begin' }, { id: 'c1' })), chunk(tool(0, { arguments: ' Patch"}' })), chunk({}, 'tool_calls'), 'data: [DONE]'), c);
    const id = `ctc_${HEX}_0`;
    assert.deepEqual(list.slice(2, -1).map(({ sequence_number: _s, ...e }) => e), [
      { type: 'response.output_item.added', output_index: 0, item: { id, type: 'custom_tool_call', status: 'in_progress', call_id: 'c1', name: 'apply_patch', input: '' } },
      { type: 'response.custom_tool_call_input.delta', item_id: id, output_index: 0, delta: '*** Begin Patch' },
      { type: 'response.custom_tool_call_input.done', item_id: id, output_index: 0, input: '*** Begin Patch' },
      { type: 'response.output_item.done', output_index: 0, item: { id, type: 'custom_tool_call', status: 'completed', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' } },
    ]);
    fold(list);
  });

  it('finish reason length: response.incomplete with max_output_tokens, the cut item incomplete', async () => {
    const list = await translate(sse(chunk({ content: 'Once upon' }), chunk({}, 'length'), chunk({}, null, { choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }), 'data: [DONE]'));
    const { final } = fold(list);
    assert.equal(final.type, 'response.incomplete');
    assert.equal(final.response.status, 'incomplete');
    assert.deepEqual(final.response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(final.response.output[0].status, 'incomplete');
    assert.equal(final.response.usage.total_tokens, 7);
  });

  it('parallel tool calls: one item each; fragments before the name wait for it, interleaved fragments reach their item; a missing id is generated; no-argument calls get {}', async () => {
    const list = await translate(
      sse(
        chunk(tool(0, { arguments: '{"a"' }, { id: 'call_a' })),
        chunk(tool(0, { name: 'fa' })),
        chunk(tool(1, { name: 'fb', arguments: '{"b"' })),
        chunk(tool(0, { arguments: ':1}' })),
        chunk(tool(1, { arguments: ':2}' })),
        chunk(tool(2, { name: 'fc' }, { id: 'call_c' })),
        chunk({}, 'tool_calls'),
        'data: [DONE]',
      ),
    );
    const { final } = fold(list);
    assert.deepEqual(final.response.output.map((i: any) => [i.name, i.call_id, i.arguments]), [
      ['fa', 'call_a', '{"a":1}'],
      ['fb', `call_${HEX}_1`, '{"b":2}'],
      ['fc', 'call_c', '{}'],
    ]);
  });

  it('Gemini thought signatures on tool calls come last, in a reasoning item without summary', async () => {
    const list = await translate(
      sse(
        chunk({ reasoning_content: 'thinking' }),
        chunk(tool(0, { name: 'f', arguments: '{}' }, { id: '', extra_content: { google: { thought_signature: 'SIG' } } })),
        chunk({}, 'tool_calls'),
        'data: [DONE]',
      ),
    );
    const { final } = fold(list);
    assert.deepEqual(final.response.output.map((i: any) => i.type), ['reasoning', 'function_call', 'reasoning']);
    assert.equal(final.response.output[1].call_id, `call_${HEX}_0`);
    assert.deepEqual(decodeCarried(final.response.output[2].encrypted_content), { google: { tool_calls: { [`call_${HEX}_0`]: 'SIG' } } });
  });

  it('a refusal delta is a refusal part after the text part', async () => {
    const list = await translate(sse(chunk({ content: 'Well' }), chunk({ refusal: 'No.' }), chunk({}, 'stop'), 'data: [DONE]'));
    const { final } = fold(list);
    assert.deepEqual(final.response.output[0].content, [
      { type: 'output_text', annotations: [], logprobs: [], text: 'Well' },
      { type: 'refusal', refusal: 'No.' },
    ]);
  });

  it('a stream cut before any finish reason ends with response.failed server_error', async () => {
    const list = await translate(sse(chunk({ content: 'Hel' })), call({}, 'groq'));
    const { final } = fold(list);
    assert.deepEqual(final.response.error, { code: 'server_error', message: 'The groq stream ended before the response was complete' });
  });

  it('a stream that ends after its finish chunk without usage or [DONE] still completes', async () => {
    const { final } = fold(await translate(sse(chunk({ content: 'Hi' }), chunk({}, 'stop'))));
    assert.equal(final.type, 'response.completed');
    assert.equal(final.response.usage.total_tokens, 0);
  });

  it('OpenAI-style data: {"error"} mid-stream and a malformed event end with response.failed; later input is ignored', async () => {
    const err = fold(await translate(sse(chunk({ content: 'a' }), 'data: {"error":{"message":"Rate limit sk-abcdefghijklmnop","type":"requests","code":null}}', chunk({ content: 'b' }))));
    assert.deepEqual(err.final.response.error, { code: 'rate_limit_exceeded', message: 'Rate limit sk-***' });
    const bad = fold(await translate(sse(chunk({ content: 'a' }), 'data: {not json', chunk({ content: 'b' })), call({}, 'mistral')));
    assert.deepEqual(bad.final.response.error, { code: 'server_error', message: 'The mistral sent a malformed stream event' });
    const only = await translate(Buffer.from('event: error\ndata: {"error":{"message":"Overloaded","type":"server_error","code":null}}\n\n'));
    assert.equal(only.length, 3);
    assert.deepEqual(only[2]!.response.error, { code: 'server_error', message: 'Overloaded' });
  });

  it('keeps multi-byte UTF-8 intact when split inside a character', async () => {
    const input = sse(chunk({ content: 'héllo 😊' }), chunk({}, 'stop'), 'data: [DONE]');
    const { final } = fold(events(await run(createResponsesStreamTranslator(call()), split(input, 1))));
    assert.equal(final.response.output[0].content[0].text, 'héllo 😊');
  });

  it("emits each input piece's events as soon as it arrives (no buffering to the end)", async () => {
    const mapper = createResponsesStreamTranslator(call());
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    mapper.write(Buffer.from(`${chunk({ content: 'A' })}\n\n`));
    await tick();
    assert.match(seen.join(''), /response\.output_text\.delta[^\n]*\n[^\n]*"delta":"A"/);
    mapper.write(Buffer.from(`${chunk({ content: 'B' })}\n\n`));
    await tick();
    assert.match(seen.join(''), /"delta":"B"/);
    assert.doesNotMatch(seen.join(''), /response\.completed/);
    mapper.end(Buffer.from(`${chunk({}, 'stop')}\n\ndata: [DONE]\n\n`));
    await new Promise((resolve) => mapper.on('end', resolve));
    assert.match(seen.join(''), /response\.completed/);
  });
});

// ---------------------------------------------------------------------------------------------
// The official client reading the output
// ---------------------------------------------------------------------------------------------

describe('the official openai client reads the translated output', () => {
  it('responses.create: output_text and the function call of translated JSON', async () => {
    const text = openAIResponsesToOpenAIChat.translateResponse(bytes('openai/chat-completion.json'), call()).body;
    const response = await clientAnswering(JSON.stringify(text), 'application/json').responses.create({ model: 'gpt-4o', input: 'hi' });
    assert.equal(response.output_text, 'The capital of France is Paris.');
    const tool = openAIResponsesToOpenAIChat.translateResponse(bytes('openai/chat-completion-tool-call.json'), call()).body;
    const called = await clientAnswering(JSON.stringify(tool), 'application/json').responses.create({ model: 'gpt-4o', input: 'hi' });
    const item = called.output[0]!;
    assert.ok(item.type === 'function_call');
    assert.deepEqual(JSON.parse(item.arguments), { country: 'England' });
  });

  for (const path of ['openai/chat-completion-stream.sse', 'openai/chat-completion-stream-tool-call.sse', 'groq/chat-completion-stream-tool-call.sse', 'deepseek/chat-completion-stream-reasoner.sse']) {
    it(`responses.stream accumulates ${path} into the response the translator completed with`, async () => {
      const sseText = await run(createResponsesStreamTranslator(call()), split(bytes(path), { seed: 7 }));
      const completed = events(sseText).at(-1)!;
      const stream = clientAnswering(sseText, 'text/event-stream').responses.stream({ model: 'gpt-4o', input: 'hi' });
      let deltas = '';
      stream.on('response.output_text.delta', (e) => (deltas += e.delta));
      const final = await stream.finalResponse();
      // The client's parser adds `parsed` to text parts and `parsed_arguments` to function calls.
      const unparsed = JSON.parse(JSON.stringify(final.output, (key, value) => (key === 'parsed' || key === 'parsed_arguments' ? undefined : value)));
      assert.deepEqual(unparsed, completed.response.output);
      assert.equal(final.output_text, deltas);
      assert.equal(final.status, 'completed');
    });
  }

  it('responses.stream on a failed stream: the client sees response.failed with the error', async () => {
    const sseText = await run(createResponsesStreamTranslator(call({}, 'groq')), [bytes('groq/chat-completion-stream-error.sse')]);
    const seen: string[] = [];
    const stream = clientAnswering(sseText, 'text/event-stream').responses.stream({ model: 'gpt-4o', input: 'hi' });
    stream.on('response.failed', (e) => seen.push(e.response.error!.code));
    const final = await stream.finalResponse();
    assert.equal(final.status, 'failed');
    assert.deepEqual(seen, ['tool_use_failed']);
  });
});

describe('chunk stream → Responses stream: members of the item events', () => {
  // The events' payloads are written as literals (stream.ts `send`); their members keep this order on the wire.
  it('every event naming an item starts with type, sequence_number, item_id, output_index, in a fixed order', async () => {
    const keys = new Map<string, string>();
    for (const path of ['openai/chat-completion-stream.sse', 'openai/chat-completion-stream-tool-call.sse']) {
      const raw = await run(createResponsesStreamTranslator(call()), [bytes(path)]);
      for (const line of raw.split('\n').filter((l) => l.startsWith('data: '))) {
        const e = JSON.parse(line.slice(6)) as Event;
        if ('item_id' in e) keys.set(e.type, Object.keys(e).join(','));
      }
    }
    assert.deepEqual(Object.fromEntries(keys), {
      'response.content_part.added': 'type,sequence_number,item_id,output_index,content_index,part',
      'response.output_text.delta': 'type,sequence_number,item_id,output_index,content_index,delta,logprobs',
      'response.output_text.done': 'type,sequence_number,item_id,output_index,content_index,text,logprobs',
      'response.content_part.done': 'type,sequence_number,item_id,output_index,content_index,part',
      'response.function_call_arguments.delta': 'type,sequence_number,item_id,output_index,delta',
      'response.function_call_arguments.done': 'type,sequence_number,item_id,output_index,arguments',
    });
  });
});
