/**
 * Log ingestion: validated {@link LogRecord}s from proxies (JSON `records` messages, or binary
 * batches whose raw bodies' texts are stored as they came) become `request_log` rows, one COPY per
 * 500 rows (admin/request-log-copy.ts). The request id is the primary key: a batch a proxy re-sends
 * (after a lost ack) fails its COPY and is stored by a multi-row insert that ignores conflicts, so
 * no record is stored twice. Usage is read in the
 * record's dialect (admin/usage.ts: chat completions, Anthropic Messages, Responses). Costs (USD)
 * come from the model table (with the operator's `models:` overrides), Anthropic's 5-minute and
 * 1-hour cache writes priced apart; a cost that cannot be computed is null with `cost_note` saying
 * why. A cache hit (`cacheReferenceId`) costs 0 and keeps the cost it saved (`cost_saved_usd`).
 * When the provider sent no usage, tokens are estimated with js-tiktoken here, off the proxy's
 * request path, and the row says so (`tokens_source = 'estimated'`); so does a usage the proxy
 * estimated for a client whose dialect always has one (marked `svc_token_count: "estimate"`), and those of a
 * stream the client left before its end, which the provider bills though its final usage never came
 * (./cut-stream-usage.ts).
 * A record's API key id that is not a key of its organization is cleared before storing
 * (./ingest-key-scope.ts), and counted in {@link IngestResult}'s `keyIdsCleared`.
 * A body above admin's bound is stored cut and marked `bodyTruncated`, and one nested too deep for
 * PostgreSQL's json input as `{raw: text}` (./ingest-body-bounds.ts): a body never costs its
 * record, nor its batch.
 */
import { costOf } from '../shared/models.ts';
import { PROVIDERS, isProviderName } from '../shared/providers.ts';
import type { DecodedRecord } from '../shared/record-batch.ts';
import { ESTIMATED_USAGE_MEMBER, ESTIMATED_USAGE_VALUE, LogRecordSchema, type LogRecord } from '../shared/record.ts';
import { validateValue } from '../shared/validate.ts';
import { readDecodedRecord, usageOfBody, type BodyTexts, type StoredBody } from './decoded-record.ts';
import { answerTokensSoFar, cutStreamCounts, isCutStream } from './cut-stream-usage.ts';
import { bodiesAsText, bodyValueText, boundBody, cutText, MAX_STORED_BODY_BYTES, type BoundedBodyCounts } from './ingest-body-bounds.ts';
import { clearForeignKeyIds, type ClearedKeyIds } from './ingest-key-scope.ts';
import { jsonbText } from './jsonb-text.ts';
import { isCertainlyLogRecord } from './record-check.ts';
import { copyRequestLogRows, type CopyValue } from './request-log-copy.ts';
import { countTextTokens } from './tokens.ts';
import { isUuid } from './validation.ts';
import type { Sql } from './db.ts';
import { mergedUsageObject, readUsage, type RecordUsage } from './usage.ts';

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
 * The prompt tokens of an `input`: embeddings take a string, an array of strings, an array of token
 * ids or an array of such arrays (OpenAI API reference, "Create embeddings" → `input`), Responses a
 * string or input items. Texts are counted; a token id is one token, not tokenized as the digits it
 * is written with.
 */
function inputTokens(input: unknown): number {
  if (!Array.isArray(input)) return itemTokens(input);
  let n = 0;
  for (const item of input) {
    if (!Array.isArray(item)) n += itemTokens(item);
    // One level deeper only: that is all the format has, and a hostile nesting costs no recursion.
    else for (const inner of item) n += itemTokens(inner);
  }
  return n;
}

/** One text's tokens, 1 for one token id, a Responses input item's content text; anything else counts 0. */
function itemTokens(item: unknown): number {
  if (typeof item === 'string') return countTextTokens(item);
  if (typeof item === 'number') return 1;
  return item && typeof item === 'object' ? countTextTokens(textOf((item as Json).content)) : 0;
}

/**
 * The estimated prompt tokens of a record's request: message texts (a Messages `system` too), or an embeddings or
 * Responses `input` ({@link inputTokens}); null when the body has neither.
 */
function estimatePrompt(record: LogRecord): number | null {
  const req = record.requestBody as Json | null;
  if (!req || typeof req !== 'object') return null;
  if (Array.isArray(req.messages)) return messagesTokens(req);
  return typeof req.input === 'string' || Array.isArray(req.input) ? inputTokens(req.input) : null;
}

/** A chat or Messages request's `messages` (and `system`), in tokens: OpenAI's chat format, 3 per message, 1 per name, 3 priming the reply. */
function messagesTokens(req: Json): number {
  let prompt = 3;
  for (const m of req.messages as Json[]) prompt += 3 + countTextTokens(textOf(m?.content)) + (m?.name ? 1 : 0);
  const system = systemText(req.system);
  if (system) prompt += 3 + countTextTokens(system);
  return prompt;
}

/**
 * Estimated usage when the provider sent none: message texts in (a Messages `system` too), or an
 * embeddings `input` (texts or token ids, {@link inputTokens}), response texts out (chat `choices`,
 * Messages `content` text and `tool_use` input), in tokens.
 */
function estimateUsage(record: LogRecord): { prompt: number; completion: number } | null {
  const prompt = estimatePrompt(record);
  if (prompt === null) return null;
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

/**
 * Token counts and their source: the provider's usage; the gateway's estimate the client was given in its usage
 * (marked {@link ESTIMATED_USAGE_MEMBER}: the provider reported none; trusted only on Bedrock's embeddings); for a
 * stream the client left before its end, what the provider reported with the estimates filling in (./cut-stream-usage.ts);
 * or an estimate made here when no usage came on a 2xx.
 */
function tokenCounts(r: LogRecord): { usage: RecordUsage | null; prompt: number | null; completion: number | null; source: string | null } {
  const usage = readUsage(r);
  // The marker is honoured only where the gateway itself puts it (embeddings answered by Bedrock,
  // proxy/translators/openai-embeddings-to-bedrock-embeddings.ts): any other answer may be a provider's
  // passed through as it came, and a provider writing the marker would otherwise have its usage
  // (cached tokens, so the cost) dropped.
  if (usage && r.endpoint === 'embeddings' && r.provider === 'bedrock' && mergedUsageObject(r)?.[ESTIMATED_USAGE_MEMBER] === ESTIMATED_USAGE_VALUE) {
    return { usage: null, prompt: usage.promptTokens, completion: usage.completionTokens ?? 0, source: 'estimated' };
  }
  // A stream the client left: the provider's final usage never came, its answer was billed all the same (./cut-stream-usage.ts).
  if (isCutStream(r)) return { ...cutStreamCounts(usage, estimatePrompt(r), answerTokensSoFar(r.responseBody)), source: 'estimated' };
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

/**
 * A `request_log` row: column → value, JSON columns as their JSON text (see {@link JSON_COLUMNS}),
 * a raw body as the UTF-8 bytes of its text (admin/decoded-record.ts).
 */
export type RequestLogRow = Record<string, CopyValue>;

/**
 * The JSON columns of a {@link RequestLogRow} (jsonb; the two bodies json, migration 00009): their
 * values are JSON texts, not values to serialize.
 */
const JSON_COLUMNS: ReadonlySet<string> = new Set(['properties', 'prompt_inputs', 'request_body', 'response_body', 'error', 'extra']);

/**
 * An epoch-ms time as the ISO text stored in a timestamptz column.
 * @throws {RangeError} when it is no valid time (the record is then rejected, not the batch).
 */
const isoTime = (ms: number): string => new Date(ms).toISOString();

/**
 * Turns one record into a `request_log` row (column → value; every row has the same columns in the
 * same order). Times are ISO texts and JSON values their JSON text, made once (admin/jsonb-text.ts).
 * Bodies are bounded as ./ingest-body-bounds.ts says (one cut sets `extra.bodyTruncated`); the
 * prompt text is cut at the same bound.
 * @param texts the bodies' texts as they arrived raw (admin/decoded-record.ts); a body without one
 *   is serialized from the record.
 * @param counts where the bodies cut or stored as `{raw: text}` are counted, if given.
 * @throws {RangeError} for a time that is no valid date.
 */
export function recordToRow(r: LogRecord, texts?: BodyTexts, counts?: BoundedBodyCounts): RequestLogRow {
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
  // The proxy refuses (400) a body nested deeper than PostgreSQL may take, and logs it as it came.
  const suspect = r.status >= 400;
  const requestBody = boundBody(texts?.requestBody !== undefined ? texts.requestBody : bodyValueText(r.requestBody), suspect);
  const responseBody = boundBody(texts?.responseBody !== undefined ? texts.responseBody : bodyValueText(r.responseBody), suspect);
  if (counts) {
    counts.cut += Number(requestBody.cut) + Number(responseBody.cut);
    counts.asText += Number(requestBody.asText) + Number(responseBody.asText);
  }
  const bodyTruncated = r.bodyTruncated || requestBody.cut || responseBody.cut;
  const extra: Json = { attempts: r.attempts, endpoint: r.endpoint, clientClosed: r.clientClosed, bodyTruncated, modelSent: r.modelSent };
  if (r.tokenLimit) extra.tokenLimit = r.tokenLimit;
  if (r.removedMembers && r.removedMembers.length > 0) extra.removedMembers = r.removedMembers.slice(0, 1000).map((m) => m.slice(0, 512));
  if (r.wireFormat) extra.wireFormat = r.wireFormat.slice(0, 100);
  if (usage?.cacheWrite1hTokens) extra.cacheWrite1hTokens = usage.cacheWrite1hTokens;
  return {
    id: r.requestId,
    organization_id: r.organizationId,
    api_key_id: r.apiKeyId,
    created_at: isoTime(r.createdAt),
    response_created_at: r.responseCreatedAt !== null ? isoTime(r.responseCreatedAt) : null,
    path: textSafe(r.path),
    target_url: textSafe(r.targetUrl),
    provider: textSafe(provider),
    request_model: textSafe(modelWithoutProvider(r.requestModel)),
    response_model: textSafe(responseModel ?? r.modelSent),
    model_override: textSafe(r.modelOverride),
    user_id: textSafe(r.userId),
    properties: jsonbText(r.properties),
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
    prompt_text: textSafe(boundedPromptText(r.requestBody)),
    prompt_id: textSafe(r.prompt?.promptId ?? null),
    prompt_version_id: textSafe(r.prompt?.versionId ?? null),
    prompt_version: textSafe(r.prompt?.version ?? null),
    prompt_environment: textSafe(r.prompt?.environment ?? null),
    prompt_inputs: r.prompt ? jsonbText(r.prompt.inputs) : null,
    request_body: requestBody.text,
    response_body: responseBody.text,
    error: r.error !== null ? jsonbText(r.error) : null,
    extra: jsonbText(extra),
  };
}

/** The prompt text of a request body ({@link promptText}), cut at the bound of a stored body. */
function boundedPromptText(body: unknown): string | null {
  const text = promptText(body);
  return text === null ? null : cutText(text, MAX_STORED_BODY_BYTES);
}

/** Rows of a batch made so far, the records refused before reaching PostgreSQL, and the bodies bounded. */
interface Prepared {
  rows: RequestLogRow[];
  rejected: number;
  errors: string[];
  bodies: BoundedBodyCounts;
}

/** Counts one record rejected, keeping the first 5 reasons. */
function reject(batch: Prepared, message: string): void {
  batch.rejected++;
  if (batch.errors.length < 5) batch.errors.push(message);
}

/**
 * Validates one record (LogRecordSchema, with admin/record-check.ts's fast check first) and adds
 * its row to the batch, or counts it rejected: an invalid shape,
 * another organization's record, an unknown provider, or a value no row can hold.
 * @param texts the bodies' raw texts (binary batches); present, a null `usage` is the raw
 *   response body's `usage`, where every logged endpoint kind keeps it.
 */
function prepareRecord(batch: Prepared, organizationId: string, raw: unknown, texts?: BodyTexts): void {
  let rec: LogRecord;
  if (isCertainlyLogRecord(raw)) rec = raw;
  else {
    const [error, valid] = validateValue(raw, LogRecordSchema);
    if (error) return reject(batch, `${error.path.join('.') || '(record)'}: ${error.message}`);
    rec = valid;
  }
  if (rec.organizationId !== organizationId || (rec.provider !== null && !isProviderName(rec.provider))) {
    return reject(batch, `record ${rec.requestId}: organization or provider not allowed on this link`);
  }
  // Set after validation: the body's usage was never checked against the usage schema (the JSON
  // path reads it unchecked too, in readUsage), so an odd member must not reject the record.
  if (texts?.responseBody !== undefined && rec.usage === null) rec.usage = usageOfBody(rec.responseBody) as LogRecord['usage'];
  try {
    batch.rows.push(recordToRow(rec, texts, batch.bodies));
  } catch (err) {
    reject(batch, `record ${rec.requestId}: ${(err as Error).message}`);
  }
}

/**
 * Validates and stores a batch of records for `organizationId` (the JSON `records` message);
 * records of another organization or of an invalid shape are rejected (counted, not stored).
 * Stored as {@link storeRows} says. Resolves only after every stored row committed, so the caller
 * may acknowledge the batch.
 * @throws the database error when storing fails for another reason than a row's data (the caller
 *   must not acknowledge).
 */
export async function ingestRecords(sql: Sql, organizationId: string, records: unknown[]): Promise<IngestResult> {
  const batch: Prepared = { rows: [], rejected: 0, errors: [], bodies: { cut: 0, asText: 0 } };
  for (const raw of records) prepareRecord(batch, organizationId, raw);
  return storeScoped(sql, organizationId, batch);
}

/**
 * As {@link ingestRecords}, for the records of a binary batch (shared/record-batch.ts): each head
 * is parsed and the raw bodies' JSON texts are stored as they arrived (admin/decoded-record.ts). A
 * record whose head is not JSON, or a positional head of the wrong length, is rejected.
 * @throws as {@link ingestRecords}.
 */
export async function ingestDecodedRecords(sql: Sql, organizationId: string, records: readonly DecodedRecord[]): Promise<IngestResult> {
  const batch: Prepared = { rows: [], rejected: 0, errors: [], bodies: { cut: 0, asText: 0 } };
  for (const decoded of records) {
    let read;
    try {
      read = readDecodedRecord(decoded);
    } catch (err) {
      const what = err instanceof SyntaxError ? 'head is not JSON' : 'head is unreadable';
      reject(batch, `(record): ${what}: ${(err as Error).message}`);
      continue;
    }
    prepareRecord(batch, organizationId, read.record, read.texts);
  }
  return storeScoped(sql, organizationId, batch);
}

/**
 * Stores the batch's rows ({@link storeRows}) once their API key ids not of `organizationId` are cleared (./ingest-key-scope.ts).
 * @throws the database error of the key lookup or of storing.
 */
async function storeScoped(sql: Sql, organizationId: string, batch: Prepared): Promise<IngestResult> {
  const cleared = await clearForeignKeyIds(sql, organizationId, batch.rows);
  return { ...(await storeRows(sql, batch)), keyIdsCleared: cleared };
}

/**
 * Result of ingesting one batch: rows inserted now, duplicates ignored, records rejected as invalid,
 * the records stored with their API key id cleared (not a key of the link's organization), and the
 * bodies of the batch's rows bounded (./ingest-body-bounds.ts; a duplicate's too): `bodiesCut` cut
 * at the bound, `bodiesAsText` made `{raw: text}` (the cut ones too, and those PostgreSQL refused as JSON).
 */
export interface IngestResult {
  stored: number;
  duplicates: number;
  rejected: number;
  errors: string[];
  keyIdsCleared: ClearedKeyIds;
  bodiesCut: number;
  bodiesAsText: number;
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

/** The columns of every row (recordToRow makes them all alike: the same keys, inserted in the same order), in order. */
const columnsOf = (rows: readonly RequestLogRow[]): string[] => Object.keys(rows[0]!);

/**
 * Stores prepared rows, {@link BATCH_ROWS} at a time, each chunk with one COPY. A chunk COPY
 * refuses because of a row's data (its id already stored, unique violation 23505, after a lost
 * ack; or see {@link isRowDataError}) is stored with {@link insertChunk} instead, which skips
 * duplicates and refuses bad rows one by one.
 * @throws the database error of any other failure (nothing of that chunk stored).
 */
async function storeRows(sql: Sql, batch: Prepared): Promise<Omit<IngestResult, 'keyIdsCleared'>> {
  const { rows, errors, bodies } = batch;
  let stored = 0;
  let refused = 0;
  // Each chunk is its own statement, committed when it resolves. Deliberately no sql.begin():
  // postgres.js 3.4.9 sends ROLLBACK/COMMIT on a transaction's connection even after the server
  // closed it, which throws from a setImmediate and kills the process (porsager/postgres#1154,
  // #1208). A chunk stored before a later one failed is harmless: the proxy re-sends the batch,
  // the COPY of the stored chunk then fails on its ids and the INSERT fallback skips them.
  for (let i = 0; i < rows.length; i += BATCH_ROWS) {
    const chunk = rows.slice(i, i + BATCH_ROWS);
    const columns = columnsOf(chunk);
    try {
      // Object.values is in `columns`' order (every row has the same keys, in the same order): a
      // lookup per column by name cost ~2 µs a row.
      stored += await copyRequestLogRows(sql, columns, chunk.map((row) => Object.values(row)));
    } catch (err) {
      if (!isRowDataError(err)) throw err;
      const result = await insertChunk(sql, chunk, errors, bodies);
      stored += result.stored;
      refused += result.refused;
    }
  }
  return { stored, duplicates: rows.length - refused - stored, rejected: batch.rejected + refused, errors, bodiesCut: bodies.cut, bodiesAsText: bodies.asText };
}

/**
 * The type oid `unknown`: a JSON column's text bound with it is read by PostgreSQL as the column's type.
 * Left unspecified (0), postgres.js would take the server's described type, jsonb or json, and serialize
 * the text with JSON.stringify, storing a JSON string.
 */
const UNKNOWN_OID = 705;

/** A row for postgres.js's insert helper: JSON texts bound as {@link UNKNOWN_OID}. */
function insertable(sql: Sql, row: RequestLogRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    out[column] = JSON_COLUMNS.has(column) && typeof text === 'string' ? sql.typed(text as never, UNKNOWN_OID) : text;
  }
  return out;
}

/**
 * Stores a chunk with one multi-row INSERT that skips ids already stored; when one row's data is
 * refused, row by row ({@link insertRow}), refusing only the rows PostgreSQL refuses even with
 * their bodies as text.
 * @param errors where the refusals' messages go (at most 5 kept).
 * @param bodies where bodies stored as text are counted.
 * @throws the database error of a failure that is not a row's data.
 */
async function insertChunk(sql: Sql, chunk: readonly RequestLogRow[], errors: string[], bodies: BoundedBodyCounts): Promise<{ stored: number; refused: number }> {
  try {
    const result = await sql`insert into request_log ${sql(chunk.map((row) => insertable(sql, row)) as never)} on conflict (id) do nothing`;
    return { stored: result.count, refused: 0 };
  } catch (err) {
    if (!isRowDataError(err)) throw err;
  }
  let stored = 0;
  let refused = 0;
  for (const row of chunk) {
    const result = await insertRow(sql, row, bodies);
    if (typeof result === 'number') {
      stored += result;
      continue;
    }
    refused++;
    // The SQLSTATE only: PostgreSQL's messages may quote the data.
    if (errors.length < 5) errors.push(`record ${String(row.id)}: refused by PostgreSQL (SQLSTATE ${result.code})`);
  }
  return { stored, refused };
}

/** SQLSTATE class 23: an integrity violation, which storing the bodies as text cannot cure. */
const isIntegrityError = (err: unknown): boolean => String((err as { code?: unknown }).code).startsWith('23');

/**
 * Inserts one row, skipping it when its id is stored. When PostgreSQL refuses its data (a body
 * nested deeper than json input takes, 54001, that ./ingest-body-bounds.ts did not find before),
 * again with its bodies as `{raw: text}` (counted in `bodies.asText`), which PostgreSQL takes at
 * any depth.
 * @returns the rows stored (0 or 1), or the refusal's SQLSTATE when the row is refused either way.
 * @throws the database error of a failure that is not a row's data.
 */
async function insertRow(sql: Sql, row: RequestLogRow, bodies: BoundedBodyCounts): Promise<number | { code: string }> {
  let first: unknown;
  try {
    return (await sql`insert into request_log ${sql(insertable(sql, row) as never)} on conflict (id) do nothing`).count;
  } catch (err) {
    if (!isRowDataError(err)) throw err;
    first = err;
  }
  const code = String((first as { code?: unknown }).code);
  const retry = isIntegrityError(first) ? null : bodiesAsText([row.request_body as StoredBody, row.response_body as StoredBody]);
  if (retry === null) return { code };
  try {
    const degraded: RequestLogRow = { ...row, request_body: retry.bodies[0], response_body: retry.bodies[1] };
    const count = (await sql`insert into request_log ${sql(insertable(sql, degraded) as never)} on conflict (id) do nothing`).count;
    bodies.asText += count * retry.asText;
    return count;
  } catch (err) {
    if (!isRowDataError(err)) throw err;
    return { code: String((err as { code?: unknown }).code) };
  }
}

/** The upper-case provider name used in the REST API for a config name. */
export function providerLogName(name: string): string {
  return isProviderName(name) ? PROVIDERS[name].logName : name.toUpperCase();
}
