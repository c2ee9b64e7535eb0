/**
 * The `openai-responses` → `openai-chat` translator, request side (proxy/translators/openai-responses-to-openai-chat/):
 * the real Codex 0.169.0 request and the recorded Responses request bodies translated to chat-completions bodies, the
 * removal records, namespace flattening and the tool names kept on the call, multi-turn tool use with reasoning per
 * provider, custom tools, structured output, every refusal (400 naming the member), the input_tokens body, and the
 * registration.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { clientErrorBody } from '../proxy/translators/dialects.ts';
import { TRANSLATOR_LIST, translatorFor } from '../proxy/translators/index.ts';
import {
  flatToolName,
  hostedToolTypes,
  openAIResponsesToOpenAIChat,
  responsesToChatForCount,
  toChatRequest,
  toolNamesOf,
} from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
import { encodeCarried } from '../proxy/translators/shared/carried-reasoning.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { refusal } from './support/refusal.ts';

const fixture = (path: string): any => JSON.parse(readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8'));
const REQUEST_ID = '00000000-0000-4000-8000-000000000001';
const CODEX = fixture('clients/codex-0.169.0.request.json');

function call(body: any, provider?: string, removed: string[] = []): TranslatorCall {
  return { body, stream: body.stream === true, requestId: REQUEST_ID, removed, ...(provider ? { provider } : {}) };
}


/** A minimal Responses body with `extra` members. */
function base(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'm1', input: 'hi', ...extra };
}

const CODEX_TOOL_NAMES = [
  'exec_command',
  'write_stdin',
  'request_user_input',
  'view_image',
  'multi_agent_v1__close_agent',
  'multi_agent_v1__resume_agent',
  'multi_agent_v1__send_input',
  'multi_agent_v1__spawn_agent',
  'multi_agent_v1__wait_agent',
  'get_goal',
  'create_goal',
  'update_goal',
];

describe('Codex 0.169.0 request → chat completions', () => {
  it('maps the developer and user items, flattens the namespace, removes web_search and the Responses-only members, and records exactly those', () => {
    const { body, removed, toolNames } = toChatRequest({ ...CODEX, model: 'llama-3.3-70b-versatile' }, 'groq');
    const texts = (item: any): string => item.content.map((part: any) => part.text).join('\n\n');
    assert.deepEqual(body.messages, [
      { role: 'system', content: `${texts(CODEX.input[0])}\n\n${texts(CODEX.input[1])}` },
      { role: 'user', content: texts(CODEX.input[2]) },
      { role: 'user', content: 'What is 2+2?' },
    ]);
    assert.deepEqual(body.tools!.map((t) => t.function!.name), CODEX_TOOL_NAMES);
    assert.ok(body.tools!.every((t) => t.type === 'function' && /^[a-zA-Z0-9_-]{1,64}$/.test(t.function!.name)));
    const namespace = CODEX.tools[4];
    const spawn = namespace.tools.find((t: any) => t.name === 'spawn_agent');
    const sent = body.tools!.find((t) => t.function!.name === 'multi_agent_v1__spawn_agent')!.function!;
    assert.deepEqual(sent, { name: 'multi_agent_v1__spawn_agent', parameters: spawn.parameters, strict: false, description: `${namespace.description}\n\n${spawn.description}` });
    const exec = body.tools![0]!.function!;
    assert.deepEqual(exec, { name: 'exec_command', parameters: CODEX.tools[0].parameters, strict: false, description: CODEX.tools[0].description });
    assert.equal(body.tool_choice, 'auto');
    assert.equal(body.parallel_tool_calls, true);
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.reasoning_effort, undefined);
    assert.deepEqual(Object.keys(body).sort(), ['messages', 'model', 'parallel_tool_calls', 'stream', 'stream_options', 'tool_choice', 'tools']);
    assert.deepEqual(removed, ['tools[8]', 'reasoning.summary', 'store', 'include', 'prompt_cache_key', 'client_metadata']);
    assert.equal(CODEX.tools[8].type, 'web_search');
    assert.deepEqual(
      [...toolNames],
      ['close_agent', 'resume_agent', 'send_input', 'spawn_agent', 'wait_agent'].map((name) => [`multi_agent_v1__${name}`, { name, namespace: 'multi_agent_v1' }]),
    );
  });

  it('OpenAI at chat completions keeps the developer role; the hosted tool types are listed for a header', () => {
    const { body } = toChatRequest(CODEX, 'openai');
    assert.equal(body.messages[0]!.role, 'developer');
    assert.deepEqual(hostedToolTypes(CODEX), ['web_search']);
    assert.deepEqual(hostedToolTypes({ tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'function', name: 'f' }, { type: 'mcp' }] }, { type: 'file_search' }, { type: 'custom', name: 'c' }] }), ['mcp', 'file_search']);
    assert.deepEqual(hostedToolTypes({}), []);
  });

  it('through the registered translator: the body bytes, the removals on call.removed and the tool names on call.toolNames', () => {
    const c = call(CODEX, 'deepseek');
    const bytes = openAIResponsesToOpenAIChat.translateRequest(c);
    assert.deepEqual(JSON.parse(bytes.toString('utf8')), toChatRequest(CODEX, 'deepseek').body);
    assert.deepEqual(c.removed, ['tools[8]', 'reasoning.summary', 'store', 'include', 'prompt_cache_key', 'client_metadata']);
    assert.deepEqual(c.toolNames, toolNamesOf(CODEX.tools).bySent);
    assert.equal(c.toolNames!.get('multi_agent_v1__wait_agent')!.namespace, 'multi_agent_v1');
    // Without a removal list nothing is recorded, and the translation is the same.
    const quiet: TranslatorCall = { body: CODEX, stream: true, requestId: REQUEST_ID };
    assert.deepEqual(openAIResponsesToOpenAIChat.translateRequest(quiet), bytes);
    // A request without namespaced or custom tools leaves call.toolNames unset.
    const plain = call(fixture('providers/openai/responses-function-call.request.json'));
    openAIResponsesToOpenAIChat.translateRequest(plain);
    assert.equal(plain.toolNames, undefined);
  });
});

describe('recorded Responses request bodies → chat completions', () => {
  const req = (name: string): any => fixture(`providers/openai/${name}.request.json`);

  it('a string input: one user message, nothing else', () => {
    assert.deepEqual(toChatRequest(req('responses-text'), 'groq'), {
      body: { model: 'gpt-4.1-nano', messages: [{ role: 'user', content: 'What is the capital of France?' }] },
      removed: [],
      toolNames: new Map(),
      origins: [{ path: 'input', parts: null, calls: [] }],
    });
  });

  it('a flat function tool and tool_choice required', () => {
    const { body, removed } = toChatRequest(req('responses-function-call'), 'mistral');
    const tool = req('responses-function-call').tools[0];
    assert.deepEqual(body, {
      model: 'gpt-4.1-nano',
      messages: [{ role: 'user', content: "What's the weather in Paris?" }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: tool.parameters, description: tool.description } }],
      tool_choice: 'required',
    });
    assert.deepEqual(removed, []);
  });

  it('reasoning effort medium to a reasoning model, summary auto recorded (providers return their reasoning as they do)', () => {
    const { body, removed } = toChatRequest({ ...req('responses-reasoning'), model: 'deepseek-reasoner' }, 'deepseek');
    assert.equal(body.reasoning_effort, 'medium');
    assert.deepEqual(removed, ['reasoning.summary']);
    const empty = toChatRequest({ ...req('responses-reasoning-empty-summary'), model: 'deepseek-reasoner' }, 'deepseek');
    assert.equal(empty.body.reasoning_effort, 'low');
    assert.deepEqual(empty.removed, []);
    // gpt-5-nano is no DeepSeek model the table knows: no effort is sent, and its removal is recorded.
    const unknown = toChatRequest(req('responses-reasoning'), 'deepseek');
    assert.equal(unknown.body.reasoning_effort, undefined);
    assert.deepEqual(unknown.removed, ['reasoning.effort', 'reasoning.summary']);
  });

  it('the Agents SDK turn: instructions, an earlier function_call and its output; include [] is not recorded', () => {
    const r = req('responses-stream-function-call');
    const { body, removed } = toChatRequest(r, 'groq');
    assert.deepEqual(body.messages, [
      { role: 'system', content: r.instructions },
      { role: 'user', content: 'Can you create a new symphony in D major?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0huubaIPG7y97doHmNEbKQi3', type: 'function', function: { name: 'transfer_to_symphony_composer', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_0huubaIPG7y97doHmNEbKQi3', content: '{"assistant": "Symphony Composer"}' },
    ]);
    assert.equal(body.tools![0]!.function!.strict, true);
    assert.equal(body.stream, true);
    assert.deepEqual(removed, []);
  });

  it('pydantic-ai: previous_response_id null passes; include and service_tier recorded; tool_choice required', () => {
    const { body, removed } = toChatRequest({ ...req('responses-stream-reasoning-function-call'), model: 'openai/gpt-oss-120b' }, 'groq');
    assert.deepEqual(body.messages, [{ role: 'user', content: 'Calculate 100 * 200 / 3' }]);
    assert.equal(body.tool_choice, 'required');
    assert.equal(body.reasoning_effort, 'low');
    assert.deepEqual(removed, ['include', 'service_tier']);
    const summary = toChatRequest({ ...req('responses-stream-reasoning-summary'), model: 'openai/gpt-oss-20b' }, 'groq');
    assert.equal(summary.body.reasoning_effort, 'high');
    assert.deepEqual(summary.removed, ['include', 'reasoning.summary']);
  });

  it('input_tokens: the chat body to estimate, without stream or output members', () => {
    assert.deepEqual(responsesToChatForCount(req('responses-input-tokens'), 'gemini'), {
      model: 'gpt-4.1-mini',
      messages: [
        { role: 'system', content: 'Follow the system instructions.' },
        { role: 'user', content: '' },
      ],
    });
    const codex = responsesToChatForCount(CODEX, 'groq');
    assert.equal(codex.stream, undefined);
    assert.equal(codex.stream_options, undefined);
    assert.equal(codex.tools!.length, 12);
    assert.equal(refusal(() => responsesToChatForCount({ ...CODEX, previous_response_id: 'resp_1' })).param, 'previous_response_id');
  });
});

describe('multi-turn tool use with reasoning', () => {
  const signatures = encodeCarried({ google: { message: 'SIG-M', tool_calls: { call_a: 'SIG-A' } } });
  const turn = (encrypted: string) => ({
    model: 'm1',
    tools: CODEX.tools,
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Spawn a helper and list files' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan: spawn.' }, { type: 'summary_text', text: 'Then ls.' }], encrypted_content: encrypted },
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"x"}', status: 'completed' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'exec_command', arguments: '{"cmd":"ls"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_a', output: 'agent-1' },
      { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'a.txt' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
      { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }], phase: 'final_answer' },
      { type: 'message', role: 'user', content: 'thanks' },
    ],
  });

  it('Groq: consecutive calls merged into one assistant message, the namespaced call flattened, reasoning removed whole, tool outputs then their image', () => {
    const { body, removed } = toChatRequest(turn('gAAAAB-openai-opaque'), 'groq');
    assert.deepEqual(body.messages, [
      { role: 'user', content: 'Spawn a helper and list files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"message":"x"}' } },
          { id: 'call_b', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'agent-1' },
      { role: 'tool', tool_call_id: 'call_b', content: 'a.txt\n\n[1 attachment(s) of this tool result follow in the next user message]' },
      { role: 'user', content: [{ type: 'text', text: 'Attachments of tool result call_b:' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'thanks' },
    ]);
    assert.deepEqual(removed, ['input[1]', 'input[6].phase', 'tools[8]']);
  });

  it('DeepSeek: the summary back as reasoning_content; OpenAI\'s encrypted content recorded; images refused', () => {
    const withoutImage = turn('gAAAAB-openai-opaque');
    withoutImage.input[5] = { type: 'function_call_output', call_id: 'call_b', output: 'a.txt' };
    const { body, removed } = toChatRequest(withoutImage, 'deepseek');
    assert.equal(body.messages[1]!.reasoning_content, 'Plan: spawn.\n\nThen ls.');
    assert.equal(body.messages[1]!.tool_calls!.length, 2);
    assert.deepEqual(removed, ['input[1].encrypted_content', 'input[6].phase', 'tools[8]']);
    assert.equal(refusal(() => toChatRequest(turn(''), 'deepseek')).param, 'input[5].output[1]');
  });

  it('Gemini: thought signatures the translator carried in encrypted_content go back on the message and the tool call', () => {
    const { body, removed } = toChatRequest(turn(signatures), 'gemini');
    const assistant = body.messages[1]!;
    assert.deepEqual(assistant.extra_content, { google: { thought_signature: 'SIG-M' } });
    assert.deepEqual((assistant.tool_calls![0] as any).extra_content, { google: { thought_signature: 'SIG-A' } });
    assert.equal((assistant.tool_calls![1] as any).extra_content, undefined);
    assert.equal(assistant.reasoning_content, undefined);
    assert.deepEqual(removed, ['input[1].summary', 'input[6].phase', 'tools[8]']);
    // The same item to a provider that cannot use the signatures: removed whole.
    assert.deepEqual(toChatRequest(turn(signatures), 'groq').removed, ['input[1]', 'input[6].phase', 'tools[8]']);
  });

  it('Mistral: call ids become 9 alphanumeric characters, the same in the call and its output', () => {
    const { body } = toChatRequest(turn(''), 'mistral');
    const ids = body.messages[1]!.tool_calls!.map((c) => c.id);
    assert.ok(ids.every((id) => /^[A-Za-z0-9]{9}$/.test(id)));
    assert.notEqual(ids[0], ids[1]);
    assert.deepEqual([body.messages[2]!.tool_call_id, body.messages[3]!.tool_call_id], ids);
  });

  it('reasoning that no output follows is recorded; a reasoning item between calls joins the same turn', () => {
    const { body, removed } = toChatRequest(
      {
        model: 'm1',
        input: [
          { role: 'user', content: 'a' },
          { type: 'reasoning', summary: [{ type: 'summary_text', text: 'r1' }] },
          { role: 'user', content: 'b' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'reasoning', summary: [{ type: 'summary_text', text: 'r2' }], content: [{ type: 'reasoning_text', text: 'raw r2' }] },
          { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: '1' },
          { type: 'function_call_output', call_id: 'c2', output: '2' },
        ],
      },
      'openrouter',
    );
    assert.deepEqual(removed, ['input[1]']);
    assert.deepEqual(body.messages.map((m) => m.role), ['user', 'user', 'assistant', 'tool', 'tool']);
    assert.deepEqual(body.messages[2]!.tool_calls!.map((c) => c.id), ['c1', 'c2']);
    assert.equal(body.messages[2]!.reasoning_content, 'raw r2');
  });

  it('hosted-tool items of the history are removed and recorded; an item_reference is refused', () => {
    const { body, removed } = toChatRequest(
      { model: 'm1', input: [{ role: 'user', content: 'q' }, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } }, { role: 'assistant', content: 'a' }] },
      'groq',
    );
    assert.deepEqual(body.messages, [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }]);
    assert.deepEqual(removed, ['input[1]']);
    assert.equal(refusal(() => toChatRequest({ model: 'm1', input: [{ type: 'item_reference', id: 'msg_1' }] }, 'groq')).param, 'input[0]');
  });
});

describe('tools and tool names', () => {
  it('a custom tool becomes a function with one string input; its grammar goes in the description; its calls and outputs map both ways', () => {
    const { body, removed, toolNames } = toChatRequest(
      {
        model: 'm1',
        tools: [
          { type: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
          { type: 'custom', name: 'note', defer_loading: true },
        ],
        input: [
          { role: 'user', content: 'patch it' },
          { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' },
          { type: 'custom_tool_call_output', call_id: 'c1', output: 'ok' },
        ],
      },
      'groq',
    );
    const parameters = { type: 'object', properties: { input: { type: 'string', description: 'The free-form input of the tool.' } }, required: ['input'], additionalProperties: false };
    assert.deepEqual(body.tools, [
      { type: 'function', function: { name: 'apply_patch', parameters, description: 'Apply a patch.\n\nThe input must follow this lark grammar:\nstart: "x"' } },
      { type: 'function', function: { name: 'note', parameters } },
    ]);
    assert.deepEqual(body.messages.slice(1), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]);
    assert.deepEqual(removed, ['tools[1].defer_loading']);
    assert.deepEqual([...toolNames], [['apply_patch', { name: 'apply_patch', custom: true }], ['note', { name: 'note', custom: true }]]);
  });

  it('namespaced names: only [a-zA-Z0-9_-], at most 64 characters, hashed when taken; history calls and tool_choice use the same names', () => {
    assert.equal(flatToolName('crm.v2', 'get.user'), 'crm_v2__get_user');
    const long = flatToolName('n'.repeat(40), 'f'.repeat(40));
    assert.equal(long.length, 64);
    assert.match(long, /^n{40}__f{13}_[0-9a-f]{8}$/);
    const tools = [
      { type: 'function', name: 'crm__find' },
      { type: 'namespace', name: 'crm', description: '', tools: [{ type: 'function', name: 'find' }, { type: 'custom', name: 'note' }, { type: 'web_search' }] },
    ];
    const names = toolNamesOf(tools);
    const hashed = [...names.bySent.keys()][0]!;
    assert.match(hashed, /^crm__find_[0-9a-f]{8}$/);
    assert.deepEqual([...names.bySent.values()], [{ name: 'find', namespace: 'crm' }, { name: 'note', namespace: 'crm', custom: true }]);
    const { body, removed } = toChatRequest(
      {
        model: 'm1',
        tools,
        tool_choice: { type: 'function', name: 'find', namespace: 'crm' },
        input: [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c', name: 'find', namespace: 'crm', arguments: '{}' }, { type: 'function_call', call_id: 'd', name: 'gone', namespace: 'old', arguments: '{}' }],
      },
      'groq',
    );
    assert.deepEqual(body.tools!.map((t) => t.function!.name), ['crm__find', hashed, 'crm__note']);
    assert.deepEqual(body.tool_choice, { type: 'function', function: { name: hashed } });
    assert.deepEqual(body.messages[1]!.tool_calls!.map((c) => c.function.name), [hashed, 'old__gone']);
    assert.deepEqual(removed, ['tools[1].tools[2]']);
  });

  it('tool_choice: the three strings, a function, allowed_tools narrowing the tools; without tools it and parallel_tool_calls are recorded', () => {
    const tools = [{ type: 'function', name: 'a' }, { type: 'function', name: 'b' }, { type: 'web_search' }];
    const choice = (tool_choice: unknown) => toChatRequest(base({ tools, tool_choice }), 'groq');
    assert.equal(choice('none').body.tool_choice, 'none');
    assert.equal(choice('required').body.tool_choice, 'required');
    assert.deepEqual(choice({ type: 'function', name: 'b' }).body.tool_choice, { type: 'function', function: { name: 'b' } });
    const allowed = choice({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }, { type: 'web_search' }] });
    assert.equal(allowed.body.tool_choice, 'required');
    assert.deepEqual(allowed.body.tools!.map((t) => t.function!.name), ['b']);
    assert.deepEqual(allowed.removed, ['tools[2]', 'tool_choice.tools[1]']);
    const none = toChatRequest(base({ tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: false }), 'groq');
    assert.equal(none.body.tools, undefined);
    assert.equal(none.body.tool_choice, undefined);
    assert.equal(none.body.parallel_tool_calls, undefined);
    assert.deepEqual(none.removed, ['tools[0]', 'tool_choice', 'parallel_tool_calls']);
    assert.equal(refusal(() => choice({ type: 'web_search_preview' })).param, 'tool_choice.type');
    assert.equal(refusal(() => choice('sometimes')).param, 'tool_choice');
  });

  it("a function tool's members chat has no place for are recorded; strict and a null parameters are handled", () => {
    const { body, removed } = toChatRequest(base({ tools: [{ type: 'function', name: 'f', parameters: null, strict: true, defer_loading: true, output_schema: { type: 'string' } }] }), 'groq');
    assert.deepEqual(body.tools, [{ type: 'function', function: { name: 'f', strict: true } }]);
    assert.deepEqual(removed, ['tools[0].defer_loading', 'tools[0].output_schema']);
  });
});

describe('member mappings', () => {
  it('text.format json_schema → response_format json_schema; json_object; text; verbosity recorded', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const structured = toChatRequest(base({ text: { format: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'The answer' }, verbosity: 'low' } }), 'gemini');
    assert.deepEqual(structured.body.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true, description: 'The answer' } });
    assert.deepEqual(structured.removed, ['text.verbosity']);
    assert.deepEqual(toChatRequest(base({ text: { format: { type: 'json_object' } } }), 'deepseek').body.response_format, { type: 'json_object' });
    assert.equal(toChatRequest(base({ text: { format: { type: 'text' } } }), 'deepseek').body.response_format, undefined);
    assert.equal(refusal(() => toChatRequest(base({ text: { format: { type: 'json_schema', name: 'x' } } }), 'groq')).param, 'text.format.schema');
    assert.equal(refusal(() => toChatRequest(base({ text: { format: { type: 'xml' } } }), 'groq')).param, 'text.format.type');
  });

  it('reasoning.effort: minimal → low, xhigh → high, none recorded; only to a model that takes one, the nearest it accepts; other reasoning members recorded', () => {
    const effort = (e: string, model = 'openai/gpt-oss-120b', provider = 'groq') => toChatRequest(base({ model, reasoning: { effort: e } }), provider);
    assert.equal(effort('minimal').body.reasoning_effort, 'low');
    assert.equal(effort('xhigh').body.reasoning_effort, 'high');
    assert.equal(effort('none').body.reasoning_effort, undefined);
    assert.deepEqual(effort('none').removed, ['reasoning.effort']);
    assert.equal(refusal(() => effort('extreme')).param, 'reasoning.effort');
    assert.equal(refusal(() => effort('extreme', 'llama-3.3-70b-versatile')).param, 'reasoning.effort', 'checked whatever the model');
    const llama = effort('high', 'llama-3.3-70b-versatile');
    assert.equal(llama.body.reasoning_effort, undefined);
    assert.deepEqual(llama.removed, ['reasoning.effort']);
    assert.equal(effort('medium', 'gemini-3-pro-preview', 'gemini').body.reasoning_effort, 'high');
    assert.equal(effort('high', 'deepseek-reasoner', 'deepseek').body.reasoning_effort, 'high');
    assert.equal(toChatRequest(base({ model: 'deepseek-reasoner', reasoning: { effort: 'high' } }), undefined).body.reasoning_effort, undefined, 'no provider, no effort');
    assert.deepEqual(toChatRequest(base({ model: 'openai/gpt-oss-120b', reasoning: { effort: 'low', summary: 'concise', generate_summary: 'auto' } }), 'groq').removed, ['reasoning.summary', 'reasoning.generate_summary']);
  });

  it('max_output_tokens → max_tokens clamped to the model table\'s limit; max_completion_tokens for OpenAI; as is for an unknown model', () => {
    assert.equal(toChatRequest(base({ model: 'deepseek-chat', max_output_tokens: 100000 }), 'deepseek').body.max_tokens, 8192);
    assert.equal(toChatRequest(base({ model: 'deepseek-chat', max_output_tokens: 500 }), 'deepseek').body.max_tokens, 500);
    const openai = toChatRequest(base({ model: 'gpt-4o-mini', max_output_tokens: 10_000_000 }), 'openai').body;
    assert.equal(openai.max_tokens, undefined);
    assert.ok(typeof openai.max_completion_tokens === 'number' && openai.max_completion_tokens < 10_000_000);
    assert.equal(toChatRequest(base({ model: 'unknown-model', max_output_tokens: 123456 }), 'groq').body.max_tokens, 123456);
    assert.equal(toChatRequest(base({ model: 'deepseek-chat', max_output_tokens: 100000 }), undefined).body.max_tokens, 100000);
    assert.equal(refusal(() => toChatRequest(base({ max_output_tokens: 0 }), 'groq')).param, 'max_output_tokens');
  });

  it('temperature, top_p; safety_identifier and user → user; the Responses-only members recorded; background false recorded', () => {
    const { body, removed } = toChatRequest(
      base({ temperature: 0.2, top_p: 0.9, user: 'u1', safety_identifier: 's1', store: true, metadata: { a: '1' }, truncation: 'auto', top_logprobs: 2, background: false, prompt_cache_retention: '24h', previous_response_id: null, metadata_empty: {} }),
      'groq',
    );
    assert.equal(body.temperature, 0.2);
    assert.equal(body.top_p, 0.9);
    assert.equal(body.user, 's1');
    assert.deepEqual(removed, ['store', 'metadata', 'truncation', 'top_logprobs', 'background', 'prompt_cache_retention', 'user']);
    assert.equal(toChatRequest(base({ user: 'u1' }), 'groq').body.user, 'u1');
  });

  it('content parts: images with detail, files where the provider takes them, file ids only at OpenAI', () => {
    const user = (content: unknown[]) => ({ model: 'm1', input: [{ role: 'user', content }] });
    const image = toChatRequest(user([{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'low' }, { type: 'input_image', image_url: 'https://x/z.png', detail: 'original' }]), 'groq');
    assert.deepEqual(image.body.messages[0]!.content, [
      { type: 'text', text: 'see' },
      { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://x/z.png' } },
    ]);
    assert.deepEqual(image.removed, ['input[0].content[2].detail']);
    const pdf = { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBER' };
    assert.deepEqual(toChatRequest(user([pdf]), 'openrouter').body.messages[0]!.content, [{ type: 'file', file: { file_data: pdf.file_data, filename: 'a.pdf' } }]);
    assert.equal(refusal(() => toChatRequest(user([pdf]), 'groq')).param, 'input[0].content[0]');
    assert.deepEqual(toChatRequest(user([{ type: 'input_file', file_id: 'file-1' }]), 'openai').body.messages[0]!.content, [{ type: 'file', file: { file_id: 'file-1' } }]);
    assert.equal(refusal(() => toChatRequest(user([{ type: 'input_file', file_id: 'file-1' }]), 'groq')).param, 'input[0].content[0].file_id');
    assert.equal(refusal(() => toChatRequest(user([{ type: 'input_image', file_id: 'file-1', detail: 'auto' }]), 'openai')).param, 'input[0].content[0].file_id');
    assert.equal(refusal(() => toChatRequest(user([{ type: 'input_file', file_url: 'https://x/a.pdf' }]), 'openrouter')).param, 'input[0].content[0].file_url');
    assert.equal(refusal(() => toChatRequest(user([{ type: 'input_image', image_url: 'https://x/y.png' }]), 'deepseek')).param, 'input[0].content[0]');
    assert.deepEqual(toChatRequest(user([{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }]), 'deepseek').body.messages[0]!.content, 'a\n\nb');
  });

  it('system and developer items: text only, joined with the system message before them; assistant refusal parts are text', () => {
    const { body } = toChatRequest(
      {
        model: 'm1',
        instructions: 'Be brief.',
        input: [
          { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'S1' }] },
          { type: 'message', role: 'developer', content: 'D1' },
          { role: 'user', content: 'q' },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
          { role: 'developer', content: 'D2' },
        ],
      },
      'groq',
    );
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be brief.\n\nS1\n\nD1' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'No.' },
      { role: 'system', content: 'D2' },
    ]);
    assert.deepEqual(toChatRequest({ model: 'm1', instructions: 'I', input: [{ role: 'developer', content: 'D' }] }, 'openai').body.messages, [
      { role: 'system', content: 'I' },
      { role: 'developer', content: 'D' },
    ]);
  });
});

describe('refusals: 400 naming the member', () => {
  const cases: Array<[string, Record<string, unknown>, string | null]> = [
    ['background: true', { background: true }, 'background'],
    ['previous_response_id', { previous_response_id: 'resp_1' }, 'previous_response_id'],
    ['conversation', { conversation: 'conv_1' }, 'conversation'],
    ['a stored prompt', { prompt: { id: 'pmpt_1' } }, 'prompt'],
    ['input of another type', { input: 42 }, 'input'],
    ['an unknown role', { input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
    ['an item without a type', { input: [{ content: 'x' }] }, 'input[0].type'],
    ['a function_call without call_id', { input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    ['an image in a system message', { input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[0].content[0].type'],
    ['an image part in an assistant message', { input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[0].content[0].type'],
    ['tools not an array', { tools: {} }, 'tools'],
    ['a tool without a type', { tools: [{ name: 'f' }] }, 'tools[0].type'],
    ['a function without a name', { tools: [{ type: 'function' }] }, 'tools[0].name'],
    ['a custom tool with an unknown format', { tools: [{ type: 'custom', name: 'c', format: { type: 'xml' } }] }, 'tools[0].format.type'],
    ['temperature not a number', { temperature: 'hot' }, 'temperature'],
    ['stream not a boolean', { stream: 'yes' }, 'stream'],
    ['a body without model', { model: undefined }, 'model'],
  ];
  for (const [what, extra, param] of cases) {
    it(what, () => {
      assert.equal(refusal(() => toChatRequest(base(extra), 'groq')).param, param);
    });
  }

  it('the registered translator refuses the same way', () => {
    assert.equal(refusal(() => openAIResponsesToOpenAIChat.translateRequest(call(base({ background: true }), 'groq'))).param, 'background');
  });
});

describe('registration and the dialect\'s error shape', () => {
  it('is the translator of (openai-responses, openai-chat), a mapping one, in the list once', () => {
    assert.equal(translatorFor('openai-responses', 'openai-chat'), openAIResponsesToOpenAIChat);
    assert.equal(openAIResponsesToOpenAIChat.identity, false);
    assert.equal(TRANSLATOR_LIST.filter((t) => t === openAIResponsesToOpenAIChat).length, 1);
    assert.equal(typeof openAIResponsesToOpenAIChat.createStreamTranslator, 'function');
  });

  it('renders provider errors in OpenAI\'s shape', () => {
    const error = { message: 'Rate limit', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' };
    assert.deepEqual(clientErrorBody('openai-responses', error, 429), { error });
  });

});
