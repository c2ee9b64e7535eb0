/**
 * Binary record batches (shared/record-batch.ts) into `request_log`, against the real PostgreSQL:
 * a record ingested from a binary batch (raw bodies) stores exactly the row the JSON `records`
 * message stores; awkward values survive the COPY text format; a re-sent batch and a row
 * PostgreSQL refuses fall back to INSERT; and the control plane acks binary batches, malformed
 * ones included.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import WebSocket from 'ws';
import { startControlPlane, type ControlPlane } from '../admin/controlplane.ts';
import { ingestDecodedRecords, ingestRecords } from '../admin/ingest.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { copyData, copyField } from '../admin/request-log-copy.ts';
import { jsonbSafeText } from '../admin/jsonb-text.ts';
import { decodeBatch, encodeBatch, encodeRecord, RECORD_BATCH_VERSION } from '../shared/record-batch.ts';
import { HEAD_MEMBERS } from '../shared/record-head.ts';
import type { LogRecord } from '../shared/record.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { logRecord } from './rest-support.ts';

const CHAT_RESPONSE = readFileSync(new URL('./fixtures/providers/openai/chat-completion.json', import.meta.url), 'utf8');

/** A request body text with what jsonb and COPY find awkward: U+0000, lone and paired surrogate escapes, tabs, backslashes. */
const AWKWARD_REQUEST =
  '{"model":"openai/gpt-4o-mini","messages":[{"role":"system","content":"tab\\there\\nnew \\\\ back\\\\slash \\u0000 nul"},' +
  '{"role":"user","content":"lone \\udc00 \\uD800 pair \\ud83d\\ude00 \\uD83D\\uDE00 h\\u00e9llo 日本 \\"q\\" \\\\u0000 literal"}],"max_tokens":64}';

/** The record as an older proxy sent it in a JSON message: bodies parsed, the non-streamed body's usage in `usage`. */
function jsonRecord(rec: LogRecord, requestText: string, responseText: string): LogRecord {
  let responseBody: unknown;
  try {
    responseBody = JSON.parse(responseText);
  } catch {
    responseBody = { raw: responseText };
  }
  const usage = (responseBody as { usage?: LogRecord['usage'] }).usage ?? null;
  // Through JSON text, as the message travelled.
  return JSON.parse(JSON.stringify({ ...rec, requestBody: JSON.parse(requestText), responseBody, usage })) as LogRecord;
}

/** The record's head without bodies (usage null), as an object: an older (version 1) proxy's head. */
function objectHead(rec: LogRecord): string {
  return JSON.stringify({ ...rec, requestBody: undefined, responseBody: undefined, usage: null });
}

/** The same record as a binary batch carries it: the positional head (shared/record-head.ts), raw bodies. */
function binaryRecord(rec: LogRecord, requestText: string, responseText: string): Buffer {
  const head = recordHead({ ...rec, requestBody: undefined, responseBody: undefined, usage: null });
  return encodeRecord(head, Buffer.from(requestText), Buffer.from(responseText));
}

/** A record's positional head text, as the proxy writes it (which always says whether the cache was asked for). */
function recordHead(rec: Partial<LogRecord>): string {
  const full: Partial<LogRecord> = { cacheEnabled: false, ...rec };
  return JSON.stringify(HEAD_MEMBERS.map((m) => full[m]));
}

/** A stored row without its id and its updated_at (now() when stored), as JSON (every column, jsonb as jsonb). */
async function storedRow(db: TestDatabase, id: string): Promise<Record<string, unknown>> {
  const [row] = await db.sql<{ row: Record<string, unknown> }[]>`select to_jsonb(r) - 'id' - 'updated_at' as row from request_log r where id = ${id}`;
  assert.ok(row, `row ${id} stored`);
  return row.row;
}

describe('binary record batches', () => {
  let db: TestDatabase;
  let org: string;
  before(async () => {
    db = await createTestDatabase();
    org = await createOrganization(db.sql, 'binary');
  });
  after(async () => db?.drop());

  const cases: Array<[string, Partial<LogRecord>, string, string]> = [
    ['a chat completion', {}, '{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}', CHAT_RESPONSE],
    [
      'awkward texts and bodies',
      { path: '/v1/chat/completions\t\\x\n\r\\.\\N', userId: 'u\u0000ser\\1', properties: { 'svc-k\tey': 'v\nal\\ue \u0000' }, sessionId: 'sess 日本 😀', error: 'line1\nline2\t\\' },
      AWKWARD_REQUEST,
      '{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}, "note":"\\u0000\\udc00\\ud83d\\ude00"}',
    ],
    ['a response that is not JSON', { status: 200 }, '{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}', '<html>\tbad gateway\\</html>'],
    ['a response without usage (estimated tokens)', {}, '{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Count these words"}]}', '{"model":"gpt-4o-mini","choices":[{"message":{"role":"assistant","content":"Four words here"}}]}'],
  ];

  for (const [name, over, requestText, responseText] of cases) {
    test(`${name}: the binary batch stores the row the JSON message stores`, async () => {
      const base = logRecord(org, over);
      const viaJson = jsonRecord({ ...base, requestId: randomUUID() }, requestText, responseText);
      const viaBinary = { ...base, requestId: randomUUID() };
      const json = await ingestRecords(db.sql, org, [viaJson]);
      assert.deepEqual([json.stored, json.rejected], [1, 0], json.errors.join('; '));
      const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(viaBinary, requestText, responseText)]));
      const binary = await ingestDecodedRecords(db.sql, org, batch.records);
      assert.deepEqual([binary.stored, binary.rejected], [1, 0], binary.errors.join('; '));
      assert.deepEqual(await storedRow(db, viaBinary.requestId), await storedRow(db, viaJson.requestId));
    });
  }

  test('awkward values are stored as text columns hold them (U+0000 as U+FFFD) and escapes as jsonb reads them', async () => {
    const rec = logRecord(org, cases[1]![1]);
    const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(rec, AWKWARD_REQUEST, cases[1]![3])]));
    assert.equal((await ingestDecodedRecords(db.sql, org, batch.records)).stored, 1);
    const [row] = await db.sql<{ path: string; user_id: string; k: string; session_id: string; system: string; user: string; error: unknown }[]>`
      select path, user_id, properties ->> 'svc-k	ey' as k, session_id, request_body -> 'messages' -> 0 ->> 'content' as system,
             request_body -> 'messages' -> 1 ->> 'content' as user, error
      from request_log where id = ${rec.requestId}`;
    assert.equal(row!.path, '/v1/chat/completions\t\\x\n\r\\.\\N');
    assert.equal(row!.user_id, 'u\ufffdser\\1');
    assert.equal(row!.k, 'v\nal\\ue \ufffd');
    assert.equal(row!.session_id, 'sess 日本 😀');
    assert.equal(row!.system, 'tab\there\nnew \\ back\\slash \ufffd nul');
    assert.equal(row!.user, 'lone \ufffd \ufffd pair 😀 😀 héllo 日本 "q" \\u0000 literal');
    assert.equal(row!.error, 'line1\nline2\t\\');
  });

  test('a re-sent batch stores nothing twice; a row PostgreSQL refuses is refused alone', async () => {
    const records = [logRecord(org), logRecord(org), logRecord(org)];
    const encode = (texts: string[]) => decodeBatch(encodeBatch(randomUUID(), records.map((r, i) => binaryRecord(r, '{"messages":[]}', texts[i]!))));
    const first = await ingestDecodedRecords(db.sql, org, encode([CHAT_RESPONSE, CHAT_RESPONSE, CHAT_RESPONSE]).records.slice(0, 2));
    assert.deepEqual([first.stored, first.duplicates], [2, 0]);
    // Re-sent with a third record: COPY fails on the stored ids and the INSERT fallback skips them.
    const again = await ingestDecodedRecords(db.sql, org, encode([CHAT_RESPONSE, CHAT_RESPONSE, CHAT_RESPONSE]).records);
    assert.deepEqual([again.stored, again.duplicates, again.rejected], [1, 2, 0]);
    // The INSERT stores the jsonb texts as COPY does (objects, not jsonb strings of their text).
    const copied = await storedRow(db, records[0]!.requestId);
    const inserted = await storedRow(db, records[2]!.requestId);
    for (const column of ['request_body', 'response_body', 'properties', 'extra', 'prompt_tokens', 'cost_usd']) assert.deepEqual(inserted[column], copied[column], column);
    assert.equal(typeof inserted.response_body, 'object');
    // A token count past the integer column's range (2^31 - 1): only that row is refused.
    const fresh = [logRecord(org), logRecord(org)];
    const huge = '{"usage":{"prompt_tokens":3000000000,"completion_tokens":1,"total_tokens":3000000001}}';
    const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(fresh[0]!, '{"messages":[]}', huge), binaryRecord(fresh[1]!, '{"messages":[]}', CHAT_RESPONSE)]));
    const mixed = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([mixed.stored, mixed.rejected], [1, 1]);
    assert.match(mixed.errors.join(), /SQLSTATE 22003/);
  });

  test('raw bodies are stored as the text that arrived: member order, spacing and number spellings kept', async () => {
    const rec = logRecord(org);
    const request = '{"model":"gpt-4o-mini", "messages":[{"role":"user","content":"hi"}],"temperature":1.0}';
    const response = '{"z":1,"a":2,"n":1e200000,"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}';
    const batch = decodeBatch(encodeBatch(randomUUID(), [binaryRecord(rec, request, response)]));
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [1, 0]);
    const [row] = await db.sql<Array<{ req: string; res: string; tokens: number }>>`
      select request_body::text as req, response_body::text as res, total_tokens as tokens from request_log where id = ${rec.requestId}`;
    assert.equal(row!.req, request);
    assert.equal(row!.res, response);
    assert.equal(row!.tokens, 4);
  });

  test("a coding agent's large request is stored byte for byte; a body of invalid UTF-8 is stored with U+FFFD, not refused", async () => {
    const big = readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request.json', import.meta.url));
    // Valid JSON whose string holds the bytes FF FE: no UTF-8, which PostgreSQL would refuse as it is.
    const invalid = Buffer.concat([Buffer.from('{"messages":[{"role":"user","content":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}]}')]);
    const recs = [logRecord(org), logRecord(org)];
    const head = (rec: LogRecord) => recordHead({ ...rec, requestBody: undefined, responseBody: undefined, usage: null });
    const batch = decodeBatch(encodeBatch(randomUUID(), [encodeRecord(head(recs[0]!), big, Buffer.from(CHAT_RESPONSE)), encodeRecord(head(recs[1]!), invalid, Buffer.from(CHAT_RESPONSE))]));
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [2, 0], result.errors.join('; '));
    const rows = await db.sql<Array<{ id: string; req: string; prompt: string }>>`
      select id, request_body::text as req, prompt_text as prompt from request_log where id in ${db.sql([recs[0]!.requestId, recs[1]!.requestId])}`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(recs[0]!.requestId)!.req, big.toString('utf8'));
    assert.equal(byId.get(recs[1]!.requestId)!.req, '{"messages":[{"role":"user","content":"a\ufffd\ufffdb"}]}');
    assert.equal(byId.get(recs[1]!.requestId)!.prompt, 'a\ufffd\ufffdb');
  });

  test('a head that is not JSON or not a record is rejected, the others stored', async () => {
    const good = logRecord(org);
    const short = JSON.stringify(JSON.parse(recordHead(logRecord(org))).slice(0, -1));
    const batch = decodeBatch(encodeBatch(randomUUID(), [encodeRecord('{not json', null, null), encodeRecord('[1]', null, null), encodeRecord(short, null, null), binaryRecord(good, '{}', CHAT_RESPONSE)]));
    const result = await ingestDecodedRecords(db.sql, org, batch.records);
    assert.deepEqual([result.stored, result.rejected], [1, 3]);
    assert.match(result.errors.join('\n'), new RegExp(`head is unreadable: a positional record head has ${HEAD_MEMBERS.length} members, this one ${HEAD_MEMBERS.length - 1}`));
  });

  test('a version-1 batch (an older proxy\'s, object heads) stores the row a positional head stores', async () => {
    const base = logRecord(org, { sessionId: 's-1', removedMembers: ['a.b'], wireFormat: 'openai-chat', cacheEnabled: true });
    const positional = { ...base, requestId: randomUUID() };
    const older = { ...base, requestId: randomUUID() };
    const v1 = Buffer.from(encodeBatch(randomUUID(), [encodeRecord(objectHead(older), Buffer.from('{"messages":[]}'), Buffer.from(CHAT_RESPONSE))]));
    v1[0] = 1;
    const v2 = encodeBatch(randomUUID(), [binaryRecord(positional, '{"messages":[]}', CHAT_RESPONSE)]);
    assert.equal(v2[0], RECORD_BATCH_VERSION);
    for (const message of [v1, v2]) {
      const result = await ingestDecodedRecords(db.sql, org, decodeBatch(message).records);
      assert.deepEqual([result.stored, result.rejected], [1, 0], result.errors.join('; '));
    }
    const a = await storedRow(db, older.requestId);
    const b = await storedRow(db, positional.requestId);
    assert.deepEqual({ ...b, request_id: null }, { ...a, request_id: null });
    assert.equal(b.session_id, 's-1');
  });
});

/** All of the COPY data of `rows`, as text. */
const copyText = (rows: Parameters<typeof copyData>[0]): string => Buffer.concat(copyData(rows)).toString();

describe('COPY text format', () => {
  test('escapes backslash, tab, newline, CR; NULL, booleans, dates, numbers; U+0000 as U+FFFD', () => {
    assert.equal(copyField(null), '\\N');
    assert.equal(copyField(undefined), '\\N');
    assert.equal(copyField('\\N'), '\\\\N');
    assert.equal(copyField('a\tb\nc\rd\\e\u0000f'), 'a\\tb\\nc\\rd\\\\e\ufffdf');
    assert.equal(copyField('日本 😀'), '日本 😀');
    assert.equal(copyField(true), 't');
    assert.equal(copyField(false), 'f');
    assert.equal(copyField(0.25), '0.25');
    assert.equal(copyField(new Date(0)), '1970-01-01T00:00:00.000Z');
    assert.equal(copyText([['a', null], ['\\.', 1]]), 'a\t\\N\n\\\\.\t1\n');
  });

  test('a value given as bytes is escaped exactly as the same value given as text, wherever it sits in the row', () => {
    const values = ['', 'plain', '\\', 'a\tb\nc\rd\\e\u0000f', '\n\n\\\\\t', '日本 😀\\u00e9\n', '{"a":"b\\\\c"}\n'.repeat(50), '\u0000' + 'x'.repeat(3000) + '\r'];
    for (const value of values) {
      for (const row of [[Buffer.from(value)], ['id', Buffer.from(value), null], [Buffer.from(value), Buffer.from(value), 7], ['a', 'b', Buffer.from(value)]]) {
        const asText = row.map((v) => (Buffer.isBuffer(v) ? v.toString() : v));
        assert.equal(copyText([row, row]), copyText([asText, asText]), JSON.stringify(value));
      }
    }
    // A value's bytes reach the data only once the data is made: changing the value afterwards changes nothing.
    const body = Buffer.from('{"k":"v\\n"}');
    const data = copyText([['x', body]]);
    body.fill(0x20);
    assert.equal(data, 'x\t{"k":"v\\\\n"}\n');
  });

  test('the data comes in chunks of whole rows, about 256 KiB each; a longer row is a chunk alone', () => {
    const row = (n: number) => ['r' + n, Buffer.from('{"t":"' + 'x'.repeat(100_000) + '\\n"}'), null];
    const rows = [row(1), row(2), row(3), ['small', 'v'], [Buffer.from('y'.repeat(600_000))], ['last', 'w']];
    const chunks = copyData(rows);
    assert.deepEqual(chunks.map((c) => c.toString().split('\n').length - 1), [3, 2, 1]);
    assert.equal(Buffer.concat(chunks).toString(), copyText(rows.slice(0, 3)) + copyText(rows.slice(3)));
    for (const chunk of chunks) assert.equal(chunk.at(-1), 0x0a);
  });

  test('short and long values (loop and native paths) escape alike: with and without characters to escape', () => {
    // The same value at lengths on both sides of the loop/native threshold, each character kind alone and together.
    const regexEscape = (s: string): string => s.replace(/[\\\t\n\r\0]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\ufffd' })[c]!);
    for (const pad of [0, 10, 62, 63, 64, 65, 500]) {
      for (const special of ['', '\\', '\t', '\n', '\r', '\u0000', '\\\\n\t\r\n\\', '日本\n😀']) {
        const value = 'x'.repeat(pad) + special + '{"a": "b"}'.repeat(pad % 7);
        assert.equal(copyField(value), regexEscape(value), JSON.stringify(value));
        assert.equal(copyField(special + 'y'.repeat(pad)), regexEscape(special + 'y'.repeat(pad)));
      }
    }
    const plain = 'z'.repeat(100);
    assert.equal(copyField(plain), plain);
    const pretty = JSON.stringify({ a: 'b\\c', d: [1, 2] }, null, 2);
    assert.equal(copyField(pretty), regexEscape(pretty));
  });

  test('jsonb-safe text: U+0000 and lone surrogate escapes replaced, pairs and escaped backslashes kept', () => {
    assert.equal(jsonbSafeText('"\\u0000 \\ud800 \\uDC00 \\ud83d\\ude00 \\\\u0000 \\\\\\u0000"'), '"\\ufffd \\ufffd \\ufffd \\ud83d\\ude00 \\\\u0000 \\\\\\ufffd"');
    assert.equal(jsonbSafeText('{"a":1}'), '{"a":1}');
  });
});

describe('control plane: binary batches', () => {
  let db: TestDatabase;
  let server: Server;
  let plane: ControlPlane;
  let ws: WebSocket;
  let org: string;
  const replies: Array<Record<string, unknown>> = [];

  before(async () => {
    db = await createTestDatabase();
    org = await createOrganization(db.sql, 'link');
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

  /** Sends a message and waits for the ack or nack of `batchId`. */
  async function send(message: Buffer | string, batchId: string): Promise<Record<string, unknown>> {
    ws.send(message);
    for (let i = 0; i < 200; i++) {
      const reply = replies.find((r) => r.batchId === batchId);
      if (reply) return reply;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no answer for batch ${batchId}`);
  }

  test('a binary batch is acked after commit, a re-sent one stores nothing, a JSON one still works', async () => {
    const records = [logRecord(org), logRecord(org)];
    const batchId = randomUUID();
    const message = encodeBatch(batchId, records.map((r) => binaryRecord(r, '{"messages":[]}', CHAT_RESPONSE)));
    assert.deepEqual(await send(message, batchId), { type: 'records.ack', batchId, stored: 2 });
    const [{ count }] = await db.sql<{ count: string }[]>`select count(*) from request_log where id in ${db.sql(records.map((r) => r.requestId))}`;
    assert.equal(count, '2');
    replies.length = 0;
    assert.deepEqual(await send(message, batchId), { type: 'records.ack', batchId, stored: 0 });
    const jsonId = randomUUID();
    assert.deepEqual(await send(JSON.stringify({ type: 'records', batchId: jsonId, records: [logRecord(org)] }), jsonId), { type: 'records.ack', batchId: jsonId, stored: 1 });
  });

  test('a malformed binary batch with a readable id is acked with 0 stored and its records counted rejected', async () => {
    const batchId = randomUUID();
    const whole = encodeBatch(batchId, [binaryRecord(logRecord(org), '{}', CHAT_RESPONSE), binaryRecord(logRecord(org), '{}', CHAT_RESPONSE)]);
    const rejectedBefore = plane.stats().recordsRejected;
    assert.deepEqual(await send(whole.subarray(0, whole.length - 3), batchId), { type: 'records.ack', batchId, stored: 0 });
    assert.equal(plane.stats().recordsRejected, rejectedBefore + 2);
  });

  test('a batch of a newer layout version is refused with a nack, so the proxy keeps its records and retries', async () => {
    const batchId = randomUUID();
    const newer = Buffer.from(encodeBatch(batchId, [binaryRecord(logRecord(org), '{}', CHAT_RESPONSE)]));
    newer[0] = RECORD_BATCH_VERSION + 1;
    const reply = await send(newer, batchId);
    assert.equal(reply.type, 'records.nack');
    assert.match(String(reply.error), new RegExp(`version ${RECORD_BATCH_VERSION + 1} not supported`));
  });
});
