/**
 * SIGHUP (a closed terminal, `kill -HUP`) stops a standalone proxy or admin as SIGTERM does, in
 * order: the proxy finishes, flushes its queued log records to admin and exits 0; admin closes its
 * links and database and exits 0. Node's default for SIGHUP is to die at once (exit 129), losing
 * the queued records. Real processes (stub upstream, admin on a fresh PostgreSQL database, proxy).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, type Stack } from './support/stack.ts';

function exitOf(p: Stack['proxy']): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => p.child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('SIGHUP', () => {
  let stack: Stack;
  before(async () => {
    // A flush interval far longer than the test: the record is still queued when SIGHUP arrives.
    stack = await startStack({
      config: (stubUrl) => ({ ...defaultConfig(stubUrl), 'log-queue': { 'flush-interval': '1h', 'batch-size': 1000 } }),
      proxyEnv: { LOG_LEVEL: 'info' },
      adminEnv: { LOG_LEVEL: 'info' },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  test('stops the proxy gracefully: its queued log record reaches admin, exit 0', async () => {
    const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200);
    const id = res.headers.get('svc-id')!;
    await res.arrayBuffer();
    const exited = exitOf(stack.proxy);
    stack.proxy.child.kill('SIGHUP');
    const { code, signal } = await exited;
    const out = stack.proxy.output();
    assert.equal(signal, null, `the proxy died of ${signal}:\n${out}`);
    assert.equal(code, 0, out);
    assert.match(out, /"reason":"SIGHUP"[^\n]*proxy stopping/);
    assert.match(out, /proxy stopped/);
    const record = await fetchRecord(stack, id, 5_000);
    assert.equal(record.request_id, id, 'the queued record was flushed on the way out');
  });

  test('stops admin gracefully: exit 0 after its own stop', async () => {
    const exited = exitOf(stack.admin);
    stack.admin.child.kill('SIGHUP');
    const { code, signal } = await exited;
    const out = stack.admin.output();
    assert.equal(signal, null, `admin died of ${signal}:\n${out}`);
    assert.equal(code, 0, out);
    assert.match(out, /"reason":"SIGHUP"[^\n]*admin stopping/);
    assert.match(out, /admin stopped/);
  });
});
