/**
 * Checks of an OpenAI Responses body (OpenAI API reference, "Responses" → "Create a model response"
 * and "Get input token counts": https://platform.openai.com/docs/api-reference/responses/create,
 * https://platform.openai.com/docs/api-reference/responses/input-tokens): the members the gateway
 * or a translation reads, each failure a 400 naming the member. Unknown members, item types and tool
 * types pass as sent (OpenAI adds them often; a translator refuses or records what it cannot carry).
 */
import { badRequest } from '../errors.ts';
import { absent, isObject, wrongType } from './members.ts';
import type { Json } from './types.ts';

/** Members that, when present and not null, must be finite numbers. */
const NUMBER_MEMBERS = ['temperature', 'top_p', 'top_logprobs', 'max_tool_calls'] as const;
/** Members that, when present and not null, must be booleans. */
const BOOLEAN_MEMBERS = ['stream', 'store', 'background', 'parallel_tool_calls'] as const;
/** Members that, when present and not null, must be strings. */
const STRING_MEMBERS = ['instructions', 'previous_response_id', 'user', 'safety_identifier', 'prompt_cache_key', 'service_tier', 'truncation'] as const;
/** Members that, when present and not null, must be objects. */
const OBJECT_MEMBERS = ['text', 'reasoning', 'metadata', 'stream_options', 'client_metadata'] as const;

/** 400 `invalid_input` naming `path`. */
function invalidInput(message: string, path: string) {
  return badRequest(message, path, 'invalid_input');
}

/**
 * One `input` item: an object; `type` a string when present (an item without one is an "easy input
 * message" `{role, content}`); a message's `role` a string and its `content` a string or an array of
 * content parts (objects with a string `type`; `input_text`/`output_text` parts with a string `text`);
 * a `function_call`'s `call_id` and `name` strings, `arguments` a string; a
 * `function_call_output`'s `call_id` a string.
 * @throws {GatewayError} 400 `invalid_input` naming `input[i]…`.
 */
function validateItem(item: unknown, i: number): void {
  const at = `input[${i}]`;
  if (!isObject(item)) throw invalidInput(`${at} must be an object (an input item)`, at);
  const type = item.type;
  if (!absent(type) && typeof type !== 'string') throw invalidInput(`${at}.type must be a string`, `${at}.type`);
  if (absent(type) || type === 'message') {
    if (typeof item.role !== 'string') throw invalidInput(`${at} must have a string "role" (a message item)`, `${at}.role`);
    const content = item.content;
    if (typeof content === 'string') return;
    if (!Array.isArray(content)) throw invalidInput(`${at}.content must be a string or an array of content parts`, `${at}.content`);
    for (let j = 0; j < content.length; j++) {
      const part = content[j] as unknown;
      const pat = `${at}.content[${j}]`;
      if (!isObject(part) || typeof part.type !== 'string') throw invalidInput(`${pat} must be an object with a string "type"`, pat);
      if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') throw invalidInput(`${pat}.text must be a string`, `${pat}.text`);
    }
    return;
  }
  if (type === 'function_call') {
    for (const k of ['call_id', 'name', 'arguments'] as const) {
      if (typeof item[k] !== 'string') throw invalidInput(`${at}.${k} must be a string`, `${at}.${k}`);
    }
  } else if (type === 'function_call_output' && typeof item.call_id !== 'string') {
    throw invalidInput(`${at}.call_id must be a string`, `${at}.call_id`);
  }
}

/** `tools`: objects with a string `type`; a `function` tool's `name` a string and `parameters` an object when present; a `namespace`'s `tools` an array. */
function validateTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw wrongType('tools', 'an array of tools');
  for (let j = 0; j < tools.length; j++) {
    const t = tools[j] as unknown;
    const at = `tools[${j}]`;
    if (!isObject(t) || typeof t.type !== 'string') throw badRequest(`${at} must be an object with a string "type"`, at, 'invalid_type');
    if (t.type === 'function') {
      if (typeof t.name !== 'string') throw badRequest(`${at}.name must be a string`, `${at}.name`, 'invalid_type');
      if (!absent(t.parameters) && !isObject(t.parameters)) throw badRequest(`${at}.parameters must be an object (a JSON Schema)`, `${at}.parameters`, 'invalid_type');
    } else if (t.type === 'namespace' && !Array.isArray(t.tools)) {
      throw badRequest(`${at}.tools must be an array of tools`, `${at}.tools`, 'invalid_type');
    }
  }
}

/**
 * What a Responses body and an input_tokens body share: `model` a non-empty string; `input` a string
 * or an array of items; `tools`; `tool_choice` a string or an object; `include` strings; the number,
 * boolean, string and object members; `max_output_tokens` a positive integer. `prompt_id` is
 * refused: the gateway's managed prompts hold chat-completions messages and are served on chat
 * completions only (OpenAI's own `prompt` object passes as sent).
 * @throws {GatewayError} 400 naming the member.
 */
export function validateResponsesCommon(b: Json): void {
  // The refusal comes first: a body naming a managed prompt may leave the model to the prompt, and
  // "missing model" would send the client looking for the wrong fix.
  if (b.prompt_id !== undefined) throw badRequest('managed prompts ("prompt_id") are served on chat completions, not on the Responses API', 'prompt_id', 'unsupported_member');
  if (typeof b.model !== 'string' || b.model.length === 0) {
    throw badRequest('missing required member "model" (a string such as "gpt-4.1-mini", or "<provider>/<model>")', 'model', 'missing_model');
  }
  const input = b.input;
  if (!absent(input) && typeof input !== 'string') {
    if (!Array.isArray(input)) throw wrongType('input', 'a string or an array of input items');
    for (let i = 0; i < input.length; i++) validateItem(input[i], i);
  }
  if (!absent(b.tools)) validateTools(b.tools);
  if (!absent(b.tool_choice) && typeof b.tool_choice !== 'string' && !isObject(b.tool_choice)) throw wrongType('tool_choice', 'a string or an object');
  if (!absent(b.include) && !(Array.isArray(b.include) && b.include.every((s) => typeof s === 'string'))) throw wrongType('include', 'an array of strings');
  for (const k of NUMBER_MEMBERS) if (!absent(b[k]) && (typeof b[k] !== 'number' || !Number.isFinite(b[k]))) throw wrongType(k, 'a number');
  for (const k of BOOLEAN_MEMBERS) if (!absent(b[k]) && typeof b[k] !== 'boolean') throw wrongType(k, 'a boolean');
  for (const k of STRING_MEMBERS) if (!absent(b[k]) && typeof b[k] !== 'string') throw wrongType(k, 'a string');
  for (const k of OBJECT_MEMBERS) if (!absent(b[k]) && !isObject(b[k])) throw wrongType(k, 'an object');
  const max = b.max_output_tokens;
  if (!absent(max) && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) throw wrongType('max_output_tokens', 'a positive integer');
}

/**
 * A Responses body: the common members.
 * @throws {GatewayError} 400 naming the member.
 */
export function validateResponsesBody(b: Json): void {
  validateResponsesCommon(b);
}

/**
 * An input_tokens body: the common members; `stream` is refused (a count is never streamed).
 * @throws {GatewayError} 400 naming the member.
 */
export function validateInputTokensBody(b: Json): void {
  validateResponsesCommon(b);
  if (b.stream === true) throw badRequest('input_tokens does not stream: remove "stream"', 'stream', 'invalid_type');
}
