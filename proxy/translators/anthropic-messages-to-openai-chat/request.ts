/**
 * A Messages request body (the `anthropic-messages` dialect) as a chat-completions body (the `openai-chat` wire
 * format), member by member. Every top-level member is mapped, removed and recorded, or refused:
 *
 * | Messages member | chat completions |
 * | --- | --- |
 * | `model` | `model` |
 * | `system`, `messages` | `messages` (./messages.ts) |
 * | `max_tokens` | `max_tokens` (`max_completion_tokens` for OpenAI and Azure), clamped to the model table's output limit of the provider's model when it has one; passed as is otherwise |
 * | `stream: true` | `stream: true`, `stream_options: {include_usage: true}` (usage arrives in the last chunk) |
 * | `stop_sequences` | `stop`; more than 4 refused (400): chat completions take at most 4 (OpenAI's limit) |
 * | `temperature`, `top_p` | the same |
 * | `top_k` | `top_k` where the provider takes it (Together, Fireworks, OpenRouter), else removed |
 * | `metadata.user_id` | `user`, as its SHA-256 (base64url) when longer than OpenAI's 64 characters (other `metadata` members removed) |
 * | `tools`, `tool_choice` | `tools`, `tool_choice`, `parallel_tool_calls` (./tools.ts); tool descriptions over the provider's limit in full in a system message after the request's own |
 * | `thinking` | `reasoning_effort` from `budget_tokens`: < 4,096 `low`, < 16,384 `medium`, else `high`; `adaptive` sets none (the model's default, as adaptive leaves it to the model); `disabled` removed; `display` removed |
 * | `output_config.effort` | `reasoning_effort` (`low`, `medium`, `high`; `max` and `xhigh` → `high`), winning over `thinking` |
 * | (both, for a model that takes no reasoning effort) | `reasoning_effort` only goes to a model the model table marks `reasoning` (shared/models.ts): to any other, or a model it does not know, `thinking` and `output_config.effort` are removed (gpt-4o, Llama and Mistral's models refuse the member with a 400, and Claude Code always sends an effort); a model that accepts only some efforts gets the nearest (Gemini 3 Pro: `medium` → `high`) |
 * | `output_config.format`, `output_format` | `response_format: {type: "json_schema", json_schema: {name: "output", schema, strict: true}}` |
 * | `mcp_servers` (non-empty) | refused (400): the model would lack the servers' tools |
 * | any other (`context_management`, `container`, `service_tier`, `inference_geo`, …) | removed |
 *
 * Sources: https://docs.anthropic.com/en/api/messages, https://platform.openai.com/docs/api-reference/chat/create.
 */
import { createHash } from 'node:crypto';
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { acceptsChatReasoningEffort, chatReasoningEffort, chatTargetProfile, outputTokenLimit } from '../shared/openai-chat-target.ts';
import { isPresent, numberAt, objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import type { RequestBuild } from './build.ts';
import { chatMessagesOf } from './messages.ts';
import { applyToolChoice, chatToolsOf, toolDescriptionsMessage } from './tools.ts';

/** What {@link toChatRequest} is for: a request to send (`max_tokens` required) or a body to count tokens of. */
export type RequestPurpose = 'messages' | 'count_tokens';

/** A translated request: the chat body and the paths of the client members it removed. */
export interface ChatRequestResult {
  body: ChatCompletionRequest;
  removed: string[];
}

/** Where the top-level members write while they are mapped. */
interface Pending {
  readonly b: RequestBuild;
  readonly out: ChatCompletionRequest;
  readonly purpose: RequestPurpose;
  readonly provider: string | undefined;
  /**
   * The provider's model takes `reasoning_effort` (the model table's `reasoning`). When it does not, or the table does
   * not know it, `thinking` and `output_config.effort` are removed and recorded: nothing of them is sent, as such a
   * model refuses the member with a 400 (gpt-4o, Llama and Mistral's models) or ignores it.
   */
  readonly reasoning: boolean;
  thinkingEffort?: Effort;
  outputEffort?: Effort;
}

type Effort = 'low' | 'medium' | 'high';

type MemberHandler = (value: unknown, p: Pending, body: Record<string, unknown>) => void;

/** Reasoning efforts by Anthropic `output_config.effort` (a Map: a client's "toString" is not an effort). */
const EFFORTS: ReadonlyMap<string, Effort> = new Map<string, Effort>([
  ['low', 'low'],
  ['medium', 'medium'],
  ['high', 'high'],
  ['max', 'high'],
  ['xhigh', 'high'],
]);

function positiveInteger(value: unknown, path: string): number {
  if (!Number.isInteger(value) || (value as number) < 1) throw badRequest(`${path} must be a positive integer`, path);
  return value as number;
}

function maxTokens(value: unknown, p: Pending): void {
  const asked = positiveInteger(value, 'max_tokens');
  const limit = outputTokenLimit(p.provider, p.out.model);
  p.out[p.b.profile.maxTokensMember] = limit !== undefined && asked > limit ? limit : asked;
}

function stream(value: unknown, p: Pending): void {
  if (typeof value !== 'boolean') throw badRequest('stream must be a boolean', 'stream');
  if (value && p.purpose === 'messages') {
    p.out.stream = true;
    p.out.stream_options = { include_usage: true };
  }
}

/** The most stop sequences chat completions take (OpenAI's `stop`: "up to 4 sequences"). */
export const CHAT_MAX_STOP_SEQUENCES = 4;

/**
 * `stop_sequences` → `stop`; more than {@link CHAT_MAX_STOP_SEQUENCES} are refused here rather than by the provider
 * (OpenAI answers 400), and dropping some would let the answer run past a sequence the client stops on.
 */
function stopSequences(value: unknown, p: Pending): void {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) {
    throw badRequest('stop_sequences must be an array of strings', 'stop_sequences');
  }
  // A count of input tokens sends no stop sequence anywhere.
  if (value.length > CHAT_MAX_STOP_SEQUENCES && p.purpose === 'messages') {
    throw badRequest(
      `stop_sequences: at most ${CHAT_MAX_STOP_SEQUENCES} when translated to chat completions (OpenAI's limit), got ${value.length}`,
      'stop_sequences',
      'unsupported_parameter',
    );
  }
  if (value.length) p.out.stop = value as string[];
}

/** The longest `user` OpenAI accepts, in characters (OpenRouter: 128). */
const USER_MAX = 64;

/**
 * `metadata.user_id` → `user`; one longer than {@link USER_MAX} characters (Claude Code sends a 150-character JSON
 * string) is replaced by its SHA-256 in base64url (43 characters): still one stable identifier per user.
 */
function metadata(value: unknown, p: Pending): void {
  const m = objectAt(value, 'metadata');
  if (m.user_id !== undefined && m.user_id !== null) {
    const id = stringAt(m.user_id, 'metadata.user_id');
    if (id !== '') p.out.user = id.length <= USER_MAX ? id : createHash('sha256').update(id).digest('base64url');
  }
  recordUnmapped(m, USER_ID, 'metadata', p.b.removed, isPresent);
}
const USER_ID = new Set(['user_id']);

function thinking(value: unknown, p: Pending): void {
  const t = objectAt(value, 'thinking');
  let effort: Effort | undefined;
  switch (t.type) {
    case 'enabled': {
      const budget = positiveInteger(t.budget_tokens, 'thinking.budget_tokens');
      effort = budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
      break;
    }
    case 'adaptive':
      break;
    case 'disabled':
      p.b.removed.push('thinking');
      return;
    default:
      throw badRequest(`thinking.type must be "enabled", "adaptive" or "disabled", got ${JSON.stringify(t.type)}`, 'thinking.type');
  }
  // Checked all the same, so a malformed one is a 400 whatever the model; removed whole when the model takes no effort.
  if (!p.reasoning) {
    p.b.removed.push('thinking');
    return;
  }
  p.thinkingEffort = effort;
  recordUnmapped(t, THINKING_MAPPED, 'thinking', p.b.removed, isPresent);
}
const THINKING_MAPPED = new Set(['type', 'budget_tokens']);

function responseFormat(value: unknown, path: string, p: Pending): void {
  if (value === null) return;
  const f = objectAt(value, path);
  if (f.type !== 'json_schema') throw badRequest(`${path}.type must be "json_schema", got ${JSON.stringify(f.type)}`, `${path}.type`);
  p.out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: objectAt(f.schema, `${path}.schema`), strict: true } };
  recordUnmapped(f, FORMAT_MAPPED, path, p.b.removed, isPresent);
}
const FORMAT_MAPPED = new Set(['type', 'schema']);

function outputConfig(value: unknown, p: Pending): void {
  const c = objectAt(value, 'output_config');
  if (c.effort !== undefined && c.effort !== null) {
    const effort = EFFORTS.get(stringAt(c.effort, 'output_config.effort'));
    if (!effort) throw badRequest(`output_config.effort must be one of ${[...EFFORTS.keys()].join(', ')}`, 'output_config.effort');
    if (p.reasoning) p.outputEffort = effort;
    else p.b.removed.push('output_config.effort');
  }
  if (c.format !== undefined) responseFormat(c.format, 'output_config.format', p);
  recordUnmapped(c, OUTPUT_MAPPED, 'output_config', p.b.removed, isPresent);
}
const OUTPUT_MAPPED = new Set(['effort', 'format']);

function mcpServers(value: unknown, p: Pending): void {
  if (Array.isArray(value) && value.length) {
    throw badRequest('mcp_servers: MCP servers are reached by Anthropic itself; the OpenAI-compatible provider cannot call their tools', 'mcp_servers');
  }
  p.b.removed.push('mcp_servers');
}

/**
 * The handler of each top-level member that is mapped (`system` and `messages` are mapped first, together). A Map, so
 * a member named like an `Object.prototype` property (`__proto__`, `toString`) is an unknown member like any other.
 */
const HANDLERS: ReadonlyMap<string, MemberHandler> = new Map(Object.entries<MemberHandler>({
  model: () => {},
  system: () => {},
  messages: () => {},
  max_tokens: maxTokens,
  stream,
  stop_sequences: stopSequences,
  temperature: (v, p) => (p.out.temperature = numberAt(v, 'temperature')),
  top_p: (v, p) => (p.out.top_p = numberAt(v, 'top_p')),
  top_k: (v, p) => (p.b.profile.topK ? (p.out.top_k = numberAt(v, 'top_k')) : p.b.removed.push('top_k')),
  metadata,
  tools: (v, p) => {
    const { tools, overflow } = chatToolsOf(v, p.b);
    if (tools.length) p.out.tools = tools;
    if (overflow.length) {
      // After the request's own system prompt, so that stays first.
      const at = p.out.messages[0]?.role === 'system' ? 1 : 0;
      p.out.messages.splice(at, 0, { role: 'system', content: toolDescriptionsMessage(overflow) });
    }
  },
  tool_choice: (v, p, body) => applyToolChoice(v, Array.isArray(body.tools) && body.tools.length > 0, p.out, p.b),
  thinking,
  output_config: outputConfig,
  output_format: (v, p) => responseFormat(v, 'output_format', p),
  mcp_servers: mcpServers,
}));

/**
 * Translates a Messages request body (untrusted JSON, `model` already the provider's model) into a chat-completions
 * body for `provider` (config name; absent: no provider-specific mapping and no clamp), per the table above.
 * @throws {GatewayError} 400 naming the member when the body is malformed or asks for something the provider
 *   cannot honour and that would change the answer (a server tool, `mcp_servers`, a document or image the provider
 *   cannot read, a prefill it cannot continue).
 */
export function toChatRequest(input: unknown, provider: string | undefined, purpose: RequestPurpose = 'messages'): ChatRequestResult {
  if (!isRecord(input)) throw badRequest('the request body must be a JSON object', null);
  const b: RequestBuild = { provider, profile: chatTargetProfile(provider), removed: [] };
  const model = stringAt(input.model, 'model');
  const out: ChatCompletionRequest = { model, messages: chatMessagesOf(input.system, input.messages, b) };
  const p: Pending = { b, out, purpose, provider, reasoning: acceptsChatReasoningEffort(provider, model) };
  if (purpose === 'messages' && (input.max_tokens === undefined || input.max_tokens === null)) {
    throw badRequest('max_tokens is required', 'max_tokens');
  }
  for (const key in input) {
    const value = input[key];
    if (value === undefined || value === null) continue;
    const handler = HANDLERS.get(key);
    if (handler) handler(value, p, input);
    else b.removed.push(key);
  }
  const wanted = p.outputEffort ?? p.thinkingEffort;
  // A model that accepts only some efforts gets the nearest (Gemini 3 Pro refuses `medium`).
  const effort = wanted && chatReasoningEffort(provider, model, wanted);
  if (effort) out.reasoning_effort = effort;
  return { body: out, removed: b.removed };
}
