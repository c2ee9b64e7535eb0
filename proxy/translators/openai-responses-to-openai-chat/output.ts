/**
 * The pieces of a Responses answer that the JSON response (./response.ts) and the stream (./stream.ts) build alike:
 * ids, usage, status, and the output items.
 *
 * - ids: the response is `resp_<gateway request id without dashes>` (unique per gateway request, and known to the
 *   gateway before the answer, so a response store can key it), its items `<prefix>_<same>_<output index>` with
 *   OpenAI's prefixes (`rs` reasoning, `msg` message, `fc` function call, `ctc` custom tool call); a tool call without
 *   an id (Gemini sends `""`) gets the call id `call_<same>_<tool call index>`.
 * - status: finish reason `length` → `incomplete` with `incomplete_details.reason` `max_output_tokens`;
 *   `content_filter` → `incomplete`, reason `content_filter`; anything else → `completed`. The last output item of an
 *   incomplete response is `incomplete` too (its text or arguments were cut).
 * - usage: see {@link responsesUsage}.
 * - items: `reasoning` `{id, type, summary: [{type: "summary_text", text}]}` (plus `encrypted_content` when it carries
 *   Gemini's thought signatures, ../shared/carried-reasoning.ts); `message` `{id, type, status, content: [{type:
 *   "output_text", annotations: [], logprobs: [], text}] (or a `refusal` part), role: "assistant"}`; `function_call`
 *   `{id, type, status, arguments, call_id, name, namespace?}` with the client's name and namespace
 *   (./tool-names.ts); for a custom tool, `custom_tool_call` `{id, type, status, call_id, name, input, namespace?}`.
 * Sources: https://platform.openai.com/docs/api-reference/responses/object (output items, usage),
 * https://platform.openai.com/docs/api-reference/chat/object.
 */
import { uncountedReasoningTokens } from '../../../shared/reasoning-usage.ts';
import { finiteOrZero, isRecord } from '../shared/values.ts';
import type { ToolOrigin } from '../types.ts';
import type { IncompleteReason } from './echo.ts';

/**
 * Usage as the Responses API reports it (tokens), with the cache writes of providers that report them
 * (Anthropic, Bedrock) in `input_tokens_details`, under the names chat usage carries them with
 * (`prompt_tokens_details.cache_write_tokens`, `cache_write_1h_tokens`): the API has no member for them.
 */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number; cache_write_1h_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * Responses usage (tokens) from chat usage: `input_tokens` = `prompt_tokens`, `cached_tokens` =
 * `prompt_tokens_details.cached_tokens` (or DeepSeek's `prompt_cache_hit_tokens`), `cache_write_tokens` and
 * `cache_write_1h_tokens` as `prompt_tokens_details` reports them (absent when it does not), `output_tokens` =
 * `completion_tokens`, `reasoning_tokens` = `completion_tokens_details.reasoning_tokens`, `total_tokens` = input plus
 * output, as in OpenAI's usage. `provider` (config name) is the one that answered: Gemini and xAI count reasoning in
 * `total_tokens` only (../../../shared/reasoning-usage.ts), so for them that difference is added to `output_tokens`
 * and, when no reasoning count was reported, is the `reasoning_tokens`.
 */
export function responsesUsage(usage: unknown, provider?: string): ResponsesUsage {
  const u = isRecord(usage) ? usage : {};
  const prompt = isRecord(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isRecord(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const input = finiteOrZero(u.prompt_tokens);
  const hidden = uncountedReasoningTokens(provider, u);
  const output = finiteOrZero(u.completion_tokens) + hidden;
  const reasoning = finiteOrZero(completion.reasoning_tokens) || hidden;
  const inputDetails: ResponsesUsage['input_tokens_details'] = { cached_tokens: finiteOrZero(prompt.cached_tokens) || finiteOrZero(u.prompt_cache_hit_tokens) };
  // Without them admin would price the written tokens as plain input (Anthropic charges 1.25x, 2x for 1 hour).
  if (typeof prompt.cache_write_tokens === 'number') inputDetails.cache_write_tokens = finiteOrZero(prompt.cache_write_tokens);
  if (typeof prompt.cache_write_1h_tokens === 'number') inputDetails.cache_write_1h_tokens = finiteOrZero(prompt.cache_write_1h_tokens);
  return {
    input_tokens: input,
    input_tokens_details: inputDetails,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

/** The gateway request id without dashes, the unique part of every id of one response. */
function idPart(requestId: string): string {
  return requestId.replace(/-/g, '');
}

/** The response id of a gateway request: `resp_<request id without dashes>`. */
export function responseIdOf(requestId: string): string {
  return `resp_${idPart(requestId)}`;
}

/** The id of output item `index`: `<prefix>_<request id without dashes>_<index>`. */
export function itemId(prefix: 'rs' | 'msg' | 'fc' | 'ctc', requestId: string, index: number): string {
  return `${prefix}_${idPart(requestId)}_${index}`;
}

/** The call id of tool call `k`: the provider's id, or `call_<request id without dashes>_<k>` when it sent none. */
export function callIdOf(providerId: unknown, requestId: string, k: number): string {
  return typeof providerId === 'string' && providerId !== '' ? providerId : `call_${idPart(requestId)}_${k}`;
}

/** The status of a finished response by its chat finish reason. */
export function finishStatus(finishReason: unknown): { status: 'completed' | 'incomplete'; incomplete: IncompleteReason | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete: 'max_output_tokens' };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete: 'content_filter' };
  return { status: 'completed', incomplete: null };
}

/** A reasoning item; `encrypted` carries Gemini's thought signatures when not ''. */
export function reasoningItem(id: string, summary: string, encrypted: string): Record<string, unknown> {
  const item: Record<string, unknown> = { id, type: 'reasoning', summary: summary === '' ? [] : [{ type: 'summary_text', text: summary }] };
  if (encrypted !== '') item.encrypted_content = encrypted;
  return item;
}

/** An `output_text` content part. */
export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

/** A `refusal` content part. */
export function refusalPart(refusal: string): Record<string, unknown> {
  return { type: 'refusal', refusal };
}

/** An assistant message item with its content parts. */
export function messageItem(id: string, status: string, content: unknown[]): Record<string, unknown> {
  return { id, type: 'message', status, content, role: 'assistant' };
}

/**
 * The free-form input of a custom tool's call from the arguments of the function it was sent as: `input` of the
 * arguments object, or the arguments as they are when they are not such an object (the model wrote the input bare).
 */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isRecord(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // not JSON: the model wrote the input itself
  }
  return args;
}

/**
 * A tool call's output item: `function_call` with the arguments string (`{}` when the provider sent none), or
 * `custom_tool_call` with the input, named as the client knows the tool. `input`/`arguments` are '' while streaming.
 */
export function toolCallItem(id: string, status: string, callId: string, origin: ToolOrigin, args: string): Record<string, unknown> {
  const item: Record<string, unknown> = origin.custom
    ? { id, type: 'custom_tool_call', status, call_id: callId, name: origin.name, input: args }
    : { id, type: 'function_call', status, arguments: args, call_id: callId, name: origin.name };
  if (origin.namespace !== undefined) item.namespace = origin.namespace;
  return item;
}
