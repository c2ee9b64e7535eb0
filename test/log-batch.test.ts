/**
 * The log queue's batches (proxy/log-batch.ts): records written in place into the batch message,
 * the message after the queue's bounds dropped records, records larger than a batch buffer, the
 * byte bound per batch, and buffers reused only once admin acknowledged their batch.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { BATCH_BUFFER_BYTES } from '../proxy/log-batch.ts';
import { LogQueue } from '../proxy/log-queue.ts';
import { decodeBatch, recordSize } from '../shared/record-batch.ts';

const heads = (message: Buffer) => decodeBatch(message).records.map((r) => JSON.parse(r.head.toString()) as unknown);

test('log batch: a batch whose oldest records were dropped is sent as a whole batch of the rest', () => {
  const sent: Buffer[] = [];
  let up = false;
  const q = new LogQueue({ maxRecords: 3, maxBytes: 1 << 20, batchSize: 10 }, (m) => (up ? (sent.push(Buffer.from(m)), true) : false));
  for (let i = 0; i < 5; i++) q.push({ i }, Buffer.from(`{"n":${i}}`), i % 2 ? Buffer.from(`{"answer":${i}}`) : null);
  q.flush();
  assert.equal(sent.length, 0, 'the link is down');
  assert.deepEqual(q.getStats(), { ...q.getStats(), queued: 3, dropped: 2 });
  up = true;
  q.flush();
  assert.equal(sent.length, 1);
  const batch = decodeBatch(sent[0]!);
  assert.deepEqual(heads(sent[0]!), [{ i: 2 }, { i: 3 }, { i: 4 }]);
  assert.deepEqual(batch.records.map((r) => r.requestBody?.toString()), ['{"n":2}', '{"n":3}', '{"n":4}']);
  assert.deepEqual(batch.records.map((r) => r.responseBody?.toString() ?? null), [null, '{"answer":3}', null]);
  assert.equal(q.getStats().queuedBytes, 0);
});

test('log batch: a record larger than a batch buffer travels in a batch of its own', () => {
  const sent: Buffer[] = [];
  const q = new LogQueue({ maxRecords: 100, maxBytes: 64 << 20, batchSize: 10 }, (m) => (sent.push(Buffer.from(m)), true));
  const big = Buffer.from(JSON.stringify({ text: 'x'.repeat(BATCH_BUFFER_BYTES + 10) }));
  q.push({ i: 0 });
  q.push({ i: 1 }, big);
  q.push({ i: 2 });
  q.flush();
  assert.deepEqual(sent.map(heads), [[{ i: 0 }], [{ i: 1 }], [{ i: 2 }]]);
  assert.ok(decodeBatch(sent[1]!).records[0]!.requestBody!.equals(big));
});

test('log batch: maxBatchBytes closes a batch; a closed batch goes out on an ack\'s flush', () => {
  const sent: Buffer[] = [];
  const one = recordSize(Buffer.byteLength(JSON.stringify({ pad: 'p'.repeat(30), i: 0 })), null, null);
  const q = new LogQueue({ maxRecords: 100, maxBytes: 1 << 20, batchSize: 100, maxBatchBytes: 2 * one + 1 }, (m) => (sent.push(Buffer.from(m)), true));
  for (let i = 0; i < 4; i++) q.push({ pad: 'p'.repeat(30), i });
  q.flush(true);
  assert.deepEqual(sent.map((m) => heads(m).length), [2], 'the full batch only');
  q.flush();
  assert.deepEqual(sent.map((m) => heads(m).length), [2, 2]);
});

test('log batch: a buffer is reused only after its batch was acknowledged', () => {
  const views: Buffer[] = [];
  const q = new LogQueue({ maxRecords: 1000, maxBytes: 1 << 20, batchSize: 2, maxInFlight: 2 }, (m) => (views.push(m), true));
  q.push({ i: 0 });
  q.push({ i: 1 });
  q.flush();
  const first = decodeBatch(views[0]!).batchId;
  q.ack(first);
  q.push({ i: 2 });
  q.push({ i: 3 });
  q.push({ i: 4 });
  q.push({ i: 5 });
  q.flush();
  assert.equal(views.length, 3);
  assert.deepEqual(heads(views[1]!), [{ i: 2 }, { i: 3 }]);
  assert.deepEqual(heads(views[2]!), [{ i: 4 }, { i: 5 }], 'two batches in flight at once keep their own bytes');
  assert.equal(q.getStats().inFlight, 4);
});

test('log batch: a backlog holds about its records\' bytes, not a standard buffer per batch', () => {
  const q = new LogQueue({ maxRecords: 10_000, maxBytes: 64 << 20, batchSize: 10 }, () => false);
  for (let i = 0; i < 45; i++) q.push([i, 'x'.repeat(100)]);
  const s = q.getStats();
  assert.equal(s.queued, 45);
  // Five batches: the first full one (sent next) and the open last one keep standard buffers; the three between are shrunk.
  assert.ok(s.bufferBytes < 2 * BATCH_BUFFER_BYTES + 3 * 2000, `${s.bufferBytes} bytes held`);
  assert.ok(s.bufferBytes >= 2 * BATCH_BUFFER_BYTES);
  const sent: Buffer[] = [];
  const up = new LogQueue({ maxRecords: 10_000, maxBytes: 64 << 20, batchSize: 10, maxInFlight: 10 }, (m) => (sent.push(Buffer.from(m)), true));
  for (let i = 0; i < 45; i++) up.push([i, 'x'.repeat(100)]);
  up.flush();
  assert.deepEqual(sent.flatMap(heads).map((h) => (h as number[])[0]), Array.from({ length: 45 }, (_, i) => i), 'shrunk batches send every record, in order');
});
