/**
 * Token usage of a log record, read from whichever dialect's usage object the record carries, into
 * one shape the request log stores (all counts in tokens; prompt counts include cached tokens, as
 * OpenAI counts them). Three shapes arrive:
 *
 * - OpenAI chat completions (OpenAI API reference, "The chat completion object" → `usage`):
 *   `prompt_tokens` includes `prompt_tokens_details.cached_tokens`; the gateway's translators put
 *   Anthropic's and Bedrock's cache writes in `prompt_tokens_details.cache_write_tokens`, and the part
 *   of them Anthropic wrote with the 1-hour TTL in `prompt_tokens_details.cache_write_1h_tokens`.
 *   Gemini and xAI count reasoning in `total_tokens` but not in `completion_tokens`
 *   (shared/reasoning-usage.ts): for them the difference is added to the completion, as it is billed.
 * - Anthropic Messages (Anthropic API reference, "Messages" → `usage`; "Streaming Messages"):
 *   `input_tokens` EXCLUDES cached tokens, so the prompt is `input_tokens + cache_read_input_tokens +
 *   cache_creation_input_tokens`; `cache_creation.ephemeral_5m_input_tokens` /
 *   `ephemeral_1h_input_tokens` split the writes by TTL. A stream reports usage twice:
 *   `message_start.message.usage` (input side) and `message_delta.usage` (cumulative counts, older
 *   API versions only `output_tokens`); both are merged here, later members winning.
 * - OpenAI Responses (OpenAI API reference, "The response object" → `usage`): `input_tokens`
 *   includes `input_tokens_details.cached_tokens`; `output_tokens_details.reasoning_tokens`. The
 *   Responses API has no member for cache writes: the gateway's translations carry Anthropic's and
 *   Bedrock's as in chat usage, `input_tokens_details.cache_write_tokens` and `cache_write_1h_tokens`.
 */
import type { LogRecord } from '../shared/record.ts';
import { uncountedReasoningTokens } from '../shared/reasoning-usage.ts';

type Json = Record<string, unknown>;

/** A record's usage in the stored shape. Null members: the usage object did not say. */
export interface RecordUsage {
  /** Every prompt token, cache reads and writes included. */
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  /** Completion tokens spent reasoning (OpenAI `reasoning_tokens`, Anthropic `thinking_tokens`, Gemini's thinking counted only in the total). */
  reasoningTokens: number | null;
  /** Prompt tokens read from the provider's cache. */
  cacheReadTokens: number | null;
  /** Prompt tokens written to the provider's cache, every TTL. */
  cacheWriteTokens: number | null;
  /** The part of {@link cacheWriteTokens} written with Anthropic's 1-hour TTL. */
  cacheWrite1hTokens: number | null;
  promptAudioTokens: number | null;
  completionAudioTokens: number | null;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A token count: a non-negative finite number, else null (a malformed count never rejects a record). */
function tokens(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

const sum = (...parts: Array<number | null>): number | null => (parts.every((p) => p === null) ? null : parts.reduce<number>((a, p) => a + (p ?? 0), 0));

/** Which dialect a usage object is in (by its members; `endpoint` breaks the tie of a bare `input_tokens`). */
function shapeOf(u: Json, endpoint: LogRecord['endpoint']): 'chat' | 'anthropic' | 'responses' {
  if ('prompt_tokens' in u || 'completion_tokens' in u) return 'chat';
  if ('cache_read_input_tokens' in u || 'cache_creation_input_tokens' in u || 'cache_creation' in u) return 'anthropic';
  if ('input_tokens_details' in u || endpoint === 'responses') return 'responses';
  return endpoint === 'chat' || endpoint === 'embeddings' ? 'chat' : 'anthropic';
}

/** The 1-hour part of the cache writes, never more than all of them (a malformed split is not trusted past the total). */
function within(part: number | null, whole: number | null): number | null {
  return part !== null && whole !== null ? Math.min(part, whole) : part;
}

/** Chat usage; `provider` (config name) says whether the total holds reasoning the completion leaves out. */
function fromChat(u: Json, provider: string | null | undefined): RecordUsage {
  const p: Json = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const c: Json = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const prompt = tokens(u.prompt_tokens);
  const hidden = uncountedReasoningTokens(provider, u);
  const reported = tokens(u.completion_tokens);
  const completion = hidden > 0 ? (reported ?? 0) + hidden : reported;
  const write = tokens(p.cache_write_tokens);
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: tokens(u.total_tokens) ?? (prompt !== null ? prompt + (completion ?? 0) : null),
    reasoningTokens: tokens(c.reasoning_tokens) ?? (hidden > 0 ? hidden : null),
    cacheReadTokens: tokens(p.cached_tokens),
    cacheWriteTokens: write,
    cacheWrite1hTokens: within(tokens(p.cache_write_1h_tokens), write),
    promptAudioTokens: tokens(p.audio_tokens),
    completionAudioTokens: tokens(c.audio_tokens),
  };
}

function fromAnthropic(u: Json): RecordUsage {
  const input = tokens(u.input_tokens);
  const read = tokens(u.cache_read_input_tokens);
  const split: Json = isObject(u.cache_creation) ? u.cache_creation : {};
  const write5m = tokens(split.ephemeral_5m_input_tokens);
  const write1h = tokens(split.ephemeral_1h_input_tokens);
  // The total is the authority; the TTL split (newer API versions) only says how it divides.
  const write = tokens(u.cache_creation_input_tokens) ?? sum(write5m, write1h);
  const output = tokens(u.output_tokens);
  const details: Json = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  // Without input_tokens the prompt is unknown, even when cache counts are present.
  const prompt = input === null ? null : input + (read ?? 0) + (write ?? 0);
  return {
    promptTokens: prompt,
    completionTokens: output,
    totalTokens: prompt !== null || output !== null ? (prompt ?? 0) + (output ?? 0) : null,
    reasoningTokens: tokens(details.thinking_tokens) ?? tokens(details.reasoning_tokens),
    cacheReadTokens: read,
    cacheWriteTokens: write,
    cacheWrite1hTokens: within(write1h, write),
    promptAudioTokens: null,
    completionAudioTokens: null,
  };
}

function fromResponses(u: Json): RecordUsage {
  const inDetails: Json = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const outDetails: Json = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  const prompt = tokens(u.input_tokens);
  const completion = tokens(u.output_tokens);
  const write = tokens(inDetails.cache_write_tokens);
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: tokens(u.total_tokens) ?? (prompt !== null ? prompt + (completion ?? 0) : null),
    reasoningTokens: tokens(outDetails.reasoning_tokens),
    cacheReadTokens: tokens(inDetails.cached_tokens),
    cacheWriteTokens: write,
    cacheWrite1hTokens: within(tokens(inDetails.cache_write_1h_tokens), write),
    promptAudioTokens: null,
    completionAudioTokens: null,
  };
}

/**
 * The usage object of a record: the response body's `usage` (an assembled Messages stream keeps
 * `message_start`'s there) overlaid with the record's `usage` (the last usage the stream carried),
 * member by member, `cache_creation` merged too; either alone when the other is missing.
 */
export function mergedUsageObject(record: Pick<LogRecord, 'usage' | 'responseBody'>): Json | null {
  const body = record.responseBody;
  const fromBody = isObject(body) && isObject(body.usage) ? body.usage : null;
  const fromRecord = isObject(record.usage) ? (record.usage as Json) : null;
  if (!fromBody || !fromRecord || fromBody === fromRecord) return fromRecord ?? fromBody;
  const merged: Json = { ...fromBody };
  for (const [k, v] of Object.entries(fromRecord)) if (v !== null && v !== undefined) merged[k] = v;
  if (isObject(fromBody.cache_creation) && isObject(fromRecord.cache_creation)) {
    merged.cache_creation = { ...fromBody.cache_creation, ...fromRecord.cache_creation };
  }
  return merged;
}

/**
 * Reads a record's usage, whichever dialect it is in (see the module comment). The record's
 * `provider` (config name; absent or null: unknown) decides how chat usage counts reasoning.
 * @returns the counts, or null when the record carries no usage object. Never throws.
 */
export function readUsage(record: Pick<LogRecord, 'usage' | 'responseBody' | 'endpoint'> & Partial<Pick<LogRecord, 'provider'>>): RecordUsage | null {
  const u = mergedUsageObject(record);
  if (!u) return null;
  const shape = shapeOf(u, record.endpoint);
  return shape === 'chat' ? fromChat(u, record.provider) : shape === 'anthropic' ? fromAnthropic(u) : fromResponses(u);
}
