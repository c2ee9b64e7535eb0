/**
 * A record of a binary record batch (shared/record-batch.ts) made ready for ingestion: its head
 * parsed, and its raw bodies parsed where admin reads them (prompt text, token estimate, usage,
 * response model) while their JSON text is kept as the text stored in the body columns, so that
 * text is never serialized again.
 */
import { isUtf8 } from 'node:buffer';
import type { DecodedRecord } from '../shared/record-batch.ts';
import { recordFromHead } from '../shared/record-head.ts';
import { jsonbSafeText } from './jsonb-text.ts';

/**
 * A body's JSON text as stored: the bytes as they arrived (valid UTF-8 that PostgreSQL takes as it
 * is), or a text where an escape had to be replaced (admin/jsonb-text.ts); null: SQL NULL.
 */
export type StoredBody = Buffer | string | null;

/**
 * The stored JSON texts of a record's bodies as they arrived. `undefined`: the body did not arrive
 * raw (or is stored in another shape), so its text is rendered from the record's value.
 */
export interface BodyTexts {
  requestBody?: StoredBody;
  responseBody?: StoredBody;
}

/** A decoded record: the record (validated later against LogRecordSchema) and its bodies' texts. */
export interface ReadRecord {
  record: unknown;
  texts: BodyTexts;
}

/**
 * A raw body's value and its stored text. An empty body is none (null), as the proxy logged an empty
 * response before; a body that is not JSON is kept as `{ raw: text }`, its text rendered later.
 * The stored text is `bytes` itself when they are valid UTF-8 and need no escape replaced: a large
 * body then goes to PostgreSQL without being encoded again from a JS string (bench/ingest.ts
 * --request=claude-code).
 */
function readBody(bytes: Buffer): { value: unknown; text: StoredBody | undefined } {
  if (bytes.length === 0) return { value: null, text: null };
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { value: { raw: text }, text: undefined };
  }
  if (value === null) return { value, text: null };
  const safe = jsonbSafeText(text);
  // Invalid UTF-8 became U+FFFD in `text`. As bytes, PostgreSQL would refuse the whole COPY, and the
  // batch would be stored by the slower INSERT fallback.
  return { value, text: safe === text && isUtf8(bytes) ? bytes : safe };
}

/**
 * Reads one decoded record: the head's JSON (a positional head turned into the record object, see
 * shared/record-head.ts) with the raw bodies set as its `requestBody` and `responseBody` members (a
 * head that is no object is returned as it is; validation rejects it).
 * @throws {SyntaxError} when the head is not JSON.
 * @throws {RangeError} when the head is an array of the wrong length.
 */
export function readDecodedRecord(decoded: DecodedRecord): ReadRecord {
  const parsed: unknown = JSON.parse(decoded.head.toString('utf8'));
  const record = Array.isArray(parsed) ? recordFromHead(parsed) : parsed;
  const texts: BodyTexts = {};
  if (!record || typeof record !== 'object' || Array.isArray(record)) return { record, texts };
  const r = record as Record<string, unknown>;
  if (decoded.requestBody !== null) {
    const body = readBody(decoded.requestBody);
    r.requestBody = body.value;
    texts.requestBody = body.text;
  }
  if (decoded.responseBody !== null) {
    const body = readBody(decoded.responseBody);
    r.responseBody = body.value;
    texts.responseBody = body.text;
  }
  return { record, texts };
}

/**
 * The usage a raw response body carries: every logged endpoint kind keeps it at `body.usage`.
 * @returns the body's `usage` object, or null when the body is no object or has no object `usage`.
 */
export function usageOfBody(body: unknown): Record<string, unknown> | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const usage = (body as Record<string, unknown>).usage;
  return usage && typeof usage === 'object' && !Array.isArray(usage) ? (usage as Record<string, unknown>) : null;
}
