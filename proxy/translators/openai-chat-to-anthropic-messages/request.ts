/**
 * An OpenAI chat-completions request body (the `openai-chat` dialect) as an Anthropic Messages request body (the
 * `anthropic-messages` wire format). Every top-level member is mapped, removed and recorded, or refused:
 *
 * | chat member | Messages |
 * | --- | --- |
 * | `model` | `model` |
 * | `messages` | `system` and `messages` (./messages.ts) |
 * | `max_completion_tokens`, `max_tokens` | `max_tokens` (`max_completion_tokens` wins; a different `max_tokens` beside it is recorded), clamped to the model table's output limit of the provider's model when it has one; {@link ANTHROPIC_DEFAULT_MAX_TOKENS} when neither is set (Anthropic requires one) |
 * | `temperature` | `temperature` when 0 to 1; above 1 refused (400): Anthropic takes 0 to 1, OpenAI 0 to 2, and rescaling would change what the client asked for |
 * | `top_p` | `top_p` |
 * | `top_k` (a vendor extra of LiteLLM and OpenRouter clients) | `top_k` |
 * | `stop` | `stop_sequences` |
 * | `stream`, `stream_options` | `stream: true`; `include_usage: true`: the translated stream ends with a usage chunk (`choices: []`) and its other chunks carry `usage: null`, as OpenAI's; without it no chunk carries usage (the log and the cache still get it: `TranslatorCall.withheldUsage`) |
 * | `tools`, `tool_choice`, `parallel_tool_calls` | `tools`, `tool_choice` (./tools.ts) |
 * | `response_format` | `json_schema` → `output_config.format`; `json_object` refused (400); `text` nothing (../shared/anthropic-output-format.ts) |
 * | `safety_identifier`, `user` | `metadata.user_id` (`safety_identifier` wins; a different `user` is then recorded) |
 * | `metadata.user_id` | `metadata.user_id` when neither of the above is sent (the same meaning: the end user); else recorded |
 * | other `metadata` members | removed and recorded (`metadata.tag`): OpenAI's tags of a stored completion; Anthropic stores none |
 * | `n` | 1 honoured; more refused (400): one answer would come back where the client reads several |
 * | `logprobs: true` | refused (400): Anthropic returns no token log probabilities, which the client reads; `false` honoured |
 * | `audio`, `modalities` with `audio` | refused (400): the client asks for spoken output, Anthropic answers text only; `["text"]` honoured |
 * | `functions`, `function_call` (deprecated) | refused (400): the answer would carry `tool_calls`, not the `function_call` the client reads; send `tools` |
 * | `web_search_options` | refused (400): the model would answer without searching the web |
 * | `store: true` | removed and recorded: Anthropic keeps no completion for distillation or evals; `false` honoured |
 * | `reasoning_effort` | removed and recorded: extended thinking needs its signed thinking blocks sent back in every tool-use turn, which chat messages cannot carry, so thinking is not turned on (as `reasoning.effort` on the Responses route) |
 * | `seed`, `presence_penalty`, `frequency_penalty`, `logit_bias`, `top_logprobs`, `prediction`, `service_tier`, `prompt_cache_key`, `prompt_cache_retention`, `verbosity` | removed and recorded: Anthropic has no such control (`logit_bias` names OpenAI's token ids; `prediction` only speeds up; Anthropic caches by `cache_control`) |
 * | any other (vendor extras) | removed and recorded |
 *
 * A member set to null, `[]` or `{}` carries nothing and is not reported. Removed paths are recorded in this order:
 * the messages', the tools', the other members' in the body's order, then `max_tokens`, `user` and `metadata`'s.
 * Sources: https://platform.openai.com/docs/api-reference/chat/create, https://docs.anthropic.com/en/api/messages.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { anthropicOutputFormat, CHAT_FORMAT_PATHS } from '../shared/anthropic-output-format.ts';
import { openAIOnlyMembers, outputTokensOf, stopSequencesAt, temperatureAt } from '../shared/openai-chat-request.ts';
import { outputTokenLimit } from '../shared/openai-chat-target.ts';
import { isEmptyMember, nothing, numberAt, positiveIntegerAt, readMembers, type MemberHandler, type MemberState } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, type AnthropicRequest } from '../wire/anthropic-messages.ts';
import { anthropicTurns } from './messages.ts';
import { anthropicTools, anthropicToolChoice } from './tools.ts';

/** Anthropic's highest `temperature` (its range is 0 to 1; OpenAI's 0 to 2). */
export const ANTHROPIC_MAX_TEMPERATURE = 1;

/** What the top-level members write while they are read. */
interface Pending extends MemberState {
  readonly body: ChatCompletionRequest;
  readonly out: AnthropicRequest;
}

/** `top_k`, a vendor extra of OpenAI-compatible clients (LiteLLM, OpenRouter) that Anthropic takes as it is. */
function topK(value: unknown, p: Pending): void {
  p.out.top_k = positiveIntegerAt(value, 'top_k');
}

function stop(value: unknown, p: Pending): void {
  const stops = stopSequencesAt(value);
  if (stops) p.out.stop_sequences = stops;
}

function tools(value: unknown, p: Pending): void {
  if (!Array.isArray(value)) throw badRequest('tools must be an array', 'tools');
  if (value.length) p.out.tools = anthropicTools(value, p.removed);
}

function responseFormat(value: unknown, p: Pending): void {
  const format = anthropicOutputFormat(value, CHAT_FORMAT_PATHS, p.removed);
  if (format) p.out.output_config = { format };
}

/** The handler of each member that is mapped, honoured as it is, or refused; any other member is recorded as removed. */
const HANDLERS: ReadonlyMap<string, MemberHandler<Pending>> = new Map<string, MemberHandler<Pending>>([
  ['model', nothing],
  ['messages', nothing],
  // `max_tokens` is set from both once the members are read; each is checked here.
  ['max_tokens', (v) => positiveIntegerAt(v, 'max_tokens')],
  ['max_completion_tokens', (v) => positiveIntegerAt(v, 'max_completion_tokens')],
  ['temperature', (v, p) => (p.out.temperature = temperatureAt(v, ANTHROPIC_MAX_TEMPERATURE, 'anthropic'))],
  ['top_p', (v, p) => (p.out.top_p = numberAt(v, 'top_p'))],
  ['top_k', topK],
  ['stop', stop],
  ['stream', nothing],
  ['stream_options', nothing],
  ['tools', tools],
  ['tool_choice', nothing],
  ['parallel_tool_calls', nothing],
  ['response_format', responseFormat],
  ['user', nothing],
  ['safety_identifier', nothing],
  ['metadata', nothing],
  ...openAIOnlyMembers<Pending>('anthropic'),
]);

/** A string member, or a 400 naming it; undefined when absent or null. */
function optionalString(value: unknown, member: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${member} must be a string`, member);
  return value;
}

/** `metadata.user_id` from `safety_identifier`, else `user`, else `metadata.user_id`; the others recorded (table above). */
function endUser(p: Pending): void {
  const { body, removed } = p;
  const safety = optionalString(body.safety_identifier, 'safety_identifier');
  const user = optionalString(body.user, 'user');
  const metadata = isRecord(body.metadata) ? body.metadata : undefined;
  if (body.metadata !== undefined && body.metadata !== null && !metadata) throw badRequest('metadata must be an object', 'metadata');
  const fromMetadata = metadata ? optionalString(metadata.user_id, 'metadata.user_id') : undefined;
  const chosen = safety || user || fromMetadata;
  if (chosen) p.out.metadata = { user_id: chosen };
  if (safety && user !== undefined && user !== safety) removed.push('user');
  if (metadata) {
    for (const key in metadata) {
      const value = metadata[key];
      if (isEmptyMember(value) || (key === 'user_id' && value === chosen)) continue;
      removed.push(`metadata.${key}`);
    }
  }
}

/**
 * Maps an OpenAI chat-completions body (untrusted JSON, `model` already the provider's model) to an Anthropic Messages
 * request body per the table above, pushing the paths of the client members it removes to `removed`. `provider` (the
 * config name, `anthropic`) picks the model table's output limit; absent: no clamp.
 * @throws {GatewayError} 400 naming the member when the body is malformed or asks for what Anthropic cannot honour
 *   and the client relies on (`n` > 1, `logprobs`, audio output, `functions`, `web_search_options`, `json_object`,
 *   a temperature above 1, an audio part, an unknown role, a non-function tool, tool-call arguments that are not JSON).
 */
export function toAnthropicRequest(body: ChatCompletionRequest, stream: boolean, removed: string[] = [], provider?: string): AnthropicRequest {
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object', null);
  if (!Array.isArray(body.messages)) throw badRequest('messages must be an array', 'messages');
  const { systemBlocks, messages } = anthropicTurns(body, removed);
  // `max_tokens` is set once the members are read; written now so that it comes third, as in Anthropic's reference.
  const out: AnthropicRequest = { model: body.model, messages, max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS };
  if (systemBlocks.length) {
    out.system = systemBlocks.some((b) => b.cache_control !== undefined) ? systemBlocks : systemBlocks.map((b) => b.text as string).join('\n\n');
  }
  const p: Pending = { body, out, removed };
  // `tools` first, so their members are recorded before the other members' (the order documented above).
  if (body.tools !== undefined && body.tools !== null) tools(body.tools, p);
  readMembers(body, HANDLERS, p, 'tools');
  out.max_tokens = outputTokensOf(body, removed, outputTokenLimit(provider, out.model)) ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const toolChoice = anthropicToolChoice(body);
  if (toolChoice) out.tool_choice = toolChoice;
  endUser(p);
  if (stream) out.stream = true;
  return out;
}
