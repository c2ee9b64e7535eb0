/**
 * OpenAI chat completions (https://platform.openai.com/docs/api-reference/chat/create) as an
 * endpoint kind: `POST /ai/chat/completions`, `/v1/chat/completions`,
 * `/router/<name>/chat/completions`; streams as OpenAI SSE; usage in `usage` (or Groq's
 * `x_groq.usage` on stream chunks); token-limit handlers and managed prompts apply.
 */
import { badRequest, openAIErrorShape } from '../errors.ts';
import { OPENAI_ERROR_BODY } from './answer-completion.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { absent, isObject, validateOpenAICommon, wrongType } from './members.ts';
import { openAISse } from './openai-sse.ts';
import type { EndpointKind, Json, TextBudget } from './types.ts';

/**
 * Checks one chat message: an object with a string `role`; `content` a string or an array of
 * content parts (objects with a string `type`; `text` parts with a string `text`); string `name`
 * and `tool_call_id`; `tool_calls` an array of `{"function": {"name": string, "arguments"?: string}}`.
 * @throws {GatewayError} 400 `invalid_message` naming `messages[i]…`.
 */
function validateMessage(m: unknown, i: number): void {
  if (!isObject(m) || typeof m.role !== 'string') throw badRequest(`messages[${i}] must be an object with a string "role"`, `messages[${i}]`, 'invalid_message');
  const c = m.content;
  if (!absent(c) && typeof c !== 'string') {
    if (!Array.isArray(c)) throw badRequest(`messages[${i}].content must be a string or an array of content parts`, `messages[${i}].content`, 'invalid_message');
    for (let j = 0; j < c.length; j++) {
      const part = c[j] as unknown;
      if (!isObject(part) || typeof part.type !== 'string') throw badRequest(`messages[${i}].content[${j}] must be an object with a string "type"`, `messages[${i}].content[${j}]`, 'invalid_message');
      if (part.type === 'text' && typeof part.text !== 'string') throw badRequest(`messages[${i}].content[${j}].text must be a string`, `messages[${i}].content[${j}].text`, 'invalid_message');
    }
  }
  if (!absent(m.name) && typeof m.name !== 'string') throw badRequest(`messages[${i}].name must be a string`, `messages[${i}].name`, 'invalid_message');
  if (!absent(m.tool_call_id) && typeof m.tool_call_id !== 'string') throw badRequest(`messages[${i}].tool_call_id must be a string`, `messages[${i}].tool_call_id`, 'invalid_message');
  if (absent(m.tool_calls)) return;
  if (!Array.isArray(m.tool_calls)) throw badRequest(`messages[${i}].tool_calls must be an array`, `messages[${i}].tool_calls`, 'invalid_message');
  for (let j = 0; j < m.tool_calls.length; j++) {
    const tc = m.tool_calls[j] as unknown;
    const fn = isObject(tc) ? tc.function : undefined;
    if (!isObject(tc) || !isObject(fn) || typeof fn.name !== 'string' || (!absent(fn.arguments) && typeof fn.arguments !== 'string')) {
      throw badRequest(`messages[${i}].tool_calls[${j}] must be {"id", "type": "function", "function": {"name": string, "arguments": string}}`, `messages[${i}].tool_calls[${j}]`, 'invalid_message');
    }
    if (!absent(tc.id) && typeof tc.id !== 'string') throw badRequest(`messages[${i}].tool_calls[${j}].id must be a string`, `messages[${i}].tool_calls[${j}].id`, 'invalid_message');
  }
}

/** `tools`: an array of `{"type"?: string, "function"?: {"name": string, "parameters"?: object}}`. */
function validateTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw wrongType('tools', 'an array of tools');
  for (let j = 0; j < tools.length; j++) {
    const t = tools[j] as unknown;
    const fn = isObject(t) ? t.function : undefined;
    if (!isObject(t) || (!absent(t.type) && typeof t.type !== 'string') || (!absent(fn) && !(isObject(fn) && typeof fn.name === 'string'))) {
      throw badRequest(`tools[${j}] must be {"type": "function", "function": {"name": string, ...}}`, `tools[${j}]`, 'invalid_type');
    }
    if (isObject(fn) && !absent(fn.parameters) && !isObject(fn.parameters)) throw badRequest(`tools[${j}].function.parameters must be an object`, `tools[${j}].function.parameters`, 'invalid_type');
  }
}

/**
 * A chat completions body: the common members, then `messages` (required) and the chat members
 * the gateway or a provider translation reads.
 * @throws {GatewayError} 400 naming the member.
 */
export function validateChatBody(b: Json): void {
  validateOpenAICommon(b);
  if (!Array.isArray(b.messages)) throw badRequest('missing required member "messages" (an array of chat messages)', 'messages', 'missing_messages');
  for (let i = 0; i < b.messages.length; i++) validateMessage(b.messages[i], i);
  if (!absent(b.stream_options) && !isObject(b.stream_options)) throw wrongType('stream_options', 'an object');
  if (!absent(b.response_format) && !isObject(b.response_format)) throw wrongType('response_format', 'an object');
  if (!absent(b.stop) && typeof b.stop !== 'string' && !(Array.isArray(b.stop) && b.stop.every((x) => typeof x === 'string'))) throw wrongType('stop', 'a string or an array of strings');
  if (!absent(b.tool_choice) && typeof b.tool_choice !== 'string' && !isObject(b.tool_choice)) throw wrongType('tool_choice', 'a string or an object');
  if (!absent(b.tools)) validateTools(b.tools);
}

/**
 * Folds one `chat.completion.chunk` into the `chat.completion` assembled so far: content,
 * reasoning (`reasoning_content`, `reasoning`), refusal, tool calls (by `index`), finish reasons.
 * `id`, `model` and `created` come from the first chunk that has them: Azure OpenAI's first chunk
 * (the prompt's content-filter result, `prompt_filter_results`) and its content-filter offsets
 * chunks carry `""` and `0` (Microsoft Learn, "Azure OpenAI content filtering", streaming).
 */
export function foldChatChunk(into: Json | null, chunk: Json, text: TextBudget): Json {
  const a = into ?? { id: chunk.id, object: 'chat.completion', created: chunk.created, model: chunk.model, choices: [] };
  if (!a.id && chunk.id) a.id = chunk.id;
  if (!a.model && chunk.model) a.model = chunk.model;
  if (!a.created && chunk.created) a.created = chunk.created;
  if (chunk.system_fingerprint) a.system_fingerprint = chunk.system_fingerprint;
  if (!Array.isArray(chunk.choices)) return a;
  for (const c of chunk.choices as Json[]) {
    const index = typeof c.index === 'number' ? c.index : 0;
    let choice = a.choices[index] as Json | undefined;
    if (!choice) {
      choice = { index, message: { role: 'assistant', content: null }, finish_reason: null };
      a.choices[index] = choice;
    }
    const d = (c.delta ?? {}) as Json;
    const msg = choice.message as Json;
    if (typeof d.role === 'string') msg.role = d.role;
    if (typeof d.content === 'string') msg.content = text.append(msg.content, d.content);
    if (typeof d.reasoning_content === 'string') msg.reasoning_content = text.append(msg.reasoning_content, d.reasoning_content);
    if (typeof d.reasoning === 'string') msg.reasoning = text.append(msg.reasoning, d.reasoning);
    if (typeof d.refusal === 'string') msg.refusal = text.append(msg.refusal, d.refusal);
    if (Array.isArray(d.tool_calls)) {
      const calls = (msg.tool_calls ??= []) as Json[];
      for (const tc of d.tool_calls as Json[]) {
        const i = typeof tc.index === 'number' ? tc.index : calls.length;
        const call = (calls[i] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.function.name = tc.function.name;
        if (typeof tc.function?.arguments === 'string') call.function.arguments = text.append(call.function.arguments, tc.function.arguments);
      }
    }
    if (c.finish_reason) choice.finish_reason = c.finish_reason;
  }
  return a;
}

/** OpenAI chat completions. */
export const chatCompletions: EndpointKind = {
  name: 'chat',
  dialect: ENDPOINT_DIALECTS.chat,
  paths: ['/ai/chat/completions', '/v1/chat/completions'],
  routerTail: '/chat/completions',
  routerLabel: 'router:chat',
  loadBalance: 'chat',
  validate: validateChatBody,
  errorBody: openAIErrorShape,
  framing: openAISse,
  reading: {
    usageInBody: (body) => body.usage || null,
    // Groq sends the final usage under `x_groq` on its stream.
    usageInChunk: (chunk) => chunk.usage || chunk.x_groq?.usage || null,
    mergeUsage: null,
    foldChunk: foldChatChunk,
  },
  tokenLimits: { handlers: ['truncate', 'middle-out', 'fallback'], chatView: null, fromChatView: null },
  // A whole stream ends with `data: [DONE]` (framing.doneData), the only sign of one: the finish chunk may be followed by a usage chunk.
  completion: { finalEvents: new Set(), errorBody: OPENAI_ERROR_BODY },
  prompts: true,
  providerOfBareModel: null,
  forwardsClientHeaders: false,
  localCount: null,
  logged: true,
};
