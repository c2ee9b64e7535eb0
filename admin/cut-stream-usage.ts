/**
 * Token counts of a streamed answer the client left before its end (the proxy logs it 499, `clientClosed`): the
 * gateway then stopped the provider, whose final usage (OpenAI's last chunk, Anthropic's `message_delta`, the
 * Responses final event) never came, though the provider read the prompt and generated part of the answer, and
 * bills both. Such a row's tokens are marked estimated:
 * - the prompt is the provider's count when it reported one before the cut (Anthropic's `message_start` has the
 *   input side; a translated chat stream's proxy hands it over, proxy/observers/log-record.ts), else the gateway's
 *   estimate of the request. A count of 0 is no report: the Messages stream translated from a chat provider opens
 *   with `usage` 0 until the provider's comes (proxy/translators/anthropic-messages-to-openai-chat/response.ts
 *   `zeroUsage`), and no prompt is 0 tokens;
 * - the completion is the estimate of what the client was sent (texts, reasoning, tool calls' names and
 *   arguments), or the provider's count when that is more (`message_start`'s `output_tokens: 1` is an answer just
 *   begun). It is a floor: the provider may have generated more than reached the client before it was stopped, and
 *   a text past the proxy's capture cap (`bodyTruncated`) was not kept.
 * Sources of the body shapes: OpenAI "The chat completion object", Anthropic "Messages" (content blocks),
 * OpenAI "The response object" (`output` items), as the proxy folds a stream into them.
 */
import type { LogRecord } from '../shared/record.ts';
import { countTextTokens } from './tokens.ts';
import type { RecordUsage } from './usage.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Final statuses of a Responses `response` (its final event came, with the usage). */
const RESPONSE_ENDED: ReadonlySet<unknown> = new Set(['completed', 'incomplete', 'failed']);

/**
 * True when the assembled body says the provider's final usage came: a Messages `stop_reason` (it comes with
 * `message_delta`'s usage), a Responses final status, or a chat finish reason together with a usage (OpenAI's
 * usage chunk follows the finish chunk).
 */
function finalUsageCame(r: LogRecord, body: Json): boolean {
  if (r.endpoint === 'messages') return typeof body.stop_reason === 'string';
  if (r.endpoint === 'responses') return RESPONSE_ENDED.has(body.status);
  const choice = Array.isArray(body.choices) ? (body.choices[0] as Json | undefined) : undefined;
  return typeof choice?.finish_reason === 'string' && (r.usage !== null || isObject(body.usage));
}

/**
 * True for a record of a streamed answer the client left before the provider's final usage came: streamed, the
 * client closed the connection, some of the answer was recorded (the provider had begun), the body does not say it
 * ended, and no provider was spared it (a cache hit replays an answer whose whole usage it has). Never throws.
 */
export function isCutStream(r: LogRecord): boolean {
  return r.streamed && r.clientClosed && !r.cacheReferenceId && isObject(r.responseBody) && !finalUsageCame(r, r.responseBody);
}

/** The tokens of one chat message's answer: content, refusal, reasoning, tool calls' names and arguments. */
function chatMessageTokens(m: Json): number {
  let n = countTextTokens(str(m.content)) + countTextTokens(str(m.refusal)) + countTextTokens(str(m.reasoning_content) || str(m.reasoning));
  if (Array.isArray(m.tool_calls)) for (const tc of m.tool_calls) if (isObject(tc) && isObject(tc.function)) n += countTextTokens(str(tc.function.name)) + countTextTokens(str(tc.function.arguments));
  return n;
}

/** The tokens of a Messages content block: text, thinking, a tool call's name and input (a cut input is its partial JSON text). */
function blockTokens(b: Json): number {
  if (b.type === 'text') return countTextTokens(str(b.text));
  if (b.type === 'thinking') return countTextTokens(str(b.thinking));
  if (b.type !== 'tool_use' && b.type !== 'server_tool_use') return 0;
  const input = typeof b.input === 'string' ? b.input : b.input === undefined ? '' : JSON.stringify(b.input);
  return countTextTokens(str(b.name)) + countTextTokens(input === '{}' ? '' : input);
}

/** The tokens of a Responses output item: message texts and refusals, reasoning summaries, a function call's name and arguments. */
function itemTokens(item: Json): number {
  let n = countTextTokens(str(item.name)) + countTextTokens(str(item.arguments)) + countTextTokens(str(item.input));
  for (const list of [item.content, item.summary]) {
    if (Array.isArray(list)) for (const p of list) if (isObject(p)) n += countTextTokens(str(p.text)) + countTextTokens(str(p.refusal));
  }
  return n;
}

/**
 * The estimated tokens of the answer a cut stream's client was sent, from its assembled body in the client's
 * dialect (chat `choices`, Messages `content`, Responses `output`); 0 for any other shape. Never throws.
 */
export function answerTokensSoFar(body: unknown): number {
  if (!isObject(body)) return 0;
  let n = 0;
  if (Array.isArray(body.choices)) for (const c of body.choices) if (isObject(c) && isObject(c.message)) n += chatMessageTokens(c.message);
  if (Array.isArray(body.content)) for (const b of body.content) if (isObject(b)) n += blockTokens(b);
  if (Array.isArray(body.output)) for (const item of body.output) if (isObject(item)) n += itemTokens(item);
  return n;
}

/**
 * The counts of a cut stream (see the module comment).
 * @param reported the usage the provider reported before the cut, as read from the record (admin/usage.ts), or null.
 * @param estimatedPrompt the gateway's estimate of the request's prompt tokens, or null when it has none.
 * @param answerTokens {@link answerTokensSoFar} of the record's body.
 * @returns the usage kept for the cache and reasoning columns (the provider's, with the counts here; null when the
 *   prompt is the estimate, since the provider's cache counts then belong to no reported prompt), and the counts.
 */
export function cutStreamCounts(reported: RecordUsage | null, estimatedPrompt: number | null, answerTokens: number): { usage: RecordUsage | null; prompt: number | null; completion: number } {
  const completion = Math.max(reported?.completionTokens ?? 0, answerTokens);
  const providerPrompt = reported?.promptTokens ?? 0;
  if (reported === null || providerPrompt <= 0) return { usage: null, prompt: estimatedPrompt, completion };
  return { usage: { ...reported, completionTokens: completion, totalTokens: providerPrompt + completion }, prompt: providerPrompt, completion };
}
