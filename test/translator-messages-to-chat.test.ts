/**
 * The `anthropic-messages` → `openai-chat` translator, request side (proxy/translators/anthropic-messages-to-openai-chat/):
 * the real Claude Code request and the recorded Anthropic request bodies translated to chat-completions bodies, the
 * removal records, multi-turn tool use with thinking per provider, every refusal (400 naming the member), the
 * count_tokens body, its registration, and Anthropic's error shape for the dialect.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest, ChatMessage } from '../shared/chat.ts';
import { GatewayError } from '../proxy/errors.ts';
import { buildConfig } from '../shared/config.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { clientErrorBody } from '../proxy/translators/dialects.ts';
import { TRANSLATOR_LIST, translatorFor } from '../proxy/translators/index.ts';
import {
  anthropicMessagesToOpenAIChat,
  messagesToChatForCount,
  toChatRequest,
  toMessage,
} from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { decodeCarried } from '../proxy/translators/anthropic-messages-to-openai-chat/carried-reasoning.ts';
import { DESCRIPTION_CONTINUED } from '../proxy/translators/anthropic-messages-to-openai-chat/tools.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { refusal } from './support/refusal.ts';

const fixture = (path: string): any => JSON.parse(readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8'));
const REQUEST_ID = '00000000-0000-4000-8000-000000000001';

/** A Messages body as the translator gets it: the client's body with `model` already the provider's model. */
function withModel(body: any, model: string): any {
  return { ...body, model };
}

function call(body: any, provider?: string, removed: string[] = []): TranslatorCall {
  return { body, stream: body.stream === true, requestId: REQUEST_ID, removed, ...(provider ? { provider } : {}) };
}


const base = (extra: Record<string, unknown> = {}) => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('Claude Code 2.1.328 request → chat completions', () => {
  const claude = fixture('clients/claude-code-2.1.328.request.json');

  it('maps system blocks, the mid-conversation system message, tools, effort, stream and user; records exactly what it removed', () => {
    // o4-mini, a reasoning model: it takes the effort (a model that does not is the next test).
    const { body, removed } = toChatRequest(withModel(claude, 'o4-mini'), 'openai');
    // Claude Code also sets output_config on its mid-conversation system message: chat has no per-message setting.
    assert.deepEqual(removed, [
      'system[1].cache_control',
      'system[2].cache_control',
      'messages[1].output_config',
      'messages[1].content[0].cache_control',
      'tools[10].defer_loading',
      'thinking.display',
      'context_management',
    ]);
    assert.equal(body.model, 'o4-mini');
    assert.deepEqual(body.messages.map((m) => m.role), ['system', 'system', 'user', 'system']);
    assert.equal(body.messages[0]!.content, claude.system.map((b: any) => b.text).join('\n\n'));
    assert.equal(body.messages[2]!.content, claude.messages[0].content.map((b: any) => b.text).join('\n\n'));
    assert.equal(body.messages[3]!.content, claude.messages[1].content[0].text);
    // OpenAI refuses tool descriptions over 1,024 characters: those are cut in the list and given whole in a system
    // message right after the request's own system prompt.
    const long = claude.tools.filter((t: any) => t.description.length > 1024);
    assert.deepEqual(long.map((t: any) => t.name), ['Agent', 'Bash', 'ListAgents', 'ScheduleWakeup', 'Skill', 'Workflow']);
    assert.equal(body.messages[1]!.content, ['Tool descriptions (in full; the tool list shortens them):', ...long.map((t: any) => `## ${t.name}\n${t.description}`)].join('\n\n'));
    assert.equal(body.tools!.length, 12);
    body.tools!.forEach((tool, i) => {
      const source = claude.tools[i];
      assert.equal(tool.type, 'function');
      assert.equal(tool.function!.name, source.name);
      const description = tool.function!.description!;
      assert.ok(description.length <= 1024, `${source.name}: at most 1,024 characters`);
      if (source.description.length <= 1024) assert.equal(description, source.description);
      else assert.equal(description, source.description.slice(0, 1024 - DESCRIPTION_CONTINUED.length) + DESCRIPTION_CONTINUED);
      assert.deepEqual(tool.function!.parameters, source.input_schema);
      assert.deepEqual(Object.keys(tool.function!).sort(), ['description', 'name', 'parameters']);
    });
    // o4-mini's output limit in the model table is 100,000: Claude Code's 128,000 is clamped, under OpenAI's member name.
    assert.equal(body.max_completion_tokens, 100000);
    assert.equal(body.max_tokens, undefined);
    assert.equal(body.reasoning_effort, 'medium');
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    // Claude Code's user_id is a 150-character JSON string; OpenAI takes 64: its SHA-256 stands for it.
    assert.equal(body.user, createHash('sha256').update(claude.metadata.user_id).digest('base64url'));
    assert.deepEqual(Object.keys(body).sort(), [
      'max_completion_tokens', 'messages', 'model', 'reasoning_effort', 'stream', 'stream_options', 'tools', 'user',
    ]);
  });

  it('to a model that takes no reasoning effort (gpt-4o-mini, Llama on Groq): no reasoning_effort, thinking and output_config.effort recorded as removed', () => {
    const expected = [
      'system[1].cache_control',
      'system[2].cache_control',
      'messages[1].output_config',
      'messages[1].content[0].cache_control',
      'tools[10].defer_loading',
      'thinking',
      'context_management',
      'output_config.effort',
    ];
    for (const [model, provider] of [['gpt-4o-mini', 'openai'], ['gpt-4o-mini-2024-07-18', 'openai'], ['llama-3.3-70b-versatile', 'groq'], ['mistral-large-latest', 'mistral'], ['gpt-4o', 'azure']] as const) {
      const { body, removed } = toChatRequest(withModel(claude, model), provider);
      assert.equal(body.reasoning_effort, undefined, model);
      assert.ok(!('reasoning_effort' in body), `${model}: the member is absent, not null`);
      assert.deepEqual(removed, expected, model);
    }
    // Through the registered translator, the removals reach call.removed (the log's svc-removed-members).
    const c = call(withModel(claude, 'gpt-4o-mini'), 'openai');
    const sent = JSON.parse(anthropicMessagesToOpenAIChat.translateRequest(c).toString('utf8'));
    assert.equal(sent.reasoning_effort, undefined);
    assert.deepEqual(c.removed, expected);
  });

  it('to a model the model table does not know, or without a provider: no reasoning_effort, the removal recorded', () => {
    for (const [model, provider] of [['some-local-model', 'ollama'], ['o9-preview', 'openai'], ['gpt-5', undefined]] as const) {
      const { body, removed } = toChatRequest(withModel(claude, model), provider);
      assert.equal(body.reasoning_effort, undefined, model);
      assert.ok(removed.includes('thinking') && removed.includes('output_config.effort'), `${model}: ${JSON.stringify(removed)}`);
      assert.ok(!removed.includes('thinking.display'), 'thinking is reported whole, not member by member');
    }
  });

  it('to the reasoning models: the effort is sent, thinking.display alone removed; a model taking only some efforts gets the nearest', () => {
    const effort = (model: string, provider: string) => toChatRequest(withModel(claude, model), provider);
    for (const [model, provider] of [['gpt-5', 'openai'], ['o3-mini-2025-01-31', 'openai'], ['gpt-6.2-sol', 'openai'], ['gemini-2.5-pro', 'gemini'], ['deepseek-reasoner', 'deepseek'], ['openai/gpt-oss-20b', 'groq'], ['o4-mini', 'azure']] as const) {
      const { body, removed } = effort(model, provider);
      assert.equal(body.reasoning_effort, 'medium', model);
      assert.ok(removed.includes('thinking.display') && !removed.includes('thinking') && !removed.includes('output_config.effort'), `${model}: ${JSON.stringify(removed)}`);
    }
    // Gemini 3 Pro refuses medium (low and high only), as does grok-3-mini; gpt-5-pro takes high alone.
    assert.equal(effort('gemini-3-pro-preview', 'gemini').body.reasoning_effort, 'high');
    assert.equal(effort('grok-3-mini', 'xai').body.reasoning_effort, 'high');
    assert.equal(toChatRequest(base({ model: 'gpt-5-pro', output_config: { effort: 'low' } }), 'openai').body.reasoning_effort, 'high');
    assert.equal(toChatRequest(base({ model: 'grok-3-mini', output_config: { effort: 'low' } }), 'xai').body.reasoning_effort, 'low');
    // grok-4 reasons but refuses the member (xAI: "Specifying reasoning_effort parameter will get an error response").
    assert.equal(effort('grok-4', 'xai').body.reasoning_effort, undefined);
  });

  it('to a provider without a description limit (Groq): the tools exactly as Claude Code wrote them, no extra system message', () => {
    const { body, removed } = toChatRequest(withModel(claude, 'openai/gpt-oss-120b'), 'groq');
    assert.equal(removed.length, 7);
    assert.deepEqual(body.messages.map((m) => m.role), ['system', 'user', 'system']);
    body.tools!.forEach((tool, i) => {
      assert.deepEqual(tool, { type: 'function', function: { name: claude.tools[i].name, parameters: claude.tools[i].input_schema, description: claude.tools[i].description } });
    });
    assert.equal(body.max_tokens, 65536);
  });

  it('uses max_tokens and each model table limit for the other providers; passes it as is when the model is unknown or the provider absent', () => {
    assert.equal(toChatRequest(withModel(claude, 'llama-3.3-70b-versatile'), 'groq').body.max_tokens, 32768);
    assert.equal(toChatRequest(withModel(claude, 'deepseek-chat'), 'deepseek').body.max_tokens, 8192);
    assert.equal(toChatRequest(withModel(claude, 'gpt-5'), 'openai').body.max_completion_tokens, 128000);
    assert.equal(toChatRequest(withModel(claude, 'some-local-model'), 'ollama').body.max_tokens, 128000);
    assert.equal(toChatRequest(withModel(claude, 'gpt-4o'), undefined).body.max_tokens, 128000);
  });

  it('through the registered translator: the body bytes, and the removals pushed to call.removed', () => {
    const c = call(withModel(claude, 'gpt-4o'), 'openai');
    const bytes = anthropicMessagesToOpenAIChat.translateRequest(c);
    const sent = JSON.parse(bytes.toString('utf8'));
    assert.deepEqual(sent, toChatRequest(withModel(claude, 'gpt-4o'), 'openai').body);
    assert.deepEqual(c.removed, toChatRequest(withModel(claude, 'gpt-4o'), 'openai').removed);
    // Without a removal list the translation is the same and nothing is reported.
    const bare: TranslatorCall = { body: withModel(claude, 'gpt-4o') as ChatCompletionRequest, stream: true, requestId: REQUEST_ID, provider: 'openai' };
    assert.deepEqual(anthropicMessagesToOpenAIChat.translateRequest(bare), bytes);
    assert.equal(bare.removed, undefined);
  });
});

describe('recorded Anthropic request bodies → chat completions', () => {
  it('thinking enabled, budget 1,024 → reasoning_effort low; temperature kept', () => {
    const req = fixture('providers/anthropic/message-stream-thinking.request.json');
    const { body, removed } = toChatRequest(withModel(req, 'deepseek-reasoner'), 'deepseek');
    assert.deepEqual(removed, []);
    assert.deepEqual(body, {
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'Two names for a pet pelican, be brief' }],
      max_tokens: 8192,
      temperature: 1,
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('thinking with display and a tool: the tool as a function, display removed', () => {
    const req = fixture('providers/anthropic/message-stream-thinking-tool-use.request.json');
    const { body, removed } = toChatRequest(withModel(req, 'openai/gpt-oss-120b'), 'groq');
    assert.deepEqual(removed, ['thinking.display']);
    assert.equal(body.max_tokens, 64000);
    assert.equal(body.reasoning_effort, 'low');
    assert.deepEqual(body.tools, [
      { type: 'function', function: { name: 'fixed_version', parameters: { properties: {}, type: 'object' }, description: 'Return a fixed test version string' } },
    ]);
  });

  it('adaptive thinking without effort sets no reasoning effort and removes nothing', () => {
    const req = fixture('providers/anthropic/message-stream-adaptive-thinking.request.json');
    const { body, removed } = toChatRequest(withModel(req, 'gpt-5'), 'openai');
    assert.deepEqual(removed, []);
    assert.equal(body.reasoning_effort, undefined);
    assert.equal(body.max_completion_tokens, 8192);
  });

  it('a string user message and two tools', () => {
    const req = fixture('providers/anthropic/message-stream-tool-use-recorded.request.json');
    const { body, removed } = toChatRequest(withModel(req, 'gpt-4o-mini'), 'openai');
    assert.deepEqual(removed, []);
    assert.deepEqual(body.messages, [{ role: 'user', content: 'What is the weather and current time in San Francisco?' }]);
    assert.deepEqual(body.tools!.map((t) => t.function!.name), ['get_weather', 'get_time']);
    assert.deepEqual(body.tools![0]!.function!.parameters, req.tools[0].input_schema);
    assert.equal(body.max_completion_tokens, 1024);
  });

  it('count_tokens: the body to estimate, without max_tokens or stream', () => {
    const req = fixture('providers/anthropic/count-tokens.request.json');
    const body = messagesToChatForCount(withModel(req, 'gpt-4o'), 'openai');
    assert.deepEqual(body, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello there' }] });
    const claude = fixture('clients/claude-code-2.1.328.request.json');
    const counted = messagesToChatForCount(withModel(claude, 'gpt-4o'), 'openai');
    assert.equal(counted.stream, undefined, 'a count is never streamed');
    assert.equal(counted.messages.length, 4, 'the system prompt, the tool descriptions, the user message, the system message');
    assert.equal(counted.tools!.length, 12);
  });
});

describe('multi-turn tool use with thinking', () => {
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
  const conversation = {
    model: 'm',
    max_tokens: 1000,
    thinking: { type: 'enabled', budget_tokens: 20000 },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is in /tmp?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should list the folder.', signature: 'EqQBCgIYAhIM' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' },
          { type: 'text', text: 'Listing it.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'Bash', input: { command: 'ls /tmp' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'Screenshot', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: 'a.txt\nb.txt' },
          { type: 'tool_result', tool_use_id: 'toolu_01B', is_error: true, content: [{ type: 'text', text: 'partial' }, image] },
          { type: 'text', text: 'Go on.' },
        ],
      },
    ],
  };

  it('OpenAI: tool calls, tool messages first, the error prefix, the tool result image in the following user message', () => {
    const { body, removed } = toChatRequest({ ...conversation, model: 'o3' }, 'openai');
    assert.deepEqual(removed, ['messages[1].content[0]', 'messages[1].content[1]']);
    assert.deepEqual(body.messages, [
      { role: 'user', content: 'What is in /tmp?' },
      {
        role: 'assistant',
        content: 'Listing it.',
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls /tmp"}' } },
          { id: 'toolu_01B', type: 'function', function: { name: 'Screenshot', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01A', content: 'a.txt\nb.txt' },
      { role: 'tool', tool_call_id: 'toolu_01B', content: 'Error: partial\n\n[1 attachment(s) of this tool result follow in the next user message]' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Attachments of tool result toolu_01B:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'text', text: 'Go on.' },
        ],
      },
    ] satisfies ChatMessage[]);
  });

  it('DeepSeek: the thinking text back as reasoning_content; the Anthropic signature and the redacted block removed; images refused', () => {
    const textOnly = { ...structuredClone(conversation), model: 'deepseek-reasoner' };
    (textOnly.messages[2]!.content as any[])[1].content = 'failed';
    const { body, removed } = toChatRequest(textOnly, 'deepseek');
    assert.deepEqual(removed, ['messages[1].content[0].signature', 'messages[1].content[1]']);
    assert.equal(body.reasoning_effort, 'high');
    assert.deepEqual(body.messages[1], {
      role: 'assistant',
      content: 'Listing it.',
      tool_calls: [
        { id: 'toolu_01A', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls /tmp"}' } },
        { id: 'toolu_01B', type: 'function', function: { name: 'Screenshot', arguments: '{}' } },
      ],
      reasoning_content: 'I should list the folder.',
    });
    const err = refusal(() => toChatRequest(conversation, 'deepseek'));
    assert.equal(err.param, 'messages[2].content[1].content[1]');
  });

  it('Groq (rejects reasoning_content): the thinking block is removed whole and nothing extra is sent', () => {
    const noImage = { ...structuredClone(conversation), model: 'openai/gpt-oss-120b' };
    (noImage.messages[2]!.content as any[])[1].content = 'failed';
    const { body, removed } = toChatRequest(noImage, 'groq');
    assert.deepEqual(removed, ['messages[1].content[0]', 'messages[1].content[1]']);
    assert.equal(body.messages[1]!.reasoning_content, undefined);
    assert.equal(body.messages[3]!.content, 'Error: failed');
    assert.deepEqual(body.messages[4], { role: 'user', content: 'Go on.' });
  });

  it('Mistral: tool call ids become 9 alphanumeric characters, the same in the call and its result', () => {
    const { body } = toChatRequest({ ...conversation, messages: conversation.messages.slice(0, 2).concat([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'x' }, { type: 'tool_result', tool_use_id: 'toolu_01B', content: 'y' }] } as any]) }, 'mistral');
    const ids = body.messages[1]!.tool_calls!.map((c) => c.id);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9]{9}$/);
    assert.notEqual(ids[0], ids[1]);
    assert.deepEqual(body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ids);
  });

  it('Gemini: thought signatures the translator carried in a thinking block go back on the tool calls', () => {
    const completion = fixture('providers/gemini/openai-compat-chat-completion-tool-call.json');
    const message = toMessage(completion, call(base()));
    const thinking = message.content.find((b) => b.type === 'thinking')!;
    const toolUse = message.content.find((b) => b.type === 'tool_use')!;
    const sig = completion.choices[0].message.extra_content.google.thought_signature;
    assert.deepEqual(decodeCarried(thinking.signature), { google: { message: sig } });
    const next = {
      model: 'gemini-2.5-pro',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'What time is it?' },
        { role: 'assistant', content: message.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '12:00' }] },
      ],
    };
    const { body, removed } = toChatRequest(next, 'gemini');
    assert.deepEqual(removed, []);
    const assistant = body.messages[1]!;
    assert.deepEqual(assistant.extra_content, { google: { thought_signature: sig } });
    assert.equal(assistant.tool_calls![0]!.id, toolUse.id);
    // The same history to Groq: the carried signature cannot be used there, and is reported.
    assert.deepEqual(toChatRequest(next, 'groq').removed, ['messages[1].content[0]']);
  });

  it('Gemini: a per-tool-call signature is put back on that tool call', () => {
    const signature = 'gateway-reasoning:' + Buffer.from(JSON.stringify({ google: { tool_calls: { call_1: 'SIG1' } } })).toString('base64url');
    const { body } = toChatRequest(
      {
        model: 'gemini-3-pro-preview',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }, { type: 'thinking', thinking: '', signature }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'ok' }] },
        ],
      },
      'gemini',
    );
    assert.deepEqual((body.messages[1]!.tool_calls![0] as any).extra_content, { google: { thought_signature: 'SIG1' } });
    assert.equal(body.messages[1]!.extra_content, undefined);
  });
});

describe('member mappings', () => {
  it('stop_sequences, temperature, top_p; top_k where the provider takes it, else removed', () => {
    const req = base({ stop_sequences: ['END', 'STOP'], temperature: 0.2, top_p: 0.9, top_k: 40 });
    const openai = toChatRequest(req, 'openai');
    assert.deepEqual(openai.body.stop, ['END', 'STOP']);
    assert.equal(openai.body.temperature, 0.2);
    assert.equal(openai.body.top_p, 0.9);
    assert.equal(openai.body.top_k, undefined);
    assert.deepEqual(openai.removed, ['top_k']);
    const together = toChatRequest(req, 'together');
    assert.equal(together.body.top_k, 40);
    assert.deepEqual(together.removed, []);
  });

  it('stop_sequences: four go as stop; five are refused naming stop_sequences (chat takes at most four), in Anthropic\'s error shape', () => {
    const four = ['a', 'b', 'c', 'd'];
    assert.deepEqual(toChatRequest(base({ stop_sequences: four }), 'openai').body.stop, four);
    const err = refusal(() => anthropicMessagesToOpenAIChat.translateRequest(call(base({ stop_sequences: [...four, 'e'] }), 'openai')));
    assert.equal(err.param, 'stop_sequences');
    assert.match(err.message, /^stop_sequences: at most 4 when translated to chat completions/);
    assert.deepEqual(clientErrorBody('anthropic-messages', { message: err.message, type: err.type, param: err.param, code: err.code }, err.status), {
      type: 'error',
      error: { type: 'invalid_request_error', message: err.message },
    });
    // Counting input tokens sends no stop sequence: all five are kept for the count.
    assert.equal((toChatRequest(base({ stop_sequences: [...four, 'e'] }), 'openai', 'count_tokens').body.stop as string[]).length, 5);
  });

  it('tool_choice: auto, any → required, tool → named function, none; disable_parallel_tool_use → parallel_tool_calls false', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const choice = (tool_choice: unknown) => toChatRequest(base({ tools, tool_choice }), 'openai').body;
    assert.equal(choice({ type: 'auto' }).tool_choice, 'auto');
    assert.equal(choice({ type: 'any' }).tool_choice, 'required');
    assert.equal(choice({ type: 'none' }).tool_choice, 'none');
    assert.deepEqual(choice({ type: 'tool', name: 'f' }).tool_choice, { type: 'function', function: { name: 'f' } });
    assert.equal(choice({ type: 'auto', disable_parallel_tool_use: true }).parallel_tool_calls, false);
    assert.equal(choice({ type: 'auto', disable_parallel_tool_use: false }).parallel_tool_calls, undefined);
    const noTools = toChatRequest(base({ tool_choice: { type: 'auto' } }), 'openai');
    assert.equal(noTools.body.tool_choice, undefined);
    assert.deepEqual(noTools.removed, ['tool_choice']);
  });

  it('a tool\'s strict flag is kept, its Anthropic-only members removed', () => {
    const { body, removed } = toChatRequest(
      base({ tools: [{ name: 'f', input_schema: { type: 'object' }, strict: true, cache_control: { type: 'ephemeral' }, input_examples: [{}] }] }),
      'openai',
    );
    assert.equal(body.tools![0]!.function!.strict, true);
    assert.deepEqual(removed, ['tools[0].cache_control', 'tools[0].input_examples']);
  });

  it('thinking budgets and efforts → reasoning_effort; output_config.effort wins; disabled is recorded', () => {
    const effort = (extra: Record<string, unknown>) => toChatRequest(base({ model: 'o3', ...extra }), 'openai').body.reasoning_effort;
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 1024 } }), 'low');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 4096 } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31999 } }), 'high');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31999 }, output_config: { effort: 'low' } }), 'low');
    assert.equal(effort({ output_config: { effort: 'max' } }), 'high');
    assert.equal(effort({ output_config: { effort: 'xhigh' } }), 'high');
    const disabled = toChatRequest(base({ thinking: { type: 'disabled' } }), 'openai');
    assert.equal(disabled.body.reasoning_effort, undefined);
    assert.deepEqual(disabled.removed, ['thinking']);
  });

  it('thinking and efforts to a model without reasoning: removed whole and recorded, in the order found; still checked', () => {
    const to4o = (extra: Record<string, unknown>) => toChatRequest(base({ model: 'gpt-4o-mini', ...extra }), 'openai');
    const enabled = to4o({ thinking: { type: 'enabled', budget_tokens: 2048, display: 'summarized' }, temperature: 1 });
    assert.equal(enabled.body.reasoning_effort, undefined);
    assert.equal(enabled.body.temperature, 1);
    assert.deepEqual(enabled.removed, ['thinking']);
    assert.deepEqual(to4o({ output_config: { effort: 'high' }, thinking: { type: 'adaptive' } }).removed, ['output_config.effort', 'thinking']);
    assert.deepEqual(to4o({ thinking: { type: 'disabled' } }).removed, ['thinking']);
    // Nothing asked, nothing removed.
    assert.deepEqual(to4o({}).removed, []);
    // The effort is removed, the rest of output_config still mapped.
    const schema = { type: 'object' };
    const format = to4o({ output_config: { effort: 'low', format: { type: 'json_schema', schema } } });
    assert.deepEqual(format.body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
    assert.deepEqual(format.removed, ['output_config.effort']);
    // A malformed member is a 400 whatever the model.
    assert.equal(refusal(() => to4o({ thinking: { type: 'enabled' } })).param, 'thinking.budget_tokens');
    assert.equal(refusal(() => to4o({ output_config: { effort: 'extreme' } })).param, 'output_config.effort');
  });

  it("an operator's gateway.yaml override `reasoning: true` makes a model the table lacks take the effort; `false` turns a reasoning model's off", () => {
    try {
      applyModelOverrides(buildConfig({ models: { 'ollama/my-reasoner': { 'context-window': 32768, 'max-output-tokens': 8192, reasoning: true } } }).models);
      const custom = toChatRequest(base({ model: 'my-reasoner', output_config: { effort: 'high' } }), 'ollama');
      assert.equal(custom.body.reasoning_effort, 'high');
      assert.deepEqual(custom.removed, []);
      applyModelOverrides(buildConfig({ models: { 'openai/o3': { reasoning: false } } }).models);
      const off = toChatRequest(base({ model: 'o3', output_config: { effort: 'high' } }), 'openai');
      assert.equal(off.body.reasoning_effort, undefined);
      assert.deepEqual(off.removed, ['output_config.effort']);
      applyModelOverrides(buildConfig({ models: { 'gemini/gemini-2.5-flash': { 'reasoning-efforts': ['low', 'high'] } } }).models);
      assert.equal(toChatRequest(base({ model: 'gemini-2.5-flash', output_config: { effort: 'medium' } }), 'gemini').body.reasoning_effort, 'high');
    } finally {
      applyModelOverrides({});
    }
    assert.equal(toChatRequest(base({ model: 'my-reasoner', output_config: { effort: 'high' } }), 'ollama').body.reasoning_effort, undefined);
  });

  it('structured output → response_format json_schema (strict)', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const { body } = toChatRequest(base({ output_config: { format: { type: 'json_schema', schema } } }), 'openai');
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  });

  it('metadata: user_id → user, other members removed; Anthropic-only top-level members removed', () => {
    const { body, removed } = toChatRequest(
      base({ metadata: { user_id: 'u1', trace: 'x' }, service_tier: 'auto', container: 'c', mcp_servers: [], inference_geo: 'us', stream: false }),
      'openai',
    );
    assert.equal(body.user, 'u1');
    assert.equal(body.stream, undefined);
    assert.deepEqual(removed, ['metadata.trace', 'service_tier', 'container', 'mcp_servers', 'inference_geo']);
  });

  it('images (base64 and URL) and documents (PDF → file part, text → text) in a user turn', () => {
    const { body, removed } = toChatRequest(
      base({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              { type: 'document', title: 'report.pdf', context: 'Q3', citations: { enabled: true }, source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
              { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'line 1' } },
              { type: 'text', text: 'Summarise.', citations: null },
            ],
          },
        ],
      }),
      'openai',
    );
    assert.deepEqual(removed, ['messages[0].content[1].citations']);
    assert.deepEqual(body.messages[0]!.content, [
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'text', text: 'Q3' },
      { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      { type: 'text', text: 'Notes\n\nline 1' },
      { type: 'text', text: 'Summarise.' },
    ]);
  });

  it('a final assistant message: Mistral continues it with prefix: true, OpenRouter as sent', () => {
    const req = base({ messages: [{ role: 'user', content: 'JSON please' }, { role: 'assistant', content: '{' }] });
    assert.equal(toChatRequest(req, 'mistral').body.messages[1]!.prefix, true);
    assert.deepEqual(toChatRequest(req, 'openrouter').body.messages[1], { role: 'assistant', content: '{' });
  });
});

describe('refusals: 400 naming the member', () => {
  const cases: Array<[string, () => unknown, string | null]> = [
    ['a server tool', () => toChatRequest(base({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] }), 'openai'), 'tools[0].type'],
    ['a built-in client tool', () => toChatRequest(base({ tools: [{ name: 'f', input_schema: { type: 'object' } }, { type: 'bash_20250124', name: 'bash' }] }), 'openai'), 'tools[1].type'],
    ['a tool without input_schema', () => toChatRequest(base({ tools: [{ name: 'f' }] }), 'openai'), 'tools[0].input_schema'],
    ['MCP servers', () => toChatRequest(base({ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }), 'openai'), 'mcp_servers'],
    ['a PDF to a provider without file parts', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'x' } }] }] }), 'groq'), 'messages[0].content[0]'],
    ['a document by URL', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } }] }] }), 'openai'), 'messages[0].content[0].source.type'],
    ['an image to DeepSeek', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] }] }), 'deepseek'), 'messages[0].content[0]'],
    ['an image from the Files API', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] }), 'openai'), 'messages[0].content[0].source.type'],
    ['a prefill OpenAI cannot continue', () => toChatRequest(base({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }), 'openai'), 'messages[1]'],
    ['a server tool result in an assistant turn', () => toChatRequest(base({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }, { role: 'user', content: 'b' }] }), 'openai'), 'messages[1].content[0].type'],
    ['a tool_use in a user turn', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }), 'openai'), 'messages[0].content[0].type'],
    ['an image in a system message', () => toChatRequest(base({ system: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }), 'openai'), 'system[0].type'],
    ['a bad role', () => toChatRequest(base({ messages: [{ role: 'tool', content: 'x' }] }), 'openai'), 'messages[0].role'],
    ['messages not an array', () => toChatRequest(base({ messages: {} }), 'openai'), 'messages'],
    ['no max_tokens', () => toChatRequest({ model: 'm', messages: [] }, 'openai'), 'max_tokens'],
    ['max_tokens not a positive integer', () => toChatRequest(base({ max_tokens: 0 }), 'openai'), 'max_tokens'],
    ['a bad thinking type', () => toChatRequest(base({ thinking: { type: 'on' } }), 'openai'), 'thinking.type'],
    ['thinking enabled without a budget', () => toChatRequest(base({ thinking: { type: 'enabled' } }), 'openai'), 'thinking.budget_tokens'],
    ['an unknown effort', () => toChatRequest(base({ output_config: { effort: 'extreme' } }), 'openai'), 'output_config.effort'],
    ['a bad tool_choice', () => toChatRequest(base({ tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'required' } }), 'openai'), 'tool_choice.type'],
    ['tool_choice tool without a name', () => toChatRequest(base({ tools: [{ name: 'f', input_schema: {} }], tool_choice: { type: 'tool' } }), 'openai'), 'tool_choice.name'],
    ['a tool_result without tool_use_id', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }), 'openai'), 'messages[0].content[0].tool_use_id'],
    ['stop_sequences not strings', () => toChatRequest(base({ stop_sequences: [1] }), 'openai'), 'stop_sequences'],
    ['temperature not a number', () => toChatRequest(base({ temperature: 'hot' }), 'openai'), 'temperature'],
    ['a non-PDF base64 document', () => toChatRequest(base({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'text/html', data: 'x' } }] }] }), 'openai'), 'messages[0].content[0].source.media_type'],
    ['a body that is not an object', () => toChatRequest([], 'openai'), null],
  ];
  for (const [name, fn, param] of cases) {
    it(name, () => {
      const err = refusal(fn);
      assert.equal(err.param, param);
      if (param) assert.ok(err.message.includes(param), `the message names ${param}: ${err.message}`);
    });
  }

  it('the registered translator refuses the same way', () => {
    const err = refusal(() => anthropicMessagesToOpenAIChat.translateRequest(call(base({ tools: [{ type: 'web_search_20250305', name: 'w' }] }), 'groq')));
    assert.equal(err.param, 'tools[0].type');
    assert.match(err.message, /groq/);
  });
});

describe('registration and the dialect\'s error shape', () => {
  it('is the translator of (anthropic-messages, openai-chat), a mapping one, in the list once', () => {
    assert.equal(translatorFor('anthropic-messages', 'openai-chat'), anthropicMessagesToOpenAIChat);
    assert.equal(anthropicMessagesToOpenAIChat.identity, false);
    assert.equal(TRANSLATOR_LIST.filter((t) => t === anthropicMessagesToOpenAIChat).length, 1);
    assert.equal(typeof anthropicMessagesToOpenAIChat.createStreamTranslator, 'function');
  });

  it('renders provider errors as {"type":"error","error":{type,message}} with Anthropic\'s types', () => {
    const err = (type: string, code: string | null = null) => ({ message: 'boom', type, param: null, code });
    const typeOf = (e: ReturnType<typeof err>, status?: number) => (clientErrorBody('anthropic-messages', e, status) as any).error.type;
    assert.deepEqual(clientErrorBody('anthropic-messages', err('invalid_request_error'), 400), { type: 'error', error: { type: 'invalid_request_error', message: 'boom' } });
    assert.equal(typeOf(err('authentication_error'), 401), 'authentication_error');
    assert.equal(typeOf(err('permission_error'), 403), 'permission_error');
    assert.equal(typeOf(err('not_found_error'), 404), 'not_found_error');
    assert.equal(typeOf(err('invalid_request_error'), 413), 'request_too_large');
    assert.equal(typeOf(err('rate_limit_exceeded'), 429), 'rate_limit_error');
    assert.equal(typeOf(err('server_error'), 500), 'api_error');
    assert.equal(typeOf(err('server_error'), 529), 'overloaded_error');
    // Without a status: Anthropic's own type (the Anthropic transport keeps it as code), else the neutral type's.
    assert.equal(typeOf(err('server_error', 'overloaded_error')), 'overloaded_error');
    assert.equal(typeOf(err('rate_limit_exceeded')), 'rate_limit_error');
    assert.equal(typeOf(err('insufficient_quota')), 'billing_error');
    assert.equal(typeOf(err('server_error')), 'api_error');
    assert.equal(typeOf(err('something_new')), 'api_error');
    // The OpenAI dialects are unchanged.
    assert.deepEqual(clientErrorBody('openai-chat', err('server_error'), 500), { error: err('server_error') });
  });
});
