/**
 * Log ingestion: validated {@link LogRecord}s from proxies become `request_log` rows in one
 * multi-row insert per batch. The request id is the primary key and conflicts are ignored, so a
 * batch a proxy re-sends (after a lost ack) never stores a record twice. Costs (USD) come from the
 * price table; when the provider sent no usage, tokens are estimated with js-tiktoken here, off the
 * proxy's request path, and the row says so (`tokens_source = 'estimated'`).
 */
import { validate } from 'superstruct';
import type { ChatUsage } from '../shared/chat.ts';
import { costUsd } from '../shared/models.ts';
import { PROVIDERS, isProviderName } from '../shared/providers.ts';
import { LogRecordSchema, type LogRecord } from '../shared/record.ts';
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

const NUL_RE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** jsonb rejects U+0000; replace it (rarely present) with U+FFFD. */
function jsonbSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const text = JSON.stringify(value);
  if (!text.includes('\\u0000')) return value;
  return JSON.parse(text.replace(NUL_RE, '$1\\ufffd'));
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
    path: r.path,
    target_url: r.targetUrl,
    provider: r.provider,
    request_model: r.requestModel,
    response_model: responseModel ?? r.modelSent,
    model_override: r.modelOverride,
    user_id: r.userId,
    properties: sql.json(r.properties as never),
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
    prompt_text: promptText(r.requestBody),
    prompt_id: r.prompt?.promptId ?? null,
    prompt_version_id: r.prompt?.versionId ?? null,
    prompt_version: r.prompt?.version ?? null,
    prompt_environment: r.prompt?.environment ?? null,
    prompt_inputs: r.prompt ? sql.json(jsonbSafe(r.prompt.inputs) as never) : null,
    request_body: sql.json(jsonbSafe(r.requestBody) as never),
    response_body: sql.json(jsonbSafe(r.responseBody) as never),
    error: r.error !== null ? sql.json(r.error as never) : null,
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
 * Validates and stores a batch of records for `organizationId` in one transaction; records of
 * another organization or of an invalid shape are rejected (counted, not stored).
 * Resolves only after the transaction committed, so the caller may acknowledge the batch.
 * @throws the database error when the insert fails (the caller must not acknowledge).
 */
export async function ingestRecords(sql: Sql, organizationId: string, records: unknown[]): Promise<IngestResult> {
  const rows: Record<string, unknown>[] = [];
  const errors: string[] = [];
  let rejected = 0;
  for (const raw of records) {
    const [error, rec] = validate(raw, LogRecordSchema);
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
    rows.push(recordToRow(rec, sql));
  }
  let stored = 0;
  if (rows.length > 0) {
    await sql.begin(async (tx) => {
      for (let i = 0; i < rows.length; i += BATCH_ROWS) {
        const chunk = rows.slice(i, i + BATCH_ROWS);
        const result = await (tx as unknown as Sql)`insert into request_log ${sql(chunk as never)} on conflict (id) do nothing`;
        stored += result.count;
      }
    });
  }
  return { stored, duplicates: rows.length - stored, rejected, errors };
}

/** The upper-case provider name used in the REST API for a config name. */
export function providerLogName(name: string): string {
  return isProviderName(name) ? PROVIDERS[name].logName : name.toUpperCase();
}
