/**
 * Reading an OpenAI chat-completions request body for translators into other wire formats (chat → Anthropic
 * Messages, chat → Bedrock Converse), whose tables say what becomes of every top-level member (./request-members.ts
 * `readMembers`): the checks of the members they map (assistant tool calls, stop sequences, the output-token cap,
 * temperature), and the members only OpenAI can honour, decided alike for every other provider ({@link openAIOnlyMembers}).
 * Source: OpenAI API reference, "Create chat completion" (https://platform.openai.com/docs/api-reference/chat/create).
 */
import type { ChatCompletionRequest, ChatMessage } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { recordUnmapped, refuse, unsupported, type MemberHandler, type MemberState } from './request-members.ts';
import { isRecord } from './values.ts';

/**
 * The handlers of the members no provider but OpenAI can honour, the same for every translator from chat:
 * - `n` above 1, `logprobs: true`, audio output (`audio`, `modalities` with `audio`), the deprecated `functions` and
 *   `function_call`, `web_search_options`: refused (400 naming the member), since the client reads what would not
 *   come back (several choices, log probabilities, sound, a `function_call`, an answer from the web); `n: 1`,
 *   `logprobs: false` and `modalities: ["text"]` are honoured;
 * - `store: true`: recorded as removed (no other provider keeps a completion for OpenAI's distillation and evals);
 *   `false` is honoured.
 * `provider` names the provider in the refusals' messages (`anthropic`, `bedrock`).
 */
export function openAIOnlyMembers<P extends MemberState>(provider: string): Array<[string, MemberHandler<P>]> {
  return [
    ['n', (v) => typeof v === 'number' && v > 1 && unsupported('n', `${provider} does not support n > 1`)],
    ['logprobs', (v) => v === true && unsupported('logprobs', `${provider} returns no token log probabilities; send the request without logprobs`)],
    ['audio', refuse('audio', `${provider} answers in text only; send the request without audio`)],
    ['modalities', (v) => Array.isArray(v) && v.includes('audio') && unsupported('modalities', `${provider} answers in text only; ask for ["text"]`)],
    ['functions', refuse('functions', `the deprecated functions are not translated to ${provider}; send tools`)],
    ['function_call', refuse('function_call', `the deprecated function_call is not translated to ${provider}; send tool_choice`)],
    ['web_search_options', refuse('web_search_options', `${provider} would answer without searching the web; send the request without web_search_options`)],
    ['store', (v, p) => v !== false && p.removed.push('store')],
  ];
}

/**
 * The client's output-token cap (tokens): `max_completion_tokens`, else `max_tokens` (each checked as a positive
 * integer by the caller's handlers), clamped to `limit` (the model table's output limit; undefined: none); a
 * `max_tokens` beside a different `max_completion_tokens` is pushed to `removed`. Undefined when neither is set.
 */
export function outputTokensOf(body: ChatCompletionRequest, removed: string[], limit: number | undefined): number | undefined {
  const completion = body.max_completion_tokens ?? undefined;
  const legacy = body.max_tokens ?? undefined;
  if (completion !== undefined && legacy !== undefined && completion !== legacy) removed.push('max_tokens');
  const asked = completion ?? legacy;
  return asked !== undefined && limit !== undefined && asked > limit ? limit : asked;
}

/**
 * OpenAI's `temperature` (0 to 2) for a provider that takes 0 to `max`: as it is when within, else a 400 naming it
 * (rescaling would change what the client asked for).
 * @throws {GatewayError} 400 naming `temperature` when it is not a number or outside 0 to `max`.
 */
export function temperatureAt(value: unknown, max: number, provider: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest('temperature must be a number', 'temperature');
  if (value < 0 || value > max) {
    throw badRequest(`temperature must be between 0 and ${max} for ${provider} (OpenAI's range is 0 to 2 and is not rescaled), got ${value}`, 'temperature');
  }
  return value;
}

/**
 * Parses an assistant tool call's `arguments` JSON string into an object (an empty string is `{}`).
 * @throws {GatewayError} 400 naming `param` when the text is not JSON.
 */
function parseToolArguments(text: string | undefined, param: string): unknown {
  if (text === undefined || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`${param} is not valid JSON`, param);
  }
}

/** An assistant tool call as the other wire formats take it: its id, the function's name, its arguments parsed. */
export interface ToolCallRead {
  id: string;
  name: string;
  input: unknown;
}

const CALL_MEMBERS = new Set(['id', 'type', 'function']);
const CALL_FUNCTION_MEMBERS = new Set(['name', 'arguments']);

/**
 * The tool calls of an assistant message (`message` at `param`, e.g. `messages[3]`), checked and read; the members of
 * a call beyond `id`, `type` and `function: {name, arguments}` (`index`, …) are pushed to `removed`
 * (`messages[3].tool_calls[0].index`).
 * @throws {GatewayError} 400 naming `<param>.tool_calls[j]` for a call without a function name, or its
 *   `.function.arguments` when they are not JSON.
 */
export function toolCallsOf(message: ChatMessage, param: string, removed: string[]): ToolCallRead[] {
  const calls = message.tool_calls ?? [];
  const out: ToolCallRead[] = [];
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    const p = `${param}.tool_calls[${j}]`;
    if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== 'string') {
      throw badRequest(`${p} must be {"id","type":"function","function":{"name","arguments"}}`, p);
    }
    recordUnmapped(call, CALL_MEMBERS, p, removed);
    recordUnmapped(call.function, CALL_FUNCTION_MEMBERS, `${p}.function`, removed);
    out.push({ id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, `${p}.function.arguments`) });
  }
  return out;
}

/**
 * OpenAI's `stop` (a string or an array of strings) as a list without empty strings; undefined when it holds none.
 * @throws {GatewayError} 400 naming `stop` when it is neither.
 */
export function stopSequencesAt(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return stop === '' ? undefined : [stop];
  if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) throw badRequest('stop must be a string or an array of strings', 'stop');
  const list = stop.filter((s) => s !== '');
  return list.length ? list : undefined;
}
