/**
 * A chat-completions answer (`chat.completion`) as a Messages `message`, and the pieces the stream translator
 * shares: stop reasons, usage, ids.
 *
 * - `id`: `msg_` + the provider's completion id (so a log line can be matched to the provider's), or `msg_` + the
 *   gateway request id without dashes when the provider sent none;
 * - `model`: the provider's (`model` of the completion), else the model the request named;
 * - content, in this order: one `thinking` block from `reasoning_content` (DeepSeek, xAI, …) or `reasoning` (Groq,
 *   OpenRouter, Ollama) with `signature` `""` (the Anthropic SDK reads the member as a plain string), or the
 *   carried Gemini thought signatures (./carried-reasoning.ts; a thinking block with empty text when Gemini sent
 *   signatures but no reasoning); one `text` block (the `content`, or the `refusal`); one `tool_use` block per tool
 *   call, `input` the parsed arguments. Arguments that are not a JSON object become `{}` and their path is recorded
 *   as removed (`response.choices[0].message.tool_calls[k].function.arguments`): the client's tool then reports
 *   the missing input to the model, which can call it again. A tool call without an id (Gemini sends `""`) gets
 *   `toolu_<request id>_<k>`.
 * - `stop_reason`: stop → `end_turn` (`stop_sequence` when the provider says which of the request's
 *   `stop_sequences` matched: vLLM's `stop_reason`, SGLang's `matched_stop`), length → `max_tokens`, tool_calls
 *   (and function_call) → `tool_use`, content_filter → `refusal`; any other finish with tool calls → `tool_use`
 *   (Gemini and Ollama answer `stop` there; a cut-off tool call stays `max_tokens`, as Anthropic reports it); a
 *   refusal → `refusal`; anything else → `end_turn`.
 * - `usage`: see {@link messagesUsage}.
 * Sources: https://docs.anthropic.com/en/api/messages (the message object),
 * https://platform.openai.com/docs/api-reference/chat/object (the chat completion object).
 */
import { uncountedReasoningTokens } from '../../../shared/reasoning-usage.ts';
import { carryMessageSignature, carryToolCallSignature, encodeCarried, geminiThoughtSignature, isEmptyCarried, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { partsText, reasoningText } from '../shared/openai-chat-answer.ts';
import { finiteOrZero, isRecord } from '../shared/values.ts';
import type { TranslatorCall } from '../types.ts';
import type { AnthropicBlock, AnthropicMessage, AnthropicUsage } from '../wire/anthropic-messages.ts';

/**
 * Messages usage (tokens) from chat usage: `cache_read_input_tokens` = `prompt_tokens_details.cached_tokens` (or
 * DeepSeek's `prompt_cache_hit_tokens`), `cache_creation_input_tokens` = `prompt_tokens_details.cache_write_tokens`
 * (providers that report cache writes) else 0, `input_tokens` = `prompt_tokens` minus both (Anthropic's input
 * excludes cached tokens), `output_tokens` = `completion_tokens` (reasoning included, as Anthropic counts thinking),
 * and `output_tokens_details.thinking_tokens` = `completion_tokens_details.reasoning_tokens` when reported.
 * `provider` (config name) is the one that answered: Gemini and xAI count reasoning in `total_tokens` only
 * (../../../shared/reasoning-usage.ts), so for them that difference is added to `output_tokens` and, when no
 * reasoning count came, is the `thinking_tokens`.
 */
export function messagesUsage(usage: unknown, provider?: string): AnthropicUsage {
  const u = isRecord(usage) ? usage : {};
  const details = isRecord(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cacheRead = finiteOrZero(details.cached_tokens) || finiteOrZero(u.prompt_cache_hit_tokens);
  const cacheWrite = finiteOrZero(details.cache_write_tokens);
  const hidden = uncountedReasoningTokens(provider, u);
  const result: AnthropicUsage = {
    input_tokens: Math.max(0, finiteOrZero(u.prompt_tokens) - cacheRead - cacheWrite),
    output_tokens: finiteOrZero(u.completion_tokens) + hidden,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
  const completion = isRecord(u.completion_tokens_details) ? u.completion_tokens_details : {};
  if (typeof completion.reasoning_tokens === 'number') result.output_tokens_details = { thinking_tokens: completion.reasoning_tokens };
  else if (hidden > 0) result.output_tokens_details = { thinking_tokens: hidden };
  return result;
}

/** Messages usage before the provider reported any: every count 0. */
export function zeroUsage(): AnthropicUsage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** The stop reason and matched stop sequence of a finished choice. */
export interface StopInfo {
  stop_reason: string;
  stop_sequence: string | null;
}

/**
 * Anthropic's stop reason of a chat `finish_reason`, given whether tool calls were made and a refusal given, and the
 * request's `stop_sequences` to recognise the provider's matched one (`choice.stop_reason` or `choice.matched_stop`).
 */
export function stopInfo(finishReason: unknown, choice: Record<string, unknown>, hasToolCalls: boolean, refused: boolean, stopSequences: unknown): StopInfo {
  if (finishReason === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finishReason === 'content_filter') return { stop_reason: 'refusal', stop_sequence: null };
  if (hasToolCalls) return { stop_reason: 'tool_use', stop_sequence: null };
  switch (finishReason) {
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    default: {
      if (refused) return { stop_reason: 'refusal', stop_sequence: null };
      const matched = typeof choice.stop_reason === 'string' ? choice.stop_reason : choice.matched_stop;
      if (typeof matched === 'string' && Array.isArray(stopSequences) && stopSequences.includes(matched)) {
        return { stop_reason: 'stop_sequence', stop_sequence: matched };
      }
      return { stop_reason: 'end_turn', stop_sequence: null };
    }
  }
}

/** The Messages id of a completion id: `msg_<id>`, or `msg_<request id without dashes>` when the provider sent none. */
export function messageId(providerId: unknown, requestId: string): string {
  return typeof providerId === 'string' && providerId !== '' ? `msg_${providerId}` : `msg_${requestId.replace(/-/g, '')}`;
}

/** The `tool_use` id of tool call `k`: the provider's id, or `toolu_<request id without dashes>_<k>` when it sent none. */
export function toolUseId(providerId: unknown, requestId: string, k: number): string {
  return typeof providerId === 'string' && providerId !== '' ? providerId : `toolu_${requestId.replace(/-/g, '')}_${k}`;
}

/** The parsed arguments object of a tool call, or null when they are not a JSON object ('' and absent are `{}`). */
function parseArguments(args: unknown): Record<string, unknown> | null {
  if (args === undefined || args === null || (typeof args === 'string' && args.trim() === '')) return {};
  if (typeof args !== 'string') return isRecord(args) ? args : null;
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function toolUseBlocks(toolCalls: unknown, call: TranslatorCall, carried: CarriedReasoning, removed: (path: string) => void): AnthropicBlock[] {
  if (!Array.isArray(toolCalls)) return [];
  const blocks: AnthropicBlock[] = [];
  toolCalls.forEach((raw, k) => {
    if (!isRecord(raw)) return removed(`response.choices[0].message.tool_calls[${k}]`);
    const fn = isRecord(raw.function) ? raw.function : {};
    const id = toolUseId(raw.id, call.requestId, k);
    const input = parseArguments(fn.arguments);
    if (input === null) removed(`response.choices[0].message.tool_calls[${k}].function.arguments`);
    const sig = geminiThoughtSignature(raw);
    if (sig) carryToolCallSignature(carried, id, sig);
    blocks.push({ type: 'tool_use', id, name: typeof fn.name === 'string' ? fn.name : '', input: input ?? {} });
  });
  return blocks;
}

/**
 * Maps a `chat.completion` (already checked to be an object with a `choices` array) to a Messages `message`, per
 * the rules above. Members it had to drop are pushed to `call.removed` when present.
 */
export function toMessage(completion: Record<string, unknown>, call: TranslatorCall): AnthropicMessage {
  const choice = isRecord(completion.choices && (completion.choices as unknown[])[0]) ? ((completion.choices as unknown[])[0] as Record<string, unknown>) : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const removed = (path: string): void => void call.removed?.push(path);
  let reasoning = reasoningText(message);
  let text = typeof message.content === 'string' ? message.content : '';
  if (Array.isArray(message.content)) {
    const parts = partsText(message.content, (k) => removed(`response.choices[0].message.content[${k}]`));
    text = parts.text;
    reasoning += parts.reasoning;
  }
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : '';
  const carried: CarriedReasoning = {};
  const messageSig = geminiThoughtSignature(message);
  if (messageSig) carryMessageSignature(carried, messageSig);
  const tools = toolUseBlocks(message.tool_calls, call, carried, removed);
  const content: AnthropicBlock[] = [];
  if (reasoning !== '' || !isEmptyCarried(carried)) content.push({ type: 'thinking', thinking: reasoning, signature: encodeCarried(carried) });
  if (text !== '' || refusal !== '') content.push({ type: 'text', text: text !== '' ? text : refusal });
  content.push(...tools);
  const body = call.body as unknown as Record<string, unknown>;
  const stop = stopInfo(choice.finish_reason, choice, tools.length > 0, refusal !== '', body.stop_sequences);
  return {
    id: messageId(completion.id, call.requestId),
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' && completion.model !== '' ? completion.model : call.body.model,
    content,
    stop_reason: stop.stop_reason,
    stop_sequence: stop.stop_sequence,
    usage: messagesUsage(completion.usage, call.provider),
  };
}
