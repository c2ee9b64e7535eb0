/**
 * A Responses request body (the `openai-responses` dialect) as a chat-completions body (the `openai-chat` wire
 * format), member by member. Every top-level member is mapped, removed and recorded, or refused:
 *
 * | Responses member | chat completions |
 * | --- | --- |
 * | `model` | `model` |
 * | `instructions`, `input` | `messages` (./input.ts) |
 * | `tools`, `tool_choice` | `tools`, `tool_choice` (./tools.ts); hosted tools removed |
 * | `parallel_tool_calls` | `parallel_tool_calls` (removed when no tool is left) |
 * | `text.format` | `json_schema` → `response_format: {type: "json_schema", json_schema: {name, schema, strict, description}}`; `json_object` → `{type: "json_object"}`; `text` → none (chat's default) |
 * | `text.verbosity` | removed |
 * | `reasoning.effort` | `reasoning_effort`: `low`, `medium`, `high` as they are, `minimal` → `low`, `xhigh` → `high` (what every reasoning model of the chat providers takes), then the nearest the model accepts (Gemini 3 Pro: `medium` → `high`); removed when the model takes no reasoning effort or the model table does not know it (gpt-4o, Llama and Mistral's models refuse the member with a 400), and for `none` (the provider's default applies) |
 * | `reasoning.summary`, `generate_summary`, `context`, `mode` | removed: chat providers return their reasoning text as they do, and it becomes the reasoning item's summary |
 * | `max_output_tokens` | `max_tokens` (`max_completion_tokens` for OpenAI and Azure), clamped to the model table's output limit of the provider's model when it has one |
 * | `temperature`, `top_p` | the same |
 * | `safety_identifier`, `user` | `user` (`safety_identifier` wins; a different `user` is then removed) |
 * | `stream: true` | `stream: true`, `stream_options: {include_usage: true}` (usage arrives in the last chunk) |
 * | `background: true` | refused (400): a background response is polled later, which the provider cannot do; `false` removed |
 * | `previous_response_id`, `conversation` | refused (400): the gateway rebuilds the conversation before translation, so the translator receives it whole |
 * | `prompt` | refused (400): an OpenAI-stored prompt only OpenAI can resolve |
 * | any other (`store`, `include`, `prompt_cache_key`, `prompt_cache_retention`, `client_metadata`, `service_tier`, `truncation`, `metadata`, `max_tool_calls`, `top_logprobs`, `stream_options`, `context_management`, …) | removed: no chat equivalent, and none changes the answer |
 *
 * A member set to null, `[]` or `{}` carries nothing and is not reported. Removed paths are recorded in this order: the
 * conversation's, the tools', then the other members' in the body's order.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create, https://platform.openai.com/docs/api-reference/chat/create.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { chatReasoningEffort, chatTargetProfile, outputTokenLimit } from '../shared/openai-chat-target.ts';
import { booleanAt, numberAt, objectAt, readMembers, recordUnmapped, stringAt, type MemberState } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import type { ToolOrigin } from '../types.ts';
import { targetName, type RequestBuild } from './build.ts';
import { chatMessagesOf } from './input.ts';
import type { MessageOrigin } from './message-origins.ts';
import { toolNamesOf } from './tool-names.ts';
import { applyToolChoice, chatToolsOf } from './tools.ts';

/** What {@link toChatRequest} is for: a request to send, or a body whose input tokens are counted (`/responses/input_tokens`). */
export type RequestPurpose = 'responses' | 'input_tokens';

/** A translated request: the chat body, the paths of the client members it removed, and the tool names it changed. */
export interface ChatRequestResult {
  body: ChatCompletionRequest;
  removed: string[];
  /** Sent name → origin for namespaced and custom tools (`TranslatorCall.toolNames`). */
  toolNames: ReadonlyMap<string, ToolOrigin>;
  /** Where each chat message came from in the Responses body (./message-origins.ts), by index. */
  origins: MessageOrigin[];
}

/** Where the top-level members write while they are mapped (`removed`: `b.removed`, for {@link readMembers}). */
interface Pending extends MemberState {
  readonly b: RequestBuild;
  readonly out: ChatCompletionRequest;
  readonly purpose: RequestPurpose;
}

type MemberHandler = (value: unknown, p: Pending) => void;

/** The chat effort asked for by Responses `reasoning.effort`; `none` is absent (removed). A Map: "toString" is no effort. */
const EFFORTS: ReadonlyMap<string, 'low' | 'medium' | 'high'> = new Map<string, 'low' | 'medium' | 'high'>([
  ['minimal', 'low'],
  ['low', 'low'],
  ['medium', 'medium'],
  ['high', 'high'],
  ['xhigh', 'high'],
]);

function maxOutputTokens(value: unknown, p: Pending): void {
  if (!Number.isInteger(value) || (value as number) < 1) throw badRequest('max_output_tokens must be a positive integer', 'max_output_tokens');
  const limit = outputTokenLimit(p.b.provider, p.out.model);
  p.out[p.b.profile.maxTokensMember] = limit !== undefined && (value as number) > limit ? limit : (value as number);
}

function stream(value: unknown, p: Pending): void {
  if (booleanAt(value, 'stream') && p.purpose === 'responses') {
    p.out.stream = true;
    p.out.stream_options = { include_usage: true };
  }
}

function text(value: unknown, p: Pending): void {
  const t = objectAt(value, 'text');
  if (t.format !== undefined && t.format !== null) {
    const f = objectAt(t.format, 'text.format');
    switch (f.type) {
      case 'text':
        break;
      case 'json_object':
        p.out.response_format = { type: 'json_object' };
        break;
      case 'json_schema': {
        const schema: Record<string, unknown> = { name: stringAt(f.name, 'text.format.name'), schema: objectAt(f.schema, 'text.format.schema') };
        if (typeof f.strict === 'boolean') schema.strict = f.strict;
        if (typeof f.description === 'string') schema.description = f.description;
        p.out.response_format = { type: 'json_schema', json_schema: schema };
        recordUnmapped(f, FORMAT_MEMBERS, 'text.format', p.b.removed);
        break;
      }
      default:
        throw badRequest(`text.format.type must be "text", "json_schema" or "json_object", got ${JSON.stringify(f.type)}`, 'text.format.type');
    }
  }
  recordUnmapped(t, TEXT_MEMBERS, 'text', p.b.removed);
}
const TEXT_MEMBERS = new Set(['format']);
const FORMAT_MEMBERS = new Set(['type', 'name', 'schema', 'strict', 'description']);

function reasoning(value: unknown, p: Pending): void {
  const r = objectAt(value, 'reasoning');
  if (r.effort !== undefined && r.effort !== null) {
    const asked = stringAt(r.effort, 'reasoning.effort');
    const wanted = EFFORTS.get(asked);
    if (!wanted && asked !== 'none') throw badRequest(`reasoning.effort must be one of none, ${[...EFFORTS.keys()].join(', ')}`, 'reasoning.effort');
    const effort = wanted && chatReasoningEffort(p.b.provider, p.out.model, wanted);
    if (effort) p.out.reasoning_effort = effort;
    else p.b.removed.push('reasoning.effort');
  }
  recordUnmapped(r, EFFORT_MEMBER, 'reasoning', p.b.removed);
}
const EFFORT_MEMBER = new Set(['effort']);

function refuse(member: string, why: string): MemberHandler {
  return () => {
    throw badRequest(`${member}: ${why}`, member);
  };
}

/**
 * The handler of each top-level member that is mapped or refused (`instructions`, `input` and `tools` are mapped
 * first). A Map, so a member named like an `Object.prototype` property (`__proto__`, `toString`) is an unknown member
 * like any other.
 */
const HANDLERS: ReadonlyMap<string, MemberHandler> = new Map(Object.entries<MemberHandler>({
  model: () => {},
  instructions: () => {},
  input: () => {},
  tools: () => {},
  tool_choice: (v, p) => applyToolChoice(v, p.out, p.b),
  parallel_tool_calls: (v, p) => {
    const parallel = booleanAt(v, 'parallel_tool_calls');
    if (p.out.tools?.length) p.out.parallel_tool_calls = parallel;
    else p.b.removed.push('parallel_tool_calls');
  },
  text,
  reasoning,
  max_output_tokens: maxOutputTokens,
  temperature: (v, p) => (p.out.temperature = numberAt(v, 'temperature')),
  top_p: (v, p) => (p.out.top_p = numberAt(v, 'top_p')),
  user: () => {},
  safety_identifier: () => {},
  stream,
  background: (v, p) => {
    if (booleanAt(v, 'background')) throw badRequest(`background: ${targetName(p.b)} cannot run a response in the background; send it without background`, 'background');
    p.b.removed.push('background');
  },
  previous_response_id: refuse('previous_response_id', 'the conversation must reach the translator whole; send the earlier items in input'),
  conversation: refuse('conversation', 'conversations are kept by OpenAI; send the earlier items in input'),
  prompt: refuse('prompt', 'a prompt stored at OpenAI cannot be resolved for another provider; send instructions and input'),
}));

/** `safety_identifier`, else `user`, as chat's `user`; a different `user` beside a `safety_identifier` is recorded. */
function endUser(input: Record<string, unknown>, p: Pending): void {
  const user = input.user === undefined || input.user === null ? undefined : stringAt(input.user, 'user');
  const safety = input.safety_identifier === undefined || input.safety_identifier === null ? undefined : stringAt(input.safety_identifier, 'safety_identifier');
  const chosen = safety ?? user;
  if (chosen !== undefined && chosen !== '') p.out.user = chosen;
  if (safety !== undefined && user !== undefined && user !== safety) p.b.removed.push('user');
}

/**
 * Translates a Responses request body (untrusted JSON, `model` already the provider's model) into a chat-completions
 * body for `provider` (config name; absent: no provider-specific mapping and no clamp), per the table above.
 * @throws {GatewayError} 400 naming the member when the body is malformed or asks for something the provider cannot
 *   honour and that would change the answer (`background`, `previous_response_id`, `conversation`, `prompt`, an
 *   `item_reference`, a file id, a hosted tool forced by `tool_choice`, a part the provider cannot read).
 */
export function toChatRequest(input: unknown, provider: string | undefined, purpose: RequestPurpose = 'responses'): ChatRequestResult {
  if (!isRecord(input)) throw badRequest('the request body must be a JSON object', null);
  const names = toolNamesOf(input.tools);
  const b: RequestBuild = { provider, profile: chatTargetProfile(provider), names, removed: [], origins: [] };
  const model = stringAt(input.model, 'model');
  const out: ChatCompletionRequest = { model, messages: chatMessagesOf(input.instructions, input.input, b) };
  if (input.tools !== undefined && input.tools !== null) {
    const tools = chatToolsOf(input.tools, b);
    if (tools.length) out.tools = tools;
  }
  const p: Pending = { b, out, purpose, removed: b.removed };
  readMembers(input, HANDLERS, p);
  endUser(input, p);
  return { body: out, removed: b.removed, toolNames: names.bySent, origins: b.origins };
}
