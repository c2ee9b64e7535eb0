/**
 * Messages on the control-plane WebSocket between a proxy and admin, with their superstruct
 * schemas: both ends validate what they receive and drop (and log) what does not match.
 *
 * admin → proxy: `keys.snapshot` on connect, then `keys.upsert` / `keys.revoke` on every change,
 *   `records.ack` after a batch is committed, `prompt.result` answering `prompt.get`,
 *   `prompts.invalidate` when a prompt's versions or labels change.
 * proxy → admin: `records` (a batch of log records), `prompt.get`, `keys.used` (the ids of the keys
 *   it authenticated since its last report, every few seconds; admin writes `api_key.last_used_at`).
 */
import { any, array, literal, nullable, number, object, optional, record, size, string, union, type Infer, type Struct } from 'superstruct';
import { validateValue } from './validate.ts';

/** An authorized API key as the proxy holds it: hex SHA-256 of the key, its id and organization. */
export const KeyEntrySchema = object({ hash: string(), keyId: string(), organizationId: string() });
/** See {@link KeyEntrySchema}. */
export type KeyEntry = Infer<typeof KeyEntrySchema>;

/** A prompt version body as served to the proxy (a chat-completions request body template). */
export const PromptVersionPayloadSchema = object({
  promptId: string(),
  versionId: string(),
  /** `major.minor`, e.g. `1.2`. */
  version: string(),
  body: record(string(), any()),
});

/** The messages admin sends a proxy on the control-plane WebSocket (JSON text frames), checked on arrival. */
export const AdminMessageSchema = union([
  object({ type: literal('keys.snapshot'), keys: array(KeyEntrySchema) }),
  object({ type: literal('keys.upsert'), keys: array(KeyEntrySchema) }),
  object({ type: literal('keys.revoke'), hashes: array(string()) }),
  object({ type: literal('records.ack'), batchId: string(), stored: number() }),
  object({ type: literal('records.nack'), batchId: string(), error: string() }),
  object({
    type: literal('prompt.result'),
    reqId: string(),
    status: number(),
    error: optional(nullable(string())),
    version: optional(nullable(PromptVersionPayloadSchema)),
  }),
  object({ type: literal('prompts.invalidate'), promptId: string() }),
]);
/** A message from admin to a proxy. */
export type AdminMessage = Infer<typeof AdminMessageSchema>;

/**
 * WebSocket close code with which admin ends a link whose API key no longer authenticates (revoked,
 * deleted, or its organization deleted; the close reason says which). Private-use range (RFC 6455 §7.4.2).
 */
export const KEY_GONE_CLOSE_CODE = 4001;

/**
 * Largest message a proxy sends admin on the link (bytes): admin's `maxPayload`, above which it
 * closes the link with 1009 (message too big) before holding the frame. The proxy's largest
 * legitimate message is a record batch of at most 16 MiB of records (proxy/log-queue.ts
 * `maxBatchBytes`, not configurable) plus its header, or one record alone that is larger: the
 * proxy drops (and counts) a record that does not fit this bound instead of sending it, so the
 * 4 MiB above the batch size are headroom for such a lone record (the default limits make one at
 * most about 11 MiB: `server.max-body-size` 10 MiB plus `log-queue.max-body-bytes` 1 MiB).
 */
export const MAX_CONTROL_PLANE_MESSAGE_BYTES = 20 * 1024 * 1024;

/** Most key ids in one `keys.used` message (a proxy splits a larger report). */
export const MAX_KEYS_USED_PER_MESSAGE = 10_000;

/** The JSON messages a proxy sends admin on the control-plane WebSocket (record batches also go as binary frames: ./record-batch.ts), checked on arrival. */
export const ProxyMessageSchema = union([
  object({ type: literal('records'), batchId: string(), records: array(any()) }),
  object({ type: literal('keys.used'), keyIds: size(array(string()), 1, MAX_KEYS_USED_PER_MESSAGE) }),
  object({
    type: literal('prompt.get'),
    reqId: string(),
    promptId: string(),
    versionId: optional(nullable(string())),
    environment: optional(nullable(string())),
  }),
]);
/** A message from a proxy to admin. */
export type ProxyMessage = Infer<typeof ProxyMessageSchema>;

/**
 * Parses and validates one WebSocket text frame.
 * @returns the message, or an Error describing why it was rejected (never throws).
 */
export function parseMessage<T>(raw: string, schema: Struct<T, any>): T | Error {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    return new Error(`malformed JSON: ${(err as Error).message}`);
  }
  const [error, result] = validateValue(value, schema);
  return error ? new Error(`invalid message: ${error.message}`) : result;
}
