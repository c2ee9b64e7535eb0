/**
 * Bounds of what a proxy's control-plane link can make admin hold (admin/controlplane.ts,
 * admin/key-usage.ts), and the proxy's side of the message bound (proxy/log-queue.ts,
 * proxy/controlplane.ts):
 * - `keys.used` ids that are not keys of the link's organization are ignored (counted), so a
 *   flood of random ids leaves admin's pending marks at the organization's keys; a hard cap per
 *   organization bounds the marks whatever their source;
 * - a frame above MAX_CONTROL_PLANE_MESSAGE_BYTES closes the link with 1009 and admin goes on
 *   (a new link stores a normal batch);
 * - the proxy never sends a batch above the bound (a record too large for it is dropped, counted),
 *   and a link closed with 1009 drops the largest batch in flight instead of re-sending it forever.
 * Uses its own database (test/support/db.ts); restarts nothing. Run:
 * node --import tsx --test test/controlplane-link-bounds.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { startControlPlane, type ControlPlane } from '../admin/controlplane.ts';
import { startKeyUsage, type KeyUsage } from '../admin/key-usage.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey, revokeApiKey } from '../admin/resources/api-keys/store.ts';
import { MAX_CONTROL_PLANE_MESSAGE_BYTES } from '../shared/controlplane.ts';
import { BATCH_HEADER_BYTES, decodeBatch, encodeBatch, encodeRecord, readBatchHeader } from '../shared/record-batch.ts';
import { HEAD_MEMBERS } from '../shared/record-head.ts';
import type { LogRecord } from '../shared/record.ts';
import { ControlPlaneClient } from '../proxy/controlplane.ts';
import { LogQueue } from '../proxy/log-queue.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { logRecord } from './rest-support.ts';
import { waitFor } from './support/stack.ts';

const silent = pino({ level: 'silent' });

/** A record as a binary batch carries it (positional head, raw bodies). */
function binaryRecord(rec: LogRecord): Buffer {
  const full: Partial<LogRecord> = { cacheEnabled: false, ...rec, requestBody: undefined, responseBody: undefined, usage: null };
  return encodeRecord(JSON.stringify(HEAD_MEMBERS.map((m) => full[m])), Buffer.from('{"messages":[]}'), Buffer.from('{"id":"x"}'));
}

describe('admin: bounds of a control-plane link', () => {
  let db: TestDatabase;
  let server: Server;
  let plane: ControlPlane;
  let usage: KeyUsage;
  let url: string;
  let org: string;
  let linkKey: { id: string; key: string };
  let otherKeyId: string;
  let foreignKeyId: string;
  /** Every id admin handed to the key-usage recorder, by organization. */
  const marked: Array<[string, string]> = [];

  before(async () => {
    db = await createTestDatabase();
    org = await createOrganization(db.sql, 'bounds');
    const other = await createOrganization(db.sql, 'other');
    linkKey = await createApiKey(db.sql, org, 'link');
    otherKeyId = (await createApiKey(db.sql, org, 'second')).id;
    foreignKeyId = (await createApiKey(db.sql, other, 'foreign')).id;
    // Flushes never come during the test: what is marked stays pending.
    usage = startKeyUsage(db.sql, { warn: () => {} }, { flushIntervalMs: 3_600_000 });
    const recording: Pick<KeyUsage, 'mark'> = {
      mark(organizationId, keyIds) {
        for (const id of keyIds) marked.push([organizationId, id]);
        usage.mark(organizationId, keyIds);
      },
    };
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    plane = await startControlPlane(server, db.sql, silent, recording);
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/control-plane`;
  });
  after(async () => {
    await plane?.close();
    await usage?.close(100);
    await new Promise((resolve) => server?.close(resolve));
    await db?.drop();
  });

  /** Opens a link and waits for its key snapshot; `replies` collects every JSON message admin sends. */
  async function openLink(): Promise<{ ws: WebSocket; replies: Array<Record<string, unknown>>; closed: Promise<number> }> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${linkKey.key}` } });
    const replies: Array<Record<string, unknown>> = [];
    ws.on('message', (data) => replies.push(JSON.parse(data.toString()) as Record<string, unknown>));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('error', () => {});
    await waitFor(() => replies.some((r) => r.type === 'keys.snapshot'), 10_000);
    return { ws, replies, closed };
  }

  /** Sends a batch of one record and waits for its ack (admin handles a link's messages in order). */
  async function storeOne(ws: WebSocket, replies: Array<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const rec = logRecord(org);
    const batchId = randomUUID();
    ws.send(encodeBatch(batchId, [binaryRecord(rec)]));
    await waitFor(() => replies.some((r) => r.batchId === batchId), 10_000);
    const reply = replies.find((r) => r.batchId === batchId)!;
    if (reply.type === 'records.ack') {
      const [row] = await db.sql<{ count: string }[]>`select count(*) from request_log where id = ${rec.requestId}`;
      assert.equal(row!.count, '1', 'the record is stored');
    }
    return reply;
  }

  test('keys.used: only ids of keys of the link organization are kept, the rest ignored and counted', async () => {
    const { ws, replies } = await openLink();
    try {
      for (let round = 0; round < 5; round++) {
        const junk = Array.from({ length: 9_998 }, () => randomUUID());
        ws.send(JSON.stringify({ type: 'keys.used', keyIds: [...junk, otherKeyId.toUpperCase(), foreignKeyId] }));
      }
      assert.equal((await storeOne(ws, replies)).type, 'records.ack');
      const fromLinks = marked.filter(([o]) => o === org).map(([, id]) => id.toLowerCase());
      assert.deepEqual([...new Set(fromLinks)].sort(), [linkKey.id, otherKeyId].sort(), 'only the organization\'s own keys are marked');
      assert.equal(marked.some(([, id]) => id === foreignKeyId), false, "another organization's key is not marked");
      assert.equal(usage.pendingCount(org), 2, 'pending holds the two keys, not the 50,000 ids sent');
      assert.equal(plane.stats().keysUsedIgnored, 5 * 9_999, 'ignored ids are counted');
    } finally {
      ws.close();
    }
  });

  test('keys.used: a key created after the link opened is accepted, a revoked one no longer', async () => {
    const { ws, replies } = await openLink();
    try {
      const fresh = await createApiKey(db.sql, org, 'fresh');
      await waitFor(() => replies.some((r) => r.type === 'keys.upsert'), 10_000);
      marked.length = 0;
      ws.send(JSON.stringify({ type: 'keys.used', keyIds: [fresh.id] }));
      await storeOne(ws, replies);
      assert.deepEqual(marked, [[org, fresh.id]]);
      await revokeApiKey(db.sql, org, fresh.id);
      await waitFor(() => replies.some((r) => r.type === 'keys.revoke'), 10_000);
      marked.length = 0;
      ws.send(JSON.stringify({ type: 'keys.used', keyIds: [fresh.id] }));
      await storeOne(ws, replies);
      assert.deepEqual(marked, []);
    } finally {
      ws.close();
    }
  });

  test('key usage: pending marks per organization stop at the hard cap', async () => {
    const capped = startKeyUsage(db.sql, { warn: () => {} }, { flushIntervalMs: 3_600_000, maxPendingPerOrganization: 1_000 });
    try {
      capped.mark(org, Array.from({ length: 5_000 }, () => randomUUID()));
      assert.equal(capped.pendingCount(org), 1_000);
      capped.mark(foreignKeyId, [randomUUID()]);
      assert.equal(capped.pendingCount(foreignKeyId), 1, 'another organization has its own room');
      capped.mark(org, [otherKeyId]);
      assert.equal(capped.pendingCount(org), 1_000);
    } finally {
      await capped.close(100);
    }
  });

  test('a frame above the bound closes the link with 1009; admin goes on and stores a normal batch', async () => {
    const first = await openLink();
    const oversize = Buffer.alloc(MAX_CONTROL_PLANE_MESSAGE_BYTES + 1);
    encodeBatch(randomUUID(), []).copy(oversize);
    first.ws.send(oversize);
    const code = await Promise.race([first.closed, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
    first.ws.terminate();
    assert.equal(code, 1009);
    const second = await openLink();
    try {
      assert.equal((await storeOne(second.ws, second.replies)).type, 'records.ack');
      // A batch just under the bound is still accepted (acked, even if its padding does not decode).
      const id = randomUUID();
      const atBound = Buffer.alloc(MAX_CONTROL_PLANE_MESSAGE_BYTES);
      encodeBatch(id, []).copy(atBound);
      second.ws.send(atBound);
      await waitFor(() => second.replies.some((r) => r.batchId === id), 10_000);
      assert.equal(second.ws.readyState, WebSocket.OPEN);
    } finally {
      second.ws.close();
    }
  });
});

describe('proxy: batches stay under the bound, and 1009 does not loop', () => {
  test('a record too large for a message keeps its head with its bodies cut to fit (bodyTruncated); batches close under the bound; only a head too large alone is dropped', () => {
    const sent: Buffer[] = [];
    const sentBytes: number[] = [];
    const messages: Buffer[] = [];
    const q = new LogQueue({ maxRecords: 100, maxBytes: 1 << 30, batchSize: 100, maxBatchBytes: 1 << 30, maxInFlight: 10 }, (m) => (sent.push(Buffer.from(m.subarray(0, BATCH_HEADER_BYTES))), sentBytes.push(m.length), messages.push(Buffer.from(m)), true));
    const head = (tag: string): unknown[] => HEAD_MEMBERS.map((m) => (m === 'requestId' ? tag : null));
    q.push(head('small'), Buffer.from('{}'), null);
    q.push(head('huge'), Buffer.alloc(MAX_CONTROL_PLANE_MESSAGE_BYTES, 0x61), Buffer.from('{"usage":{}}'));
    const eight = Buffer.alloc(8 * 1024 * 1024);
    q.push(head('a'), eight, null);
    q.push(head('b'), eight, null);
    q.push(head('c'), eight, null);
    q.push(['x'.repeat(MAX_CONTROL_PLANE_MESSAGE_BYTES)], null, null);
    q.flush();
    const stats = q.getStats();
    assert.equal(stats.oversize, 1, 'only the head too large on its own');
    assert.equal(stats.dropped, 1);
    assert.equal(stats.sent, 5);
    for (const bytes of sentBytes) assert.ok(bytes <= MAX_CONTROL_PLANE_MESSAGE_BYTES, `a message of ${bytes} bytes is within the bound`);
    assert.equal(sent.reduce((n, h) => n + readBatchHeader(h).count, 0), 5);
    const records = messages.flatMap((m) => decodeBatch(m).records);
    const huge = records.find((r) => (JSON.parse(r.head.toString()) as unknown[])[HEAD_MEMBERS.indexOf('requestId')] === 'huge')!;
    assert.equal((JSON.parse(huge.head.toString()) as unknown[])[HEAD_MEMBERS.indexOf('bodyTruncated')], true);
    assert.equal(huge.responseBody?.toString(), '{"usage":{}}', 'the answer kept whole');
    assert.ok(huge.requestBody!.length > 0 && huge.requestBody!.length < MAX_CONTROL_PLANE_MESSAGE_BYTES, 'the request body cut');
  });

  test('admin closing the link with 1009 drops the largest batch in flight (counted) instead of re-sending it forever', async () => {
    // A stand-in admin with a smaller bound than the proxy's (an admin of another version).
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 64 * 1024 });
    await new Promise((resolve) => wss.once('listening', resolve));
    let links = 0;
    const received: number[] = [];
    wss.on('connection', (ws) => {
      links++;
      ws.on('error', () => {});
      ws.on('message', (data, isBinary) => {
        if (!isBinary) return;
        const buf = data as Buffer;
        received.push(buf.length);
        ws.send(JSON.stringify({ type: 'records.ack', batchId: readBatchHeader(buf).batchId, stored: 1 }));
      });
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [] }));
    });
    const client = ControlPlaneClient.start({
      url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/control-plane`,
      apiKey: 'k',
      queue: { maxRecords: 100, maxBytes: 1 << 30, batchSize: 1 },
      flushIntervalMs: 10,
      logger: silent,
      backoffStartMs: 5,
      backoffCapMs: 20,
    });
    try {
      await waitFor(() => client.ready, 5_000);
      client.queue.push(['too big for this admin'], Buffer.alloc(100 * 1024), null);
      await waitFor(() => client.queue.getStats().dropped === 1, 5_000);
      client.queue.push(['fits'], Buffer.from('{}'), null);
      await waitFor(() => client.queue.getStats().acknowledged === 1, 5_000);
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(links <= 3, `the proxy reconnected ${links} times`);
      assert.equal(client.queue.getStats().oversize, 1);
      assert.ok(received.every((n) => n < 64 * 1024));
    } finally {
      await client.close(1_000);
      for (const ws of wss.clients) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
    }
  });
});
