/**
 * Checks of an Anthropic Messages body (Anthropic API reference, "Messages" and "Count tokens in a
 * Message": https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/api/messages-count-tokens):
 * the members the gateway or a translation reads, each failure a 400 naming the member. Unknown
 * members and block types pass as sent (Anthropic adds them often; a translator refuses what it
 * cannot carry).
 */
import { badRequest } from '../errors.ts';
import { absent, isObject, wrongType } from './members.ts';
import type { Json } from './types.ts';

/** Members that, when present and not null, must be finite numbers. */
const NUMBER_MEMBERS = ['temperature', 'top_p', 'top_k'] as const;

/** Members that, when present and not null, must be objects with a string `type`. */
const TYPED_OBJECT_MEMBERS = ['tool_choice', 'thinking'] as const;

/** 400 `invalid_message` naming `path`. */
function invalidMessage(message: string, path: string) {
  return badRequest(message, path, 'invalid_message');
}

/** A content block that fails its check: its path below the list (`[1]`, `[1].content[0]`) and what is wrong. */
interface BlockProblem {
  at: string;
  what: 'block' | 'text' | 'content';
}

/**
 * The first problem in a list of content blocks, or null: each an object with a string `type`; a
 * `text` block's `text` a string; a `tool_result`'s `content` a string or blocks (checked the same
 * way). Paths are made only for a problem, so a valid body builds no string (Claude Code sends
 * hundreds of blocks).
 */
function blockProblem(blocks: unknown[]): BlockProblem | null {
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j];
    if (!isObject(b) || typeof b.type !== 'string') return { at: `[${j}]`, what: 'block' };
    if (b.type === 'text' && typeof b.text !== 'string') return { at: `[${j}]`, what: 'text' };
    if (b.type === 'tool_result' && !absent(b.content) && typeof b.content !== 'string') {
      if (!Array.isArray(b.content)) return { at: `[${j}]`, what: 'content' };
      const inner = blockProblem(b.content);
      if (inner !== null) return { at: `[${j}].content${inner.at}`, what: inner.what };
    }
  }
  return null;
}

/** 400 `invalid_message` for `problem` in the blocks at `path` (e.g. `messages[2].content`, `system`), naming the block or its member. */
function blockError(path: string, problem: BlockProblem) {
  const at = path + problem.at;
  if (problem.what === 'block') return invalidMessage(`${at} must be a content block: an object with a string "type"`, at);
  if (problem.what === 'text') return invalidMessage(`${at}.text must be a string`, `${at}.text`);
  return invalidMessage(`${at}.content must be a string or an array of content blocks`, `${at}.content`);
}

/** `messages[i]`: `{role: string, content: string | blocks}` (any role string: Claude Code sends `system` too). */
function validateMessage(m: unknown, i: number): void {
  if (!isObject(m) || typeof m.role !== 'string') throw invalidMessage(`messages[${i}] must be an object with a string "role"`, `messages[${i}]`);
  if (typeof m.content === 'string') return;
  if (!Array.isArray(m.content)) throw invalidMessage(`messages[${i}].content must be a string or an array of content blocks`, `messages[${i}].content`);
  const problem = blockProblem(m.content);
  if (problem !== null) throw blockError(`messages[${i}].content`, problem);
}

/** `tools`: objects with a string `name`; `input_schema` an object when present. */
function validateTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw wrongType('tools', 'an array of tools');
  for (let j = 0; j < tools.length; j++) {
    const t = tools[j];
    if (!isObject(t) || typeof t.name !== 'string') throw badRequest(`tools[${j}] must be an object with a string "name"`, `tools[${j}]`, 'invalid_type');
    if (!absent(t.input_schema) && !isObject(t.input_schema)) throw badRequest(`tools[${j}].input_schema must be an object (a JSON Schema)`, `tools[${j}].input_schema`, 'invalid_type');
  }
}

/**
 * What a Messages body and a count_tokens body share: `model` a non-empty string; `messages` an
 * array of messages; `system` a string or text blocks; `tools`, `tool_choice` (`{type}`),
 * `thinking` (`{type}`), `temperature`/`top_p`/`top_k` numbers. `prompt_id` is refused: managed
 * prompts hold chat-completions messages and are served on chat completions only.
 * @throws {GatewayError} 400 naming the member.
 */
export function validateMessagesCommon(b: Json): void {
  // The refusal comes first: a body naming a managed prompt may leave the model to the prompt, and
  // "missing model" would send the client looking for the wrong fix.
  if (b.prompt_id !== undefined) throw badRequest('managed prompts ("prompt_id") are served on chat completions, not on the Messages API', 'prompt_id', 'unsupported_member');
  if (typeof b.model !== 'string' || b.model.length === 0) {
    throw badRequest('missing required member "model" (a string such as "claude-sonnet-4-5", or "<provider>/<model>")', 'model', 'missing_model');
  }
  if (!Array.isArray(b.messages)) throw badRequest('missing required member "messages" (an array of messages)', 'messages', 'missing_messages');
  for (let i = 0; i < b.messages.length; i++) validateMessage(b.messages[i], i);
  if (!absent(b.system) && typeof b.system !== 'string') {
    if (!Array.isArray(b.system)) throw wrongType('system', 'a string or an array of text blocks');
    const problem = blockProblem(b.system);
    if (problem !== null) throw blockError('system', problem);
  }
  if (!absent(b.tools)) validateTools(b.tools);
  for (const k of TYPED_OBJECT_MEMBERS) {
    if (!absent(b[k]) && !(isObject(b[k]) && typeof b[k].type === 'string')) throw wrongType(k, 'an object with a string "type"');
  }
  for (const k of NUMBER_MEMBERS) {
    const v = b[k];
    if (!absent(v) && (typeof v !== 'number' || !Number.isFinite(v))) throw wrongType(k, 'a number');
  }
}

/** True for an array of strings only. */
function isStringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

/**
 * A Messages body: the common members, `max_tokens` (required: a positive integer), `stream` a
 * boolean, `stop_sequences` strings, `metadata` an object.
 * @throws {GatewayError} 400 naming the member.
 */
export function validateMessagesBody(b: Json): void {
  validateMessagesCommon(b);
  if (absent(b.max_tokens)) throw badRequest('missing required member "max_tokens" (the most output tokens, a positive integer)', 'max_tokens', 'missing_max_tokens');
  if (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) throw wrongType('max_tokens', 'a positive integer');
  if (!absent(b.stream) && typeof b.stream !== 'boolean') throw wrongType('stream', 'a boolean');
  if (!absent(b.stop_sequences) && !isStringArray(b.stop_sequences)) throw wrongType('stop_sequences', 'an array of strings');
  if (!absent(b.metadata) && !isObject(b.metadata)) throw wrongType('metadata', 'an object');
}

/**
 * A count_tokens body: the common members; `stream` is refused (a count is never streamed).
 * @throws {GatewayError} 400 naming the member.
 */
export function validateCountTokensBody(b: Json): void {
  validateMessagesCommon(b);
  if (b.stream === true) throw badRequest('count_tokens does not stream: remove "stream"', 'stream', 'invalid_type');
}
