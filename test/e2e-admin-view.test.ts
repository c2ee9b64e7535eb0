/**
 * End-to-end: admin's view of the traffic proxies carry. The `request.model` filter matches the
 * model as records show it (without the provider prefix) for requests sent through `/ai`, `/v1` and
 * a router; an API key's `last_used_at` is written within seconds of its use through the proxy and
 * of its use on the REST API. Real processes (stub upstream, admin on a fresh PostgreSQL database,
 * proxy) as in e2e-main.test.ts; the client-level case runs a local WebSocket server in this process.
 * Run: node --import tsx --test --test-concurrency=1 test/e2e-admin-view.test.ts
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { ControlPlaneClient } from '../proxy/controlplane.ts';
import { generateApiKey, hashApiKey } from '../shared/apikey.ts';
import { fetchRecord, startStack, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;
let organizationId: string;

before(async () => {
  stack = await startStack();
  const [row] = await stack.db.sql<{ organization_id: string }[]>`select organization_id from api_key limit 1`;
  organizationId = row!.organization_id;
});
after(async () => {
  await stack?.stop();
});

/** POSTs a chat completion to the gateway path `path` with `model` and `key`; returns the Svc-Id. */
async function chat(path: string, model: string, key = stack.apiKey): Promise<string> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'What is the capital of France?' }] }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${path} ${model}: ${text.slice(0, 300)}`);
  return res.headers.get('svc-id')!;
}

/** `POST /v1/request/query` with `filter`; the ids found. */
async function query(filter: unknown): Promise<string[]> {
  const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ filter, limit: 1000 }),
  });
  const body = (await res.json()) as { data: Array<{ request_id: string }> | null; error: string | null };
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.data!.map((r) => r.request_id);
}

/** `last_used_at` of key `id` as `GET /v1/api-keys` lists it (called with `asKey`). */
async function lastUsedAt(id: string, asKey = stack.apiKey): Promise<string | null> {
  const res = await fetch(`${stack.adminUrl}/v1/api-keys`, { headers: { authorization: `Bearer ${asKey}` } });
  const body = (await res.json()) as { data: Array<{ id: string; last_used_at: string | null }> };
  const key = body.data.find((k) => k.id === id);
  assert.ok(key, `key ${id} is listed`);
  return key.last_used_at;
}

describe('request.model filters match the model as records show it', () => {
  test('gpt-4o-mini finds the requests sent as openai/gpt-4o-mini on /ai and /v1 and through a router, with every text operator', async () => {
    const sent = {
      ai: await chat('/ai/chat/completions', 'openai/gpt-4o-mini'),
      v1: await chat('/v1/chat/completions', 'openai/gpt-4o-mini'),
      router: await chat('/router/default/chat/completions', 'gpt-4o-mini'),
      routerPrefixed: await chat('/router/default/chat/completions', 'openai/gpt-4o-mini'),
    };
    const other = await chat('/ai/chat/completions', 'openai/gpt-4o');
    const all = Object.values(sent).sort();
    for (const [how, id] of Object.entries(sent)) {
      const rec = await fetchRecord(stack, id);
      assert.equal(rec.request_model, 'gpt-4o-mini', `${how}: the record shows the model without its provider`);
      assert.equal(rec.provider, rec.provider.toUpperCase());
    }
    assert.equal((await fetchRecord(stack, other)).request_model, 'gpt-4o');

    const model = (op: string, value: string) => query({ request: { model: { [op]: value } } });
    assert.deepEqual((await model('equals', 'gpt-4o-mini')).sort(), all);
    assert.deepEqual((await model('like', 'gpt-4o-m%')).sort(), all);
    assert.deepEqual((await model('ilike', 'GPT-4O-MINI')).sort(), all);
    assert.deepEqual((await model('contains', '4o-mini')).sort(), all);
    assert.deepEqual(await model('not-contains', 'mini'), [other]);
    assert.deepEqual(await model('not-equals', 'gpt-4o-mini'), [other]);
    assert.deepEqual(await model('equals', 'openai/gpt-4o-mini'), [], 'the provider is its own field, not part of the model');
  });
});

describe('api_key.last_used_at', () => {
  test('set within 10 s of a key first used through the proxy', async () => {
    const held = async () => ((await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { controlPlane: { keysHeld: number } }).controlPlane.keysHeld;
    const before = await held();
    const caller = await createApiKey(stack.db.sql, organizationId, 'proxy caller');
    assert.equal(await lastUsedAt(caller.id), null, 'never used yet');
    // The proxy learns of the new key through the control plane (no request: the first use is measured).
    await waitFor(async () => (await held()) === before + 1, 10_000);
    const [{ now }] = await stack.db.sql<{ now: Date }[]>`select now()`;
    const usedAt = Date.now();
    await chat('/ai/chat/completions', 'openai/gpt-4o-mini', caller.key);
    let shown: string | null = null;
    await waitFor(async () => (shown = await lastUsedAt(caller.id)) !== null, 10_000, 200);
    assert.ok(Date.now() - usedAt < 10_000, 'within 10 s');
    assert.ok(Date.parse(shown!) >= now.getTime(), `${shown} is after the use`);
  });

  test('set within 10 s of a key first used on the REST API; only the keys used', async () => {
    const rest = await createApiKey(stack.db.sql, organizationId, 'rest caller');
    const idle = await createApiKey(stack.db.sql, organizationId, 'idle');
    assert.equal(await lastUsedAt(rest.id), null);
    const [{ now }] = await stack.db.sql<{ now: Date }[]>`select now()`;
    const usedAt = Date.now();
    const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rest.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: 'all', limit: 1 }),
    });
    assert.equal(res.status, 200);
    let shown: string | null = null;
    await waitFor(async () => (shown = await lastUsedAt(rest.id)) !== null, 10_000, 200);
    assert.ok(Date.now() - usedAt < 10_000, 'within 10 s');
    assert.ok(Date.parse(shown!) >= now.getTime(), `${shown} is after the use`);
    assert.equal(await lastUsedAt(idle.id), null, 'a key not used keeps last_used_at null');
    const unknown = await fetch(`${stack.adminUrl}/v1/api-keys`, { headers: { authorization: `Bearer ${generateApiKey()}` } });
    assert.equal(unknown.status, 401);
  });
});

/** A silent pino-shaped logger for a control-plane client under test. */
function silentLogger(): Logger {
  const silent = () => {};
  const logger = { trace: silent, debug: silent, info: silent, warn: silent, error: silent, fatal: silent, child: () => logger } as unknown as Logger;
  return logger;
}

/**
 * A stand-in admin for the link: a WebSocket server on a free port that hands each link to `onLink`
 * (false: the link is refused) and collects the `keys.used` reports of the links it kept.
 */
async function fakeAdmin(onLink: (ws: WebSocket) => boolean): Promise<{ url: string; reports: string[][]; stop: (client: ControlPlaneClient) => Promise<void> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const reports: string[][] = [];
  server.on('connection', (ws) => {
    if (!onLink(ws)) return;
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { type: string; keyIds?: string[] };
      if (msg.type === 'keys.used') reports.push(msg.keyIds!);
    });
  });
  const stop = async (client: ControlPlaneClient) => {
    await client.close(100);
    for (const ws of server.clients) ws.terminate();
    await new Promise((r) => server.close(r));
  };
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/control-plane`, reports, stop };
}

describe('the proxy reports the keys it authenticated', () => {
  test('marks made while the link is down are reported once it is up, one id per key', async () => {
    let accept = false;
    const { url, reports, stop } = await fakeAdmin((ws) => {
      if (!accept) {
        ws.terminate();
        return false;
      }
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [] }));
      return true;
    });
    const client = ControlPlaneClient.start({
      url,
      apiKey: 'sk-svc-test-link',
      queue: { maxRecords: 10, maxBytes: 1 << 20, batchSize: 10 },
      flushIntervalMs: 50,
      logger: silentLogger(),
      backoffStartMs: 50,
      backoffCapMs: 100,
      usageReportIntervalMs: 50,
    });
    try {
      const entry = (keyId: string) => ({ hash: hashApiKey(keyId), keyId, organizationId: 'o1' });
      // The link is refused meanwhile: the marks wait.
      for (let i = 0; i < 1000; i++) client.markUsed(entry('k1'));
      client.markUsed(entry('k2'));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(reports, []);
      accept = true;
      await waitFor(() => reports.length > 0, 10_000);
      assert.deepEqual(reports.flat().sort(), ['k1', 'k2']);
      // Reported once: nothing more until a key is used again.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(reports.length, 1);
      client.markUsed(entry('k2'));
      await waitFor(() => reports.length === 2, 5_000);
      assert.deepEqual(reports[1], ['k2']);
    } finally {
      await stop(client);
    }
  });

  test('no report goes out before the link delivered its key snapshot (a link admin refuses would lose it)', async () => {
    const links: WebSocket[] = [];
    const { url, reports, stop } = await fakeAdmin((ws) => links.push(ws) > 0);
    const client = ControlPlaneClient.start({ url, apiKey: 'sk-svc-test-link', queue: { maxRecords: 10, maxBytes: 1 << 20, batchSize: 10 }, flushIntervalMs: 50, logger: silentLogger(), usageReportIntervalMs: 20 });
    try {
      client.markUsed({ hash: hashApiKey('k1'), keyId: 'k1', organizationId: 'o1' });
      await waitFor(() => links.length === 1, 5_000);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(reports, [], 'open but not synced: the ids wait');
      links[0]!.send(JSON.stringify({ type: 'keys.snapshot', keys: [] }));
      await waitFor(() => reports.length === 1, 5_000);
      assert.deepEqual(reports[0], ['k1']);
    } finally {
      await stop(client);
    }
  });
});
