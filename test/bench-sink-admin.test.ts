/**
 * bench/sink-admin.ts, the observability scenario's admin stand-in: it refuses a wrong key, sends
 * the key snapshot, and acknowledges a record batch with its id and record count; and a real proxy
 * linked to it logs requests whose batches it acknowledges (the queue drains).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { generateApiKey, hashApiKey } from '../shared/apikey.ts';
import { encodeBatch, encodeRecord } from '../shared/record-batch.ts';
import { startProcess, stopProcess, waitFor, writeConfig, type Started } from './support/stack.ts';

const key = generateApiKey();
let sink: Started;
before(async () => {
  sink = await startProcess('bench/sink-admin.ts', { SINK_API_KEY: key, SINK_ORGANIZATION_ID: 'org-1' }, 'sink.ready');
});
after(() => stopProcess(sink));

/** The next message on `ws` as JSON. */
const next = (ws: WebSocket) => new Promise<Record<string, unknown>>((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()))));

test('the sink refuses a wrong key, sends the snapshot, acks a batch with its id and count', async () => {
  const url = `ws://127.0.0.1:${sink.port}/v1/control-plane`;
  const bad = new WebSocket(url, { headers: { authorization: 'Bearer sk-svc-wrong' } });
  const code = await new Promise<number>((resolve) => bad.once('close', resolve));
  assert.equal(code, 1008);
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  const snapshot = await next(ws);
  assert.deepEqual(snapshot.type, 'keys.snapshot');
  assert.deepEqual((snapshot.keys as Array<Record<string, string>>).map((k) => [k.hash, k.organizationId]), [[hashApiKey(key), 'org-1']]);
  const batchId = randomUUID();
  ws.send(encodeBatch(batchId, [encodeRecord('[1]', null, null), encodeRecord('[2]', null, null)]));
  assert.deepEqual(await next(ws), { type: 'records.ack', batchId, stored: 2 });
  ws.close();
});

test('a proxy linked to the sink logs its requests and its queue drains', async () => {
  const stub = await startProcess('test/support/stub-upstream.ts', { STUB_PORT: '0' }, 'stub.ready');
  const config = writeConfig({ svc: { features: 'observability' }, providers: { openai: { 'base-url': `http://127.0.0.1:${stub.port}/v1` } } });
  const proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', OPENAI_API_KEY: 'sk-test', SVC_CONTROL_PLANE_API_KEY: key, SVC_CONTROL_PLANE_URL: `ws://127.0.0.1:${sink.port}/v1/control-plane` }, 'proxy.ready', ['--config', config]);
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    await waitFor(async () => ((await (await fetch(`${base}/health`)).json()) as { controlPlane: { ready: boolean } }).controlPlane.ready, 5_000, 100);
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${base}/ai/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
    let queue = { sent: 0, acknowledged: 0, queued: 1 };
    await waitFor(async () => {
      queue = ((await (await fetch(`${base}/health`)).json()) as { logQueue: typeof queue }).logQueue;
      return queue.acknowledged >= 3;
    }, 5_000, 100).catch(() => undefined);
    assert.deepEqual([queue.sent, queue.acknowledged, queue.queued], [3, 3, 0]);
  } finally {
    await stopProcess(proxy);
    await stopProcess(stub);
  }
});
