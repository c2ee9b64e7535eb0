/**
 * The proxy's control-plane client once admin closed the link with KEY_GONE (4001) and refuses it
 * since: /health's link state says it is down and why (and that the held keys were dropped), and the log records the full queue drops
 * are reported at error level once per report interval, not once per record. An in-process
 * WebSocket server plays admin.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { ControlPlaneClient } from '../proxy/controlplane.ts';
import { KEY_GONE_CLOSE_CODE } from '../shared/controlplane.ts';
import { waitFor } from './support/stack.ts';

type Line = { level: string; fields: Record<string, unknown>; msg: string };

/** A logger that keeps what it is given. */
function captureLogger(lines: Line[]): Logger {
  const at = (level: string) => (a: unknown, b?: string) => lines.push(typeof a === 'string' ? { level, fields: {}, msg: a } : { level, fields: a as Record<string, unknown>, msg: b ?? '' });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') } as unknown as Logger;
}

let refuse = false;
const admin = new WebSocketServer({ port: 0, host: '127.0.0.1', verifyClient: (_info, done) => (refuse ? done(false, 401) : done(true)) });
admin.on('connection', (ws) => {
  ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [] }));
  // The key is revoked right after: admin closes the link and refuses it from then on.
  setTimeout(() => {
    refuse = true;
    ws.close(KEY_GONE_CLOSE_CODE, 'API key revoked');
  }, 50);
});
before(() => new Promise<void>((resolve) => (admin.address() ? resolve() : admin.once('listening', () => resolve()))));
after(() => admin.close());

test('after KEY_GONE: /health says the link is down and why; dropped records are logged at error level once per interval', async () => {
  const lines: Line[] = [];
  const client = ControlPlaneClient.start({
    url: `ws://127.0.0.1:${(admin.address() as AddressInfo).port}`,
    apiKey: 'k',
    queue: { maxRecords: 2, maxBytes: 1 << 20, batchSize: 10 },
    flushIntervalMs: 20,
    logger: captureLogger(lines),
    backoffStartMs: 20,
    backoffCapMs: 50,
    dropReportIntervalMs: 300,
  });
  try {
    await waitFor(() => client.keyRevoked && !client.health().connected && client.health().reconnectAttempts >= 2, 5_000);
    const h = client.health();
    assert.equal(h.connected, false);
    assert.equal(h.ready, false, 'the held keys are dropped');
    assert.equal(h.keyRevoked, true);
    assert.ok(lines.some((l) => l.level === 'error' && /SVC_CONTROL_PLANE_API_KEY[\s\S]*new/.test(l.msg)), 'one error line asks for a new key');
    assert.match(h.downReason ?? '', /revoked or deleted.*4001.*API key revoked/, JSON.stringify(h));

    for (let i = 0; i < 50; i++) client.queue.push({ n: i });
    await waitFor(() => lines.some((l) => l.level === 'error' && /^log records dropped/.test(l.msg)), 2_000);
    await new Promise((r) => setTimeout(r, 700));
    const reports = lines.filter((l) => l.level === 'error' && /^log records dropped/.test(l.msg));
    assert.equal(reports.length, 1, 'one report for the burst, not one per record');
    assert.equal(reports[0]!.fields.dropped, 48);
    assert.match(String(reports[0]!.fields.linkDownReason), /revoked/);

    client.queue.push({ n: 50 });
    await waitFor(() => lines.filter((l) => l.level === 'error' && /^log records dropped/.test(l.msg)).length === 2, 2_000);
    assert.equal(lines.filter((l) => l.level === 'error' && /^log records dropped/.test(l.msg)).at(-1)!.fields.dropped, 1, 'only the drops since the last report');
  } finally {
    await client.close(0);
  }
});
