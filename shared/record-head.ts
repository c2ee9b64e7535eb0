/**
 * A log record's head in its positional form: the {@link LogRecord} members as a JSON array, in
 * the order of {@link HEAD_MEMBERS}, which is how the proxy writes a record into a batch
 * (shared/record-batch.ts, version 2). The member names are written once here instead of in every
 * record: building and serializing the 34-member object took 2.9 µs per record (Node 20's
 * JSON.stringify), the array 1.9 µs, and the head shrinks from about 890 to 450 bytes. Admin parses
 * the array faster (1.9 → 1.1 µs) but pays that back building the object, so its cost per row is
 * unchanged.
 * Admin turns a positional head back into the object with {@link recordFromHead}.
 */
import type { LogRecord } from './record.ts';

/** The members of a positional head, in order. Any change to it is a new batch version (shared/record-batch.ts). */
export const HEAD_MEMBERS = [
  'requestId',
  'organizationId',
  'apiKeyId',
  'createdAt',
  'responseCreatedAt',
  'path',
  'targetUrl',
  'provider',
  'requestModel',
  'modelSent',
  'modelOverride',
  'userId',
  'properties',
  'status',
  'streamed',
  'delayMs',
  'timeToFirstTokenMs',
  'requestBody',
  'responseBody',
  'bodyTruncated',
  'usage',
  'error',
  'clientClosed',
  'prompt',
  'tokenLimit',
  'attempts',
  'endpoint',
  'sessionId',
  'sessionPath',
  'sessionName',
  'removedMembers',
  'wireFormat',
  'cacheEnabled',
  'cacheReferenceId',
] as const satisfies ReadonlyArray<keyof LogRecord>;

type Members = typeof HEAD_MEMBERS;

/**
 * A positional head: each position holds the value of the {@link HEAD_MEMBERS} member at the same
 * index (a raw body travelling beside the head is `undefined` in its position, written as null).
 */
export type LogRecordHead = HeadOf<Members>;

/** Maps the member tuple to its values' tuple (generic, so that TypeScript maps the positions of a tuple). */
type HeadOf<T extends readonly unknown[]> = { -readonly [I in keyof T]: HeadValue<T[I]> };

/** The value a positional head holds for member `M`: the record's, or undefined for a body travelling raw. */
type HeadValue<M> = M extends 'requestBody' | 'responseBody' ? unknown : M extends keyof LogRecord ? LogRecord[M] : never;

/**
 * The record object of a positional head (validated later against LogRecordSchema, as any record).
 * Written as one object literal, in {@link HEAD_MEMBERS} order (test/stage-observers.test.ts checks
 * that each member reads its own position): assigning the members by name in a loop took 2 µs per
 * record on admin, the literal a tenth of that.
 * @param head a parsed head: an array of {@link HEAD_MEMBERS}.length values.
 * @throws {RangeError} naming what is wrong when `head` is no array of that length.
 */
export function recordFromHead(head: unknown): Record<string, unknown> {
  if (!Array.isArray(head)) throw new RangeError('a positional record head must be a JSON array');
  if (head.length !== HEAD_MEMBERS.length) throw new RangeError(`a positional record head has ${HEAD_MEMBERS.length} members, this one ${head.length}`);
  const h = head as unknown[];
  return {
    requestId: h[0],
    organizationId: h[1],
    apiKeyId: h[2],
    createdAt: h[3],
    responseCreatedAt: h[4],
    path: h[5],
    targetUrl: h[6],
    provider: h[7],
    requestModel: h[8],
    modelSent: h[9],
    modelOverride: h[10],
    userId: h[11],
    properties: h[12],
    status: h[13],
    streamed: h[14],
    delayMs: h[15],
    timeToFirstTokenMs: h[16],
    requestBody: h[17],
    responseBody: h[18],
    bodyTruncated: h[19],
    usage: h[20],
    error: h[21],
    clientClosed: h[22],
    prompt: h[23],
    tokenLimit: h[24],
    attempts: h[25],
    endpoint: h[26],
    sessionId: h[27],
    sessionPath: h[28],
    sessionName: h[29],
    removedMembers: h[30],
    wireFormat: h[31],
    cacheEnabled: h[32],
    cacheReferenceId: h[33],
  };
}
