/**
 * Bounds of the bodies admin stores (admin/ingest-body-bounds.ts), against the real PostgreSQL: a
 * body above admin's bound is stored cut, as `{raw: text}`, and marked `bodyTruncated` (as the
 * proxy marks a body it cut at `log-queue.max-body-bytes`), its batch stored and acked; a body
 * nested deeper than PostgreSQL's json input takes (a request the proxy refused as too deep keeps
 * its body) is stored as `{raw: text}`, whether found before the COPY or only when PostgreSQL
 * refused the row, and the rest of its batch is stored too.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import WebSocket from 'ws';
import { startControlPlane, type ControlPlane } from '../admin/controlplane.ts';
import { ingestDecodedRecords, ingestRecords } from '../admin/ingest.ts';
import { bodiesAsText, boundBody } from '../admin/ingest-body-bounds.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { decodeBatch, encodeBatch, encodeRecord } from '../shared/record-batch.ts';
import { HEAD_MEMBERS } from '../shared/record-head.ts';
import type { LogRecord } from '../shared/record.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { logRecord } from './rest-support.ts';

/** Admin's default bound of a stored body, in bytes (admin/ingest-body-bounds.ts). */
const BOUND = 16 * 1024 * 1024;

const CHAT_RESPONSE = '{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}';

/** A chat request whose user message is `size` bytes of `a`: valid JSON, above the bound for a large `size`. */
const bigRequest = (size: number): string => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"${'a'.repeat(size)}"}]}`;

/** A chat request with a member nested `depth` arrays deep: valid JSON, refused by the proxy (deeper than 128) and by PostgreSQL's json input. */
const deepArrays = (depth: number): string => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;

/** As {@link deepArrays}, nested through objects (`{"a":{"a":...}}`), which admin's check before the COPY does not look for. */
const deepObjects = (depth: number): string => `{"model":"gpt-4o-mini","x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;

/** A record's positional head text, as the proxy writes it. */
function recordHead(rec: Partial<LogRecord>): string {
  const full: Partial<LogRecord> = { cacheEnabled: false, ...rec, requestBody: undefined, responseBody: undefined, usage: null };
  return JSON.stringify(HEAD_MEMBERS.map((m) => full[m]));
}

/** A record as the proxy sends it in a binary batch: the head, then the raw bodies (null: none). */
const binaryRecord = (rec: LogRecord, request: string | null, response: string | null): Buffer =>
  encodeRecord(recordHead(rec), request === null ? null : Buffer.from(request), response === null ? null : Buffer.from(response));

/** The record of a request the proxy refused (validate's 400): no provider, the error, no answer body. */
function refusedRecord(org: string): LogRecord {
  return logRecord(org, { provider: null, targetUrl: null, modelSent: null, status: 400, error: 'the JSON body is nested deeper than 128 levels', attempts: [], responseBody: null, usage: null });
}

/** The stored bodies (as their json text), `extra` and `prompt_text` of a row, or undefined when it is not stored. */
async function stored(db: TestDatabase, id: string): Promise<{ req: string | null; res: string | null; extra: Record<string, unknown>; prompt: string | null } | undefined> {
  const [row] = await db.sql<Array<{ req: string | null; res: string | null; extra: Record<string, unknown>; prompt: string | null }>>`
    select request_body::text as req, response_body::text as res, extra, prompt_text as prompt from request_log where id = ${id}`;
  return row;
}

describe('stored body bounds', () => {
  let db: TestDatabase;
  let org: string;
  before(async () => {
    db = await createTestDatabase();
    org = await createOrganization(db.sql, 'bounds');
  });
  after(async () => db?.drop());

  test('a body above the bound is stored cut as {raw: text} and marked bodyTruncated; the batch is stored', async () => {
    const big = logRecord(org);
    const small = logRecord(org);
    const request = bigRequest(BOUND + 4096);
    const response = `{"pad":"${'b'.repeat(BOUND + 10)}","usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`;
    const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(big, request, response), binaryRecord(small, '{"messages":[]}', CHAT_RESPONSE)]));
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [2, 0], result.errors.join('; '));
    assert.deepEqual([result.bodiesCut, result.bodiesAsText], [2, 2]);
    const row = (await stored(db, big.requestId))!;
    assert.ok(row, 'the big record is stored');
    const req = JSON.parse(row.req!) as { raw: string };
    assert.deepEqual(Object.keys(req), ['raw']);
    assert.equal(Buffer.byteLength(req.raw), BOUND);
    assert.equal(req.raw, request.slice(0, BOUND));
    const res = JSON.parse(row.res!) as { raw: string };
    assert.equal(res.raw, response.slice(0, BOUND));
    assert.equal(row.extra.bodyTruncated, true);
    // Read from the whole body before it was cut: the usage and the prompt (the prompt bounded as the body is).
    const [tokens] = await db.sql<Array<{ total: number }>>`select total_tokens as total from request_log where id = ${big.requestId}`;
    assert.equal(tokens!.total, 4);
    assert.ok(Buffer.byteLength(row.prompt!) <= BOUND);
    const other = (await stored(db, small.requestId))!;
    assert.equal(other.extra.bodyTruncated, false);
    assert.equal(other.res, CHAT_RESPONSE);
  });

  test('a body cut inside a multi-byte character is cut before it; a body at the bound is kept whole', async () => {
    const cut = logRecord(org);
    const whole = logRecord(org);
    // '{"c":"' is 6 bytes, then 3-byte characters: the bound falls inside one.
    const request = `{"c":"${'日'.repeat(Math.ceil(BOUND / 3) + 2)}"}`;
    const exact = bigRequest(BOUND - bigRequest(0).length);
    assert.equal(Buffer.byteLength(exact), BOUND);
    const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(cut, request, CHAT_RESPONSE), binaryRecord(whole, exact, CHAT_RESPONSE)]));
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [2, 0], result.errors.join('; '));
    const raw = (JSON.parse((await stored(db, cut.requestId))!.req!) as { raw: string }).raw;
    assert.ok(!raw.includes('\ufffd'));
    assert.equal(Buffer.byteLength(raw), 6 + 3 * Math.floor((BOUND - 6) / 3));
    const kept = (await stored(db, whole.requestId))!;
    assert.equal(kept.req, exact);
    assert.equal(kept.extra.bodyTruncated, false);
  });

  test("a JSON records message's body above the bound is stored cut and marked too", async () => {
    const rec = logRecord(org, { prompt_text: 'c'.repeat(BOUND + 100) });
    const result = await ingestRecords(db.sql, org, [JSON.parse(JSON.stringify(rec))]);
    assert.deepEqual([result.stored, result.rejected], [1, 0], result.errors.join('; '));
    const row = (await stored(db, rec.requestId))!;
    const req = JSON.parse(row.req!) as { raw: string };
    assert.equal(Buffer.byteLength(req.raw), BOUND);
    assert.equal(req.raw, JSON.stringify(rec.requestBody).slice(0, BOUND));
    assert.equal(row.extra.bodyTruncated, true);
    assert.equal(Buffer.byteLength(row.prompt!), BOUND);
  });

  test('a refused too-deep body is stored as {raw: text}, and the rest of its batch', async () => {
    const deep = refusedRecord(org);
    const others = [logRecord(org), logRecord(org)];
    const body = deepArrays(100_000);
    const batch = decodeBatch(
      encodeBatch(randomUUID(), [binaryRecord(others[0]!, '{"messages":[]}', CHAT_RESPONSE), binaryRecord(deep, body, null), binaryRecord(others[1]!, '{"messages":[]}', CHAT_RESPONSE)]),
    );
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [3, 0], result.errors.join('; '));
    assert.deepEqual([result.bodiesCut, result.bodiesAsText], [0, 1]);
    const row = await stored(db, deep.requestId);
    assert.ok(row, 'the refused record is stored');
    assert.deepEqual(JSON.parse(row.req!), { raw: body });
    assert.equal(row.res, null);
    for (const r of others) assert.equal((await stored(db, r.requestId))?.res, CHAT_RESPONSE);
  });

  test('a too-deep body the check before the COPY misses is stored as {raw: text} when PostgreSQL refuses it, the others as they are', async () => {
    const deep = logRecord(org);
    const others = [logRecord(org), logRecord(org)];
    const body = deepObjects(60_000);
    const batch = decodeBatch(
      encodeBatch(randomUUID(), [binaryRecord(others[0]!, '{"messages":[]}', CHAT_RESPONSE), binaryRecord(deep, '{"messages":[]}', body), binaryRecord(others[1]!, '{"messages":[]}', CHAT_RESPONSE)]),
    );
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [3, 0], result.errors.join('; '));
    assert.deepEqual([result.bodiesCut, result.bodiesAsText], [0, 1]);
    const row = await stored(db, deep.requestId);
    assert.ok(row, 'the record is stored');
    assert.deepEqual(JSON.parse(row.res!), { raw: body });
    assert.equal(row.req, '{"messages":[]}');
    for (const r of others) assert.equal((await stored(db, r.requestId))?.res, CHAT_RESPONSE);
  });

  test("a JSON records message's too-deep body is stored, not rejected", async () => {
    const rec = refusedRecord(org);
    // As an older proxy sent it: the body parsed, inside the message's JSON.
    const message = `{"records":[${JSON.stringify({ ...rec, requestBody: null }).replace('"requestBody":null', `"requestBody":${deepArrays(30_000)}`)}]}`;
    const { records } = JSON.parse(message) as { records: unknown[] };
    const result = await ingestRecords(db.sql, org, records);
    assert.deepEqual([result.stored, result.rejected], [1, 0], result.errors.join('; '));
    const row = (await stored(db, rec.requestId))!;
    assert.equal(typeof (JSON.parse(row.req!) as { raw: unknown }).raw, 'string');
  });
});

describe('stored body bounds: the checks', () => {
  test('a refused body with a run of brackets is scanned before the COPY; brackets inside strings do not count', () => {
    const deep = Buffer.from(deepArrays(2000));
    assert.deepEqual(boundBody(deep, true), { text: JSON.stringify({ raw: deep.toString() }), cut: false, asText: true });
    // Only a refused request's body is scanned: another goes to PostgreSQL, which says.
    assert.deepEqual(boundBody(deep, false), { text: deep, cut: false, asText: false });
    const quoted = `{"s":"${'['.repeat(5000)}"}`;
    assert.deepEqual(boundBody(quoted, true), { text: quoted, cut: false, asText: false });
    assert.deepEqual(boundBody(null, true), { text: null, cut: false, asText: false });
  });

  test('after a refusal, the deep body alone becomes text; with none deep, both', () => {
    const deep = deepObjects(2000);
    assert.deepEqual(bodiesAsText(['{"a":1}', Buffer.from(deep)]), { bodies: ['{"a":1}', JSON.stringify({ raw: deep })], asText: 1 });
    assert.deepEqual(bodiesAsText(['{"a":1}', null]), { bodies: ['{"raw":"{\\"a\\":1}"}', null], asText: 1 });
    assert.equal(bodiesAsText([null, null]), null);
  });
});

describe('stored body bounds: the control plane acks', () => {
  let db: TestDatabase;
  let server: Server;
  let plane: ControlPlane;
  let ws: WebSocket;
  let org: string;
  const replies: Array<Record<string, unknown>> = [];

  before(async () => {
    db = await createTestDatabase();
    org = await createOrganization(db.sql, 'bounds-link');
    const key = await createApiKey(db.sql, org, 'link');
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    plane = await startControlPlane(server, db.sql, pino({ level: 'silent' }));
    ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/control-plane`, { headers: { authorization: `Bearer ${key.key}` } });
    ws.on('message', (data) => replies.push(JSON.parse(data.toString()) as Record<string, unknown>));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  });
  after(async () => {
    ws?.close();
    await plane?.close();
    await new Promise((resolve) => server?.close(resolve));
    await db?.drop();
  });

  test('a batch with an oversize body and a too-deep refused body is acked with every record stored', async () => {
    const records = [logRecord(org), refusedRecord(org), logRecord(org)];
    const batchId = randomUUID();
    const message = encodeBatch(batchId, [
      binaryRecord(records[0]!, bigRequest(BOUND + 1), CHAT_RESPONSE),
      binaryRecord(records[1]!, deepArrays(100_000), null),
      binaryRecord(records[2]!, '{"messages":[]}', CHAT_RESPONSE),
    ]);
    ws.send(message);
    let reply: Record<string, unknown> | undefined;
    for (let i = 0; i < 600 && !reply; i++) {
      reply = replies.find((r) => r.batchId === batchId);
      if (!reply) await new Promise((r) => setTimeout(r, 25));
    }
    assert.deepEqual(reply, { type: 'records.ack', batchId, stored: 3 });
    assert.equal((await stored(db, records[0]!.requestId))?.extra.bodyTruncated, true);
  });
});
