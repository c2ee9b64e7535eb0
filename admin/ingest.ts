/**
 * Log ingestion: validated {@link LogRecord}s from proxies become `request_log` rows in one
 * multi-row insert per batch. The request id is the primary key and conflicts are ignored, so a
 * batch a proxy re-sends (after a lost ack) never stores a record twice. Usage is read in the
 * record's dialect (admin/usage.ts: chat completions, Anthropic Messages, Responses). Costs (USD)
 * come from the model table (with the operator's `models:` overrides), Anthropic's 5-minute and
 * 1-hour cache writes priced apart; a cost that cannot be computed is null with `cost_note` saying
 * why. A cache hit (`cacheReferenceId`) costs 0 and keeps the cost it saved (`cost_saved_usd`).
 * When the provider sent no usage, tokens are estimated with js-tiktoken here, off the proxy's
 * request path, and the row says so (`tokens_source = 'estimated'`).
 */
import { costOf } from '../shared/models.ts';
import { PROVIDERS, isProviderName } from '../shared/providers.ts';
import { LogRecordSchema, type LogRecord } from '../shared/record.ts';
import { validateValue } from '../shared/validate.ts';
import { countTextTokens } from './tokens.ts';
import { isUuid } from './validation.ts';
import type { Sql } from './db.ts';
import { readUsage, type RecordUsage } from './usage.ts';

type Json = Record<string, unknown>;

/** The text of a message's content (string, or the concatenated text parts). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof (p as Json).text === 'string' ? ((p as Json).text as string) : '')).join('\n');
  return '';
}

/** The prompt text `request.prompt` filters match: the last user message, or the body's `prompt` member. */
export function promptText(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Json;
  if (Array.isArray(b.messages)) {
    for (let i = b.messages.length - 1; i >= 0; i--) {
      const m = b.messages[i] as Json | null;
      if (m && m.role === 'user') return textOf(m.content);
    }
  }
  if (typeof b.prompt === 'string') return b.prompt;
  if (typeof b.input === 'string') return b.input;
  return null;
}

/** The text of a Messages `system` (a string, or text blocks) or null. */
function systemText(system: unknown): string {
  return typeof system === 'string' || Array.isArray(system) ? textOf(system) : '';
}

/**
 * Estimated usage when the provider sent none: message texts in (a Messages `system` too), response
 * texts out (chat `choices`, Messages `content` text and `tool_use` input), in tokens.
 */
function estimateUsage(record: LogRecord): { prompt: number; completion: number } | null {
  const req = record.requestBody as Json | null;
  if (!req || typeof req !== 'object') return null;
  let prompt = 0;
  if (Array.isArray(req.messages)) {
    // OpenAI's chat format: 3 tokens per message, 1 per name, 3 priming the reply.
    for (const m of req.messages as Json[]) prompt += 3 + countTextTokens(textOf(m?.content)) + (m?.name ? 1 : 0);
    prompt += 3;
    const system = systemText(req.system);
    if (system) prompt += 3 + countTextTokens(system);
  } else if (typeof req.input === 'string' || Array.isArray(req.input)) {
    prompt = countTextTokens(Array.isArray(req.input) ? req.input.join('\n') : (req.input as string));
  } else {
    return null;
  }
  let completion = 0;
  const res = record.responseBody as Json | null;
  if (res && Array.isArray(res.choices)) {
    for (const c of res.choices as Json[]) {
      const msg = (c?.message ?? {}) as Json;
      completion += countTextTokens(textOf(msg.content));
      if (Array.isArray(msg.tool_calls)) for (const tc of msg.tool_calls as Json[]) completion += countTextTokens(JSON.stringify(tc.function ?? ''));
    }
  } else if (res && Array.isArray(res.content)) {
    completion += countTextTokens(textOf(res.content));
    for (const b of res.content as Json[]) if (b?.type === 'tool_use') completion += countTextTokens(JSON.stringify(b.input ?? ''));
  }
  return { prompt, completion };
}

/**
 * A `\u0000` escape or a lone surrogate escape (`\ud800`..`\udfff`) in JSON.stringify output, not
 * preceded by an escaping backslash. JSON.stringify writes paired surrogates as characters and
 * escapes only lone ones, so every surrogate escape it wrote is a lone one.
 */
const UNSAFE_ESCAPE_RE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;
const MAYBE_UNSAFE_RE = /\\u(?:0000|d[89a-f])/;

/**
 * jsonb rejects U+0000 and lone surrogates (both valid in JSON and in JS strings); replace them
 * (rarely present) with U+FFFD, in keys and values alike.
 */
function jsonbSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const text = JSON.stringify(value);
  if (!MAYBE_UNSAFE_RE.test(text)) return value;
  return JSON.parse(text.replace(UNSAFE_ESCAPE_RE, '$1\\ufffd'));
}

/** A text column's value: PostgreSQL text cannot hold U+0000 (lone surrogates become U+FFFD in UTF-8 anyway). */
function textSafe<T extends string | null | undefined>(value: T): T {
  return (typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value) as T;
}

/**
 * The model as the record shows and filters match it: without the `<provider>/` prefix the client
 * wrote on `/ai` and `/v1` (and may write on a router), since the provider is a field of its own.
 * Only a known provider's name is a prefix, as for the proxy: `meta-llama/Llama-3` stays whole, and
 * `openrouter/openai/gpt-4o` loses only `openrouter/`. Migration 00003 did the same to older rows.
 * @returns the model without the prefix (null for null); never throws.
 */
export function modelWithoutProvider(model: string | null): string | null {
  if (model === null) return null;
  const slash = model.indexOf('/');
  return slash > 0 && isProviderName(model.slice(0, slash)) ? model.slice(slash + 1) : model;
}

/**
 * The stored provider of a request the gateway answered before choosing a provider: the REST
 * shape's `Provider` value for the gateway itself (shown as is, since it is no config name).
 */
const GATEWAY_PROVIDER = 'SVC';

/** `cost_note` values: why a row's cost is null although it has token counts. */
export const COST_NOTES = {
  'unknown-model': 'unknown model: not in the model table, so no price',
  'no-price': 'unknown model price: the model table has no price for this model',
  inconsistent: 'usage inconsistent: cached tokens exceed the prompt tokens',
  incomplete: 'usage incomplete: the provider reported no prompt token count',
} as const;

/** Token counts and their source: the provider's usage, or an estimate when it sent none on a 2xx. */
function tokenCounts(r: LogRecord): { usage: RecordUsage | null; prompt: number | null; completion: number | null; source: string | null } {
  const usage = readUsage(r);
  if (usage) return { usage, prompt: usage.promptTokens, completion: usage.completionTokens, source: 'provider' };
  if (r.status >= 200 && r.status < 300) {
    const est = estimateUsage(r);
    if (est) return { usage: null, prompt: est.prompt, completion: r.endpoint === 'embeddings' ? 0 : est.completion, source: 'estimated' };
  }
  return { usage: null, prompt: null, completion: null, source: null };
}

/**
 * The cost of a row in USD and, when it is null although the prompt was counted, why
 * ({@link COST_NOTES}). Never throws: usage whose cached counts exceed the prompt is noted, not rejected.
 */
function rowCost(provider: string, model: string | null, t: ReturnType<typeof tokenCounts>): { usd: number | null; note: string | null } {
  if (t.prompt === null) return { usd: null, note: t.source === 'provider' ? COST_NOTES.incomplete : null };
  if (!model) return { usd: null, note: null };
  try {
    const cost = costOf(provider, model, {
      promptTokens: t.prompt,
      completionTokens: t.completion ?? 0,
      cachedReadTokens: t.usage?.cacheReadTokens ?? 0,
      cacheWriteTokens: t.usage?.cacheWriteTokens ?? 0,
      cacheWrite1hTokens: t.usage?.cacheWrite1hTokens ?? 0,
    });
    return { usd: cost.usd, note: cost.missing ? COST_NOTES[cost.missing] : null };
  } catch (err) {
    if (err instanceof RangeError) return { usd: null, note: COST_NOTES.inconsistent };
    throw err;
  }
}

/** The session id as stored: at most 256 characters, an empty one as none. */
function sessionOf(r: LogRecord): string | null {
  const id = r.sessionId?.trim();
  return id ? id.slice(0, 256) : null;
}

/** Turns one record into a `request_log` row (column → value). */
export function recordToRow(r: LogRecord, sql: Sql): Record<string, unknown> {
  const t = tokenCounts(r);
  const usage = t.usage;
  const total = usage?.totalTokens ?? (t.prompt !== null ? t.prompt + (t.completion ?? 0) : null);
  const res = r.responseBody as Json | null;
  const responseModel = res && typeof res.model === 'string' ? res.model : null;
  const model = r.modelSent ?? responseModel;
  const provider = r.provider ?? GATEWAY_PROVIDER;
  const cost = rowCost(provider, model, t);
  // A cache hit called no provider: it cost nothing, and saved what its answer's tokens would have cost.
  // The column is a uuid (request ids are): anything else would refuse the whole row, so it is dropped.
  const hitOf = r.cacheReferenceId && isUuid(r.cacheReferenceId) ? r.cacheReferenceId : null;
  const extra: Json = { attempts: r.attempts, endpoint: r.endpoint, clientClosed: r.clientClosed, bodyTruncated: r.bodyTruncated, modelSent: r.modelSent };
  if (r.tokenLimit) extra.tokenLimit = r.tokenLimit;
  if (r.removedMembers && r.removedMembers.length > 0) extra.removedMembers = r.removedMembers.slice(0, 1000).map((m) => m.slice(0, 512));
  if (r.wireFormat) extra.wireFormat = r.wireFormat.slice(0, 100);
  if (usage?.cacheWrite1hTokens) extra.cacheWrite1hTokens = usage.cacheWrite1hTokens;
  return {
    id: r.requestId,
    organization_id: r.organizationId,
    api_key_id: r.apiKeyId,
    created_at: new Date(r.createdAt),
    response_created_at: r.responseCreatedAt !== null ? new Date(r.responseCreatedAt) : null,
    path: textSafe(r.path),
    target_url: textSafe(r.targetUrl),
    provider: textSafe(provider),
    request_model: textSafe(modelWithoutProvider(r.requestModel)),
    response_model: textSafe(responseModel ?? r.modelSent),
    model_override: textSafe(r.modelOverride),
    user_id: textSafe(r.userId),
    properties: sql.json(jsonbSafe(r.properties) as never),
    status: r.status,
    streamed: r.streamed,
    delay_ms: r.delayMs,
    time_to_first_token: r.timeToFirstTokenMs,
    prompt_tokens: t.prompt,
    completion_tokens: t.completion,
    total_tokens: total,
    reasoning_tokens: usage?.reasoningTokens ?? null,
    prompt_cache_read_tokens: usage?.cacheReadTokens ?? null,
    prompt_cache_write_tokens: usage?.cacheWriteTokens ?? null,
    prompt_audio_tokens: usage?.promptAudioTokens ?? null,
    completion_audio_tokens: usage?.completionAudioTokens ?? null,
    tokens_source: t.source,
    cost_usd: hitOf !== null ? 0 : cost.usd,
    cost_note: cost.note,
    cache_enabled: r.cacheEnabled === true,
    cache_reference_id: hitOf,
    cost_saved_usd: hitOf !== null ? cost.usd : null,
    session_id: textSafe(sessionOf(r)),
    session_path: textSafe(r.sessionPath?.slice(0, 1024) || null),
    session_name: textSafe(r.sessionName?.slice(0, 256) || null),
    prompt_text: textSafe(promptText(r.requestBody)),
    prompt_id: textSafe(r.prompt?.promptId ?? null),
    prompt_version_id: textSafe(r.prompt?.versionId ?? null),
    prompt_version: textSafe(r.prompt?.version ?? null),
    prompt_environment: textSafe(r.prompt?.environment ?? null),
    prompt_inputs: r.prompt ? sql.json(jsonbSafe(r.prompt.inputs) as never) : null,
    request_body: sql.json(jsonbSafe(r.requestBody) as never),
    response_body: sql.json(jsonbSafe(r.responseBody) as never),
    error: r.error !== null ? sql.json(jsonbSafe(r.error) as never) : null,
    extra: sql.json(jsonbSafe(extra) as never),
  };
}

/** Result of ingesting one batch: rows inserted now, duplicates ignored, records rejected as invalid. */
export interface IngestResult {
  stored: number;
  duplicates: number;
  rejected: number;
  errors: string[];
}

const BATCH_ROWS = 500;

/**
 * True for a PostgreSQL error caused by the data of a row (SQLSTATE class 22 data exception, 23
 * integrity violation, 54 program limit exceeded such as a too-deep jsonb): retrying the same row
 * can never succeed, unlike a lost connection or a server shutting down.
 */
function isRowDataError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

/**
 * Validates and stores a batch of records for `organizationId` (one multi-row insert per
 * {@link BATCH_ROWS} rows); records of
 * another organization or of an invalid shape are rejected (counted, not stored). When the batch
 * fails because of one row's data (see {@link isRowDataError}), the rows are stored one by one and
 * the rows PostgreSQL refuses are rejected, so one bad record never blocks the others.
 * Resolves only after every stored row committed, so the caller may acknowledge the batch.
 * @throws the database error when the insert fails for another reason (the caller must not acknowledge).
 */
export async function ingestRecords(sql: Sql, organizationId: string, records: unknown[]): Promise<IngestResult> {
  const rows: Record<string, unknown>[] = [];
  const errors: string[] = [];
  let rejected = 0;
  for (const raw of records) {
    const [error, rec] = validateValue(raw, LogRecordSchema);
    if (error) {
      rejected++;
      if (errors.length < 5) errors.push(`${error.path.join('.') || '(record)'}: ${error.message}`);
      continue;
    }
    if (rec.organizationId !== organizationId || (rec.provider !== null && !isProviderName(rec.provider))) {
      rejected++;
      if (errors.length < 5) errors.push(`record ${rec.requestId}: organization or provider not allowed on this link`);
      continue;
    }
    try {
      rows.push(recordToRow(rec, sql));
    } catch (err) {
      rejected++;
      if (errors.length < 5) errors.push(`record ${rec.requestId}: ${(err as Error).message}`);
    }
  }
  let stored = 0;
  let refused = 0;
  // One statement per chunk, each atomic and committed when it resolves. Deliberately not
  // sql.begin(): postgres.js 3.4.9 sends ROLLBACK/COMMIT on a transaction's connection even after
  // the server closed it, which throws from a setImmediate and kills the process
  // (porsager/postgres#1154, #1208). A chunk stored before a later one failed is harmless: the
  // proxy re-sends the batch and `on conflict do nothing` skips what is already stored.
  for (let i = 0; i < rows.length; i += BATCH_ROWS) {
    const chunk = rows.slice(i, i + BATCH_ROWS);
    try {
      const result = await sql`insert into request_log ${sql(chunk as never)} on conflict (id) do nothing`;
      stored += result.count;
    } catch (err) {
      if (!isRowDataError(err)) throw err;
      // One row's data is refused: store the chunk row by row and reject only the refused rows.
      for (const row of chunk) {
        try {
          const result = await sql`insert into request_log ${sql(row as never)} on conflict (id) do nothing`;
          stored += result.count;
        } catch (rowErr) {
          if (!isRowDataError(rowErr)) throw rowErr;
          refused++;
          // The SQLSTATE only: PostgreSQL's messages may quote the data.
          if (errors.length < 5) errors.push(`record ${String(row.id)}: refused by PostgreSQL (SQLSTATE ${(rowErr as { code?: string }).code})`);
        }
      }
    }
  }
  return { stored, duplicates: rows.length - refused - stored, rejected: rejected + refused, errors };
}

/** The upper-case provider name used in the REST API for a config name. */
export function providerLogName(name: string): string {
  return isProviderName(name) ? PROVIDERS[name].logName : name.toUpperCase();
}
