/**
 * An OpenAI chat-completions request body (the `openai-chat` dialect) as a Converse request body (the
 * `bedrock-converse` wire format; the model id goes in the URL, which the transport builds). Every top-level member of
 * OpenAI's request is mapped, removed and recorded, or refused ({@link CONVERSE_MEMBERS} holds a decision for each, so
 * that a member OpenAI adds is decided on, not passed over):
 *
 * | chat member | Converse |
 * | --- | --- |
 * | `model` | the URL's model id (the transport) |
 * | `messages` | `system` and `messages` (./messages.ts) |
 * | `max_completion_tokens`, `max_tokens` | `inferenceConfig.maxTokens` (`max_completion_tokens` wins; a different `max_tokens` beside it is recorded), clamped to the model table's output limit of the provider's model when it has one |
 * | `temperature` | `inferenceConfig.temperature` when 0 to 1; above 1 refused (400): Converse takes 0 to 1, OpenAI 0 to 2, and rescaling would change what the client asked for |
 * | `top_p` | `inferenceConfig.topP` |
 * | `stop` | `inferenceConfig.stopSequences` |
 * | `stream`, `stream_options` | the transport's `/converse-stream`; `include_usage: true`: the translated stream ends with a usage chunk (`choices: []`) and its other chunks carry `usage: null`, as OpenAI's; without it no chunk carries usage (the log and the cache still get it: `TranslatorCall.withheldUsage`) |
 * | `tools`, `tool_choice`, `parallel_tool_calls` | `toolConfig` (./tools.ts) |
 * | `response_format` | `json_schema` → `outputConfig.textFormat` (Converse's structured output: `schema` serialized, `name`, `description`; the answer is held to the schema, so `strict` is honoured whatever its value; a model without structured outputs is answered 400 by Bedrock, not served without the schema); `json_object` refused (400): Converse has no JSON mode without a schema; `text` nothing |
 * | `service_tier` | `default`, `flex`, `priority` → `serviceTier: {type}` (Bedrock's tiers of the same names); `auto` nothing (the account's default); `scale` removed and recorded (Bedrock's reserved tier is bought capacity, not a request's choice) |
 * | `n` | 1 honoured; more refused (400): one answer would come back where the client reads several |
 * | `logprobs: true` | refused (400): Converse returns no token log probabilities, which the client reads; `false` honoured |
 * | `audio`, `modalities` with `audio` | refused (400): the client asks for spoken output, Converse answers text only; `["text"]` honoured |
 * | `functions`, `function_call` (deprecated) | refused (400): the answer would carry `tool_calls`, not the `function_call` the client reads; send `tools` |
 * | `web_search_options` | refused (400): the model would answer without searching the web |
 * | `moderation` | refused (400): the client asks OpenAI to score or block input and output and reads the results; Converse runs Bedrock guardrails only, configured apart |
 * | `store: true` | removed and recorded: Bedrock keeps no completion for distillation or evals; `false` honoured |
 * | `reasoning_effort` | removed and recorded: Converse turns reasoning on per model in `additionalModelRequestFields`, and a reasoning model's signed reasoning blocks would have to come back in every tool-use turn, which chat messages cannot carry (as `reasoning.effort` on the Responses route) |
 * | `user`, `safety_identifier` | removed and recorded: Converse has no end-user member |
 * | `metadata` | its members removed and recorded (`metadata.tag`): OpenAI's tags of a stored completion; Bedrock stores none |
 * | `seed`, `presence_penalty`, `frequency_penalty`, `logit_bias`, `top_logprobs`, `prediction`, `prompt_cache_key`, `prompt_cache_retention`, `prompt_cache_options`, `verbosity` | removed and recorded: Converse has no such control (`logit_bias` names OpenAI's token ids; `prediction` only speeds up; Converse caches at `cachePoint` blocks, for its own time) |
 * | any other (vendor extras such as `top_k`) | removed and recorded |
 *
 * A member set to null, `[]` or `{}` carries nothing and is not reported. Removed paths are recorded in this order:
 * the messages', the tools' (with `tool_choice` and `parallel_tool_calls`), the other members' in the body's order,
 * then `max_tokens`.
 * Sources: https://platform.openai.com/docs/api-reference/chat/create,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { openAIOnlyMembers, outputTokensOf, stopSequencesAt, temperatureAt } from '../shared/openai-chat-request.ts';
import { outputTokenLimit } from '../shared/openai-chat-target.ts';
import {
  isEmptyMember,
  nothing,
  numberAt,
  objectAt,
  positiveIntegerAt,
  readMembers,
  record,
  recordUnmapped,
  refuse,
  type MemberHandler,
  type MemberState,
} from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import type { ConverseRequest, ConverseServiceTier, ConverseTextFormat } from '../wire/bedrock.ts';
import { converseTurns } from './messages.ts';
import { converseToolConfig } from './tools.ts';

/** Converse's highest `temperature` (`inferenceConfig.temperature` takes 0 to 1; OpenAI's is 0 to 2). */
export const CONVERSE_MAX_TEMPERATURE = 1;

/** What the top-level members write while they are read. */
interface Pending extends MemberState {
  readonly out: ConverseRequest;
  readonly inference: NonNullable<ConverseRequest['inferenceConfig']>;
}

const FORMAT_MEMBERS = new Set(['type', 'json_schema']);
/** `strict` is honoured: Converse holds the answer to the schema whatever it says. */
const SCHEMA_MEMBERS = new Set(['name', 'schema', 'strict', 'description']);

/** `response_format` as `outputConfig.textFormat` (table above); what it cannot carry is recorded. */
function responseFormat(value: unknown, p: Pending): void {
  const f = objectAt(value, 'response_format');
  switch (f.type) {
    case 'text':
      recordUnmapped(f, FORMAT_MEMBERS, 'response_format', p.removed);
      return;
    case 'json_object':
      throw badRequest('response_format.type "json_object": Bedrock Converse has no JSON mode without a schema; send a json_schema format', 'response_format.type', 'unsupported_parameter');
    case 'json_schema': {
      recordUnmapped(f, FORMAT_MEMBERS, 'response_format', p.removed);
      const s = objectAt(f.json_schema, 'response_format.json_schema');
      const jsonSchema: ConverseTextFormat['structure']['jsonSchema'] = { schema: JSON.stringify(objectAt(s.schema, 'response_format.json_schema.schema')) };
      if (typeof s.name === 'string' && s.name !== '') jsonSchema.name = s.name;
      if (typeof s.description === 'string' && s.description !== '') jsonSchema.description = s.description;
      recordUnmapped(s, SCHEMA_MEMBERS, 'response_format.json_schema', p.removed);
      p.out.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
      return;
    }
    default:
      throw badRequest(`response_format.type must be "text", "json_schema" or "json_object", got ${JSON.stringify(f.type)}`, 'response_format.type');
  }
}

function stop(value: unknown, p: Pending): void {
  const stops = stopSequencesAt(value);
  if (stops) p.inference.stopSequences = stops;
}

/** OpenAI's service tiers Bedrock has under the same name. */
const SERVICE_TIERS: ReadonlySet<string> = new Set<ConverseServiceTier>(['default', 'flex', 'priority']);

function serviceTier(value: unknown, p: Pending): void {
  if (typeof value !== 'string') throw badRequest('service_tier must be a string', 'service_tier');
  if (SERVICE_TIERS.has(value)) p.out.serviceTier = { type: value as ConverseServiceTier };
  else if (value !== 'auto') p.removed.push('service_tier');
}

function metadata(value: unknown, p: Pending): void {
  const m = objectAt(value, 'metadata');
  for (const key in m) if (!isEmptyMember(m[key])) p.removed.push(`metadata.${key}`);
}

/**
 * The decision on every member of OpenAI's chat-completions request (the table above): mapped, honoured as it is,
 * recorded as removed, or refused. A member that is not here is recorded as removed too.
 */
export const CONVERSE_MEMBERS: ReadonlyMap<string, MemberHandler<Pending>> = new Map<string, MemberHandler<Pending>>([
  ['model', nothing],
  ['messages', nothing],
  // `maxTokens` is set from both once the members are read; each is checked here.
  ['max_tokens', (v) => positiveIntegerAt(v, 'max_tokens')],
  ['max_completion_tokens', (v) => positiveIntegerAt(v, 'max_completion_tokens')],
  ['temperature', (v, p) => (p.inference.temperature = temperatureAt(v, CONVERSE_MAX_TEMPERATURE, 'bedrock'))],
  ['top_p', (v, p) => (p.inference.topP = numberAt(v, 'top_p'))],
  ['stop', stop],
  ['stream', nothing],
  ['stream_options', nothing],
  // Read before the other members (./tools.ts).
  ['tools', nothing],
  ['tool_choice', nothing],
  ['parallel_tool_calls', nothing],
  ['response_format', responseFormat],
  ['service_tier', serviceTier],
  ...openAIOnlyMembers<Pending>('bedrock'),
  ['moderation', refuse('moderation', 'bedrock cannot run OpenAI moderation on the request and answer; send the request without moderation')],
  ['reasoning_effort', record('reasoning_effort')],
  ['user', record('user')],
  ['safety_identifier', record('safety_identifier')],
  ['metadata', metadata],
  ['seed', record('seed')],
  ['presence_penalty', record('presence_penalty')],
  ['frequency_penalty', record('frequency_penalty')],
  ['logit_bias', record('logit_bias')],
  ['top_logprobs', record('top_logprobs')],
  ['prediction', record('prediction')],
  ['prompt_cache_key', record('prompt_cache_key')],
  ['prompt_cache_retention', record('prompt_cache_retention')],
  ['prompt_cache_options', record('prompt_cache_options')],
  ['verbosity', record('verbosity')],
]);

/**
 * Maps an OpenAI chat-completions body (untrusted JSON, `model` already the provider's model) to a Converse request
 * body per the table above, pushing the paths of the client members it removes to `removed`. `provider` (the config
 * name, `bedrock`) picks the model table's output limit; absent: no clamp.
 * @throws {GatewayError} 400 naming the member when the body is malformed or asks for what Converse cannot honour and
 *   the client relies on (`n` > 1, `logprobs`, audio output, `functions`, `web_search_options`, `moderation`,
 *   `json_object`, a temperature above 1, an http image URL, an audio part, an unknown role, a non-function tool,
 *   tool-call arguments that are not JSON).
 */
export function toConverseRequest(body: ChatCompletionRequest, removed: string[] = [], provider?: string): ConverseRequest {
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object', null);
  if (!Array.isArray(body.messages)) throw badRequest('messages must be an array', 'messages');
  const { system, messages, hasToolBlocks } = converseTurns(body, removed);
  const out: ConverseRequest = { messages };
  if (system.length) out.system = system;
  const toolConfig = converseToolConfig(body, hasToolBlocks, removed);
  const inference: Pending['inference'] = {};
  readMembers(body, CONVERSE_MEMBERS, { out, inference, removed });
  const maxTokens = outputTokensOf(body, removed, outputTokenLimit(provider, body.model));
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (Object.keys(inference).length) out.inferenceConfig = inference;
  if (toolConfig) out.toolConfig = toolConfig;
  return out;
}
