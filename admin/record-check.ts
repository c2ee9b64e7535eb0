/**
 * A fast check that a value is a valid {@link LogRecord}, for ingestion's common case. superstruct
 * walks a record through nested generators, about 60 µs per record, most of what admin spent on a
 * stored row; this plain walk costs about 1 µs. It ACCEPTS only what LogRecordSchema accepts (it
 * is stricter where that is simpler: a record member that is an array, an unknown key anywhere)
 * and says nothing about the rest: the caller then runs LogRecordSchema, which accepts or says why
 * not. So LogRecordSchema stays the definition; test/record-check.test.ts checks that every member
 * of the schema is checked here and that nothing is accepted that the schema refuses.
 */
import type { LogRecord } from '../shared/record.ts';

type Json = Record<string, unknown>;

const isPlain = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
// superstruct's number() refuses NaN (and accepts ±Infinity).
const isNumber = (v: unknown): boolean => typeof v === 'number' && !Number.isNaN(v);
const isString = (v: unknown): boolean => typeof v === 'string';
const isNullableString = (v: unknown): boolean => v === null || typeof v === 'string';
const isOptionalNullableString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
const isNullableNumber = (v: unknown): boolean => v === null || isNumber(v);
const isCount = (v: unknown): boolean => v === undefined || v === null || isNumber(v);

/** An array whose every element (holes too, as undefined) passes `check`. */
function isArrayOf(v: unknown, check: (e: unknown) => boolean): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
  return true;
}

/** A plain object whose every member (inherited enumerable ones too, as superstruct's record() walks them) is a string. */
function isStringRecord(v: unknown): boolean {
  if (!isPlain(v)) return false;
  for (const key in v) if (typeof v[key] !== 'string') return false;
  return true;
}

/** Every key of `v` is in `allowed` (superstruct's object() refuses unknown keys). */
function onlyKeys(v: Json, allowed: ReadonlySet<string>): boolean {
  for (const key in v) if (!allowed.has(key)) return false;
  return true;
}

/** Members of LogRecordSchema, each with its check (a missing member is `undefined`). */
const MEMBERS: Record<keyof LogRecord, (v: unknown) => boolean> = {
  requestId: isString,
  organizationId: isString,
  apiKeyId: isNullableString,
  createdAt: isNumber,
  responseCreatedAt: isNullableNumber,
  path: isString,
  targetUrl: isNullableString,
  provider: isNullableString,
  requestModel: isNullableString,
  modelSent: isNullableString,
  modelOverride: isNullableString,
  userId: isNullableString,
  properties: isStringRecord,
  status: isNumber,
  streamed: (v) => typeof v === 'boolean',
  delayMs: isNumber,
  timeToFirstTokenMs: isNullableNumber,
  requestBody: () => true,
  responseBody: () => true,
  bodyTruncated: (v) => typeof v === 'boolean',
  usage: (v) => v === null || isUsage(v),
  error: isNullableString,
  clientClosed: (v) => typeof v === 'boolean',
  prompt: (v) => v === null || isPrompt(v),
  tokenLimit: (v) => v === null || isTokenLimit(v),
  attempts: (v) => isArrayOf(v, isAttempt),
  endpoint: (v) => v === 'chat' || v === 'embeddings' || v === 'messages' || v === 'responses',
  sessionId: isOptionalNullableString,
  sessionPath: isOptionalNullableString,
  sessionName: isOptionalNullableString,
  removedMembers: (v) => v === undefined || v === null || isArrayOf(v, isString),
  wireFormat: isOptionalNullableString,
  cacheEnabled: (v) => v === undefined || typeof v === 'boolean',
  cacheReferenceId: isOptionalNullableString,
};
const MEMBER_KEYS: ReadonlySet<string> = new Set(Object.keys(MEMBERS));
const MEMBER_CHECKS = Object.entries(MEMBERS);

/** The keys of LogRecordSchema this module checks (for the test that compares them with the schema's). */
export const CHECKED_MEMBERS: readonly string[] = [...MEMBER_KEYS];

/** Usage objects (`type()`: other members pass): counts are absent, null or numbers; details likewise. */
function isUsage(v: unknown): boolean {
  if (!isPlain(v)) return false;
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens', 'input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens']) {
    if (!isCount(v[k])) return false;
  }
  return (
    isDetails(v.prompt_tokens_details, ['cached_tokens', 'cache_write_tokens', 'audio_tokens']) &&
    isDetails(v.completion_tokens_details, ['reasoning_tokens', 'audio_tokens']) &&
    isDetails(v.cache_creation, ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens']) &&
    isDetails(v.input_tokens_details, ['cached_tokens']) &&
    isDetails(v.output_tokens_details, ['reasoning_tokens', 'thinking_tokens'])
  );
}

/** An optional, nullable `type()` of counts. */
function isDetails(v: unknown, counts: readonly string[]): boolean {
  if (v === undefined || v === null) return true;
  return isPlain(v) && counts.every((k) => isCount(v[k]));
}

const PROMPT_KEYS = new Set(['promptId', 'versionId', 'version', 'environment', 'inputs']);
function isPrompt(v: unknown): boolean {
  return isPlain(v) && onlyKeys(v, PROMPT_KEYS) && isString(v.promptId) && isNullableString(v.versionId) && isNullableString(v.version) && isNullableString(v.environment) && isPlain(v.inputs);
}

const TOKEN_LIMIT_KEYS = new Set(['handler', 'tokensBefore', 'tokensAfter', 'allowedInput', 'modelSent', 'skipped']);
function isTokenLimit(v: unknown): boolean {
  return (
    isPlain(v) &&
    onlyKeys(v, TOKEN_LIMIT_KEYS) &&
    isString(v.handler) &&
    isNullableNumber(v.tokensBefore) &&
    isNullableNumber(v.tokensAfter) &&
    isNullableNumber(v.allowedInput) &&
    isString(v.modelSent) &&
    isNullableString(v.skipped)
  );
}

const ATTEMPT_KEYS = new Set(['provider', 'status', 'latencyMs', 'error']);
function isAttempt(v: unknown): boolean {
  return isPlain(v) && onlyKeys(v, ATTEMPT_KEYS) && isString(v.provider) && isNumber(v.status) && isNumber(v.latencyMs) && isOptionalNullableString(v.error);
}

/**
 * True when `value` is certainly a valid {@link LogRecord} (LogRecordSchema accepts it); false
 * when it may not be (run LogRecordSchema to know). Never throws.
 */
export function isCertainlyLogRecord(value: unknown): value is LogRecord {
  if (!isPlain(value) || !onlyKeys(value, MEMBER_KEYS)) return false;
  for (const [key, check] of MEMBER_CHECKS) if (!check(value[key])) return false;
  return true;
}
