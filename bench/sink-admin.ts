/**
 * A stand-in for admin that stores nothing, for the observability scenario's `c_sink`: the gateway
 * with the request log on, whose record batches are acknowledged as soon as they arrive, as if admin
 * and PostgreSQL ran on machines of their own. It speaks the control plane's proxy side of the
 * link (shared/controlplane.ts): it sends the key snapshot (the one key `SINK_API_KEY`, its
 * organization `SINK_ORGANIZATION_ID`) and answers every binary record batch with `records.ack`,
 * reading only the batch id and record count of the header (shared/record-batch.ts), so its own
 * CPU per batch is a few microseconds. Prompts are answered 404. Started by bench/run.ts
 * (`sink.ready` with its port on the IPC channel).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { bearerToken, hashApiKey } from '../shared/apikey.ts';
import { readBatchHeader } from '../shared/record-batch.ts';

const apiKey = process.env.SINK_API_KEY;
if (!apiKey) throw new Error('SINK_API_KEY is required');
const organizationId = process.env.SINK_ORGANIZATION_ID ?? randomUUID();
const keys = [{ hash: hashApiKey(apiKey), keyId: randomUUID(), organizationId }];

const server = createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ server, path: '/v1/control-plane', maxPayload: 64 * 1024 * 1024 });
wss.on('connection', (ws, req) => {
  if (bearerToken(req.headers.authorization) !== apiKey) return ws.close(1008, 'bad key');
  ws.send(JSON.stringify({ type: 'keys.snapshot', keys }));
  ws.on('message', (data: Buffer, isBinary) => {
    if (isBinary) {
      const { batchId, count } = readBatchHeader(data);
      ws.send(JSON.stringify({ type: 'records.ack', batchId, stored: count }));
      return;
    }
    const msg = JSON.parse(data.toString()) as { type?: string; reqId?: string };
    if (msg.type === 'prompt.get') ws.send(JSON.stringify({ type: 'prompt.result', reqId: msg.reqId, status: 404, error: 'no prompts in the sink' }));
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ type: 'sink.ready', port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => {
  for (const ws of wss.clients) ws.terminate();
  server.close(() => process.exit(0));
});
