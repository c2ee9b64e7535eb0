/**
 * Log ingestion: validated {@link LogRecord}s from proxies become `request_log` rows in one
 * multi-row insert per batch. The request id is the primary key and conflicts are ignored, so a
 * batch a proxy re-sends (after a lost ack) never stores a record twice. Costs (USD) come from the
 * price table; when the provider sent no usage, tokens are estimated with js-tiktoken here, off the
 * proxy's request path, and the row says so (`tokens_source = 'estimated'`).
 */
import type { ChatUsage } from '../shared/chat.ts';
import { costUsd } from '../shared/models.ts';
import { PROVIDERS, isProviderName } from '../shared/providers.ts';
import { LogRecordSchema, type LogRecord } from '../shared/record.ts';
import { validateValue } from '../shared/validate.ts';
import { countTextTokens } from './tokens.ts';
import type { Sql } from './db.ts';

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

/** Estimated usage when the provider sent none: message texts in, response texts out (tokens). */
function estimateUsage(record: LogRecord): { prompt: number; completion: number } | null {
  const req = record.requestBody as Json | null;
  if (!req || typeof req !== 'object') return null;
  let prompt = 0;
  if (Array.isArray(req.messages)) {
    // OpenAI's chat format: 3 tokens per message, 1 per name, 3 priming the reply.
    for (const m of req.messages as Json[]) prompt += 3 + countTextTokens(textOf(m?.content)) + (m?.name ? 1 : 0);
    prompt += 3;
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

/** Turns one record into a `request_log` row (column → value). */
export function recordToRow(r: LogRecord, sql: Sql): Record<string, unknown> {
  const usage = r.usage as ChatUsage | null;
  let promptTokens: number | null = usage?.prompt_tokens ?? null;
  let completionTokens: number | null = usage?.completion_tokens ?? null;
  let source: string | null = usage ? 'provider' : null;
  if (!usage && r.status >= 200 && r.status < 300) {
    const est = estimateUsage(r);
    if (est) {
      promptTokens = est.prompt;
      completionTokens = r.endpoint === 'embeddings' ? 0 : est.completion;
      source = 'estimated';
    }
  }
  const cachedRead = usage?.prompt_tokens_details?.cached_tokens ?? null;
  const cacheWrite = usage?.prompt_tokens_details?.cache_write_tokens ?? null;
  const total = usage?.total_tokens ?? (promptTokens !== null ? promptTokens + (completionTokens ?? 0) : null);
  const res = r.responseBody as Json | null;
  const responseModel = res && typeof res.model === 'string' ? res.model : null;
  const model = r.modelSent ?? responseModel;
  const cost =
    model && promptTokens !== null
      ? costUsd(r.provider, model, {
          promptTokens,
          completionTokens: completionTokens ?? 0,
          cachedReadTokens: cachedRead ?? 0,
          cacheWriteTokens: cacheWrite ?? 0,
        })
      : null;
  const extra: Json = { attempts: r.attempts, endpoint: r.endpoint, clientClosed: r.clientClosed, bodyTruncated: r.bodyTruncated, modelSent: r.modelSent };
  if (r.tokenLimit) extra.tokenLimit = r.tokenLimit;
  return {
    id: r.requestId,
    organization_id: r.organizationId,
    api_key_id: r.apiKeyId,
    created_at: new Date(r.createdAt),
    response_created_at: r.responseCreatedAt !== null ? new Date(r.responseCreatedAt) : null,
    path: textSafe(r.path),
    target_url: textSafe(r.targetUrl),
    provider: textSafe(r.provider),
    request_model: textSafe(r.requestModel),
    response_model: textSafe(responseModel ?? r.modelSent),
    model_override: textSafe(r.modelOverride),
    user_id: textSafe(r.userId),
    properties: sql.json(jsonbSafe(r.properties) as never),
    status: r.status,
    streamed: r.streamed,
    delay_ms: r.delayMs,
    time_to_first_token: r.timeToFirstTokenMs,
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: total,
    reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
    prompt_cache_read_tokens: cachedRead,
    prompt_cache_write_tokens: cacheWrite,
    prompt_audio_tokens: usage?.prompt_tokens_details?.audio_tokens ?? null,
    completion_audio_tokens: usage?.completion_tokens_details?.audio_tokens ?? null,
    tokens_source: source,
    cost_usd: cost,
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
    if (rec.organizationId !== organizationId || !isProviderName(rec.provider)) {
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
