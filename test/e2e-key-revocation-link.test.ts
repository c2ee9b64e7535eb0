/**
 * A control-plane link ends with the key it logged in with: revoking that key (REST) closes the
 * link at once with close code 4001, and the proxy's reconnect with it is refused (401); the proxy,
 * which can no longer learn of revocations, drops the keys it held (every request 503
 * `control_plane_key_revoked`, more in e2e-control-plane-key-revoked.test.ts); deleting the key's organization closes the link
 * within a heartbeat, after an empty key snapshot. Real processes (stub upstream, admin on a fresh
 * PostgreSQL database, proxies) as in e2e-controlplane.test.ts, without restarting PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { hashApiKey } from '../shared/apikey.ts';
import type { LinkHealth } from '../proxy/controlplane.ts';
import { PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, waitFor, type Stack, type Started } from './support/stack.ts';

const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };

async function health(url: string): Promise<LinkHealth> {
  return ((await (await fetch(`${url}/health`)).json()) as { controlPlane: LinkHealth }).controlPlane;
}

async function chatStatus(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(CHAT),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A raw control-plane link: the messages it received and how it closed. */
interface RawLink {
  ws: WebSocket;
  messages: Array<{ type: string; [k: string]: unknown }>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a control-plane link with `key` and waits for its key snapshot. */
async function openLink(adminPort: number, key: string): Promise<RawLink> {
  const ws = new WebSocket(`ws://127.0.0.1:${adminPort}/v1/control-plane`, { headers: { authorization: `Bearer ${key}` } });
  const messages: RawLink['messages'] = [];
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
  await waitFor(() => messages.some((m) => m.type === 'keys.snapshot'), 5_000);
  return { ws, messages, closed };
}

/** The status admin answers a control-plane upgrade with `key` (101 when accepted). */
function upgradeStatus(adminPort: number, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${adminPort}/v1/control-plane`, { headers: { authorization: `Bearer ${key}` } });
    ws.once('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', (err) => reject(err));
  });
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms))]);

describe('revoking the key a control-plane link logged in with', () => {
  let stack: Stack;
  const extra: Started[] = [];
  const rest = (method: string, p: string, body?: unknown) =>
    fetch(`${stack.adminUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const createKey = async (name: string) => ((await (await rest('POST', '/v1/api-keys', { name })).json()) as { data: { id: string; key: string } }).data;

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    for (const p of extra.reverse()) await stopProcess(p);
    await stack?.stop();
  });

  test('closes the proxy\'s link at once; the proxy logs it, drops the keys it held and is refused on reconnect', async () => {
    const cp = await createKey('control-plane');
    const proxy = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: cp.key, configFile: stack.configFile, env: PROVIDER_KEYS });
    extra.push(proxy);
    const before = await health(proxy.url);
    assert.equal(before.connected, true);
    assert.equal(await chatStatus(proxy.url, stack.apiKey), 200);

    assert.equal((await rest('DELETE', `/v1/api-keys/${cp.id}`)).status, 200);
    await waitFor(async () => !(await health(proxy.url)).connected, 2_000);
    // Refused on every reconnect: the link stays down.
    await waitFor(async () => (await health(proxy.url)).reconnectAttempts >= 2, 10_000);
    const h = await health(proxy.url);
    assert.equal(h.connected, false);
    assert.equal(h.ready, false, 'the held keys are dropped: the proxy could not learn of revocations any more');
    assert.equal(h.keyRevoked, true);
    assert.equal(h.keysHeld, 0);
    assert.equal(await upgradeStatus(stack.admin.port, cp.key), 401);
    // Every request is refused, as the gateway's fault (503), not the caller's.
    assert.equal(await chatStatus(proxy.url, stack.apiKey), 503);
    assert.equal(await chatStatus(proxy.url, cp.key), 503);
    assert.equal(proxy.child.exitCode, null);
    const out = proxy.output();
    assert.match(out, /"level":50[^\n]*control-plane API key[^\n]*revoked/, `the proxy says its key was revoked:\n${out}`);
    // The stack's own proxy, linked with another key, is untouched.
    assert.equal((await health(stack.gatewayUrl)).connected, true);
    await stopProcess(proxy);
  });

  test('a link opened with a user key is closed with code 4001 right after the key\'s revocation reaches it', async () => {
    const user = await createKey('leaked user key');
    const link = await openLink(stack.admin.port, user.key);
    assert.equal((await rest('DELETE', `/v1/api-keys/${user.id}`)).status, 200);
    const closed = await within(link.closed, 2_000, 'the link closed');
    assert.equal(closed.code, 4001);
    assert.match(closed.reason, /API key revoked/);
    // The revocation itself came first, so a proxy drops the key from its cache before the link ends.
    const revoke = link.messages.find((m) => m.type === 'keys.revoke') as { hashes: string[] } | undefined;
    assert.deepEqual(revoke?.hashes, [hashApiKey(user.key)]);
    assert.equal(await upgradeStatus(stack.admin.port, user.key), 401);

    // A key created afterwards never reaches the closed link.
    const later = await createKey('after the revocation');
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!link.messages.some((m) => m.type === 'keys.upsert' && JSON.stringify(m).includes(hashApiKey(later.key))));
  });

  test('revoking another key of the organization leaves the link up', async () => {
    const linkKey = await createKey('link');
    const other = await createKey('other');
    const link = await openLink(stack.admin.port, linkKey.key);
    assert.equal((await rest('DELETE', `/v1/api-keys/${other.id}`)).status, 200);
    await waitFor(() => link.messages.some((m) => m.type === 'keys.revoke'), 2_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(link.ws.readyState, WebSocket.OPEN);
    link.ws.close();
    await link.closed;
  });

  test('deleting the organization sends an empty snapshot and closes its links within a heartbeat', { timeout: 60_000 }, async () => {
    const sql = stack.db.sql;
    const org = await createOrganization(sql, 'to be deleted');
    const created = await createApiKey(sql, org, 'tenant key');
    const link = await openLink(stack.admin.port, created.key);
    await sql`delete from organization where id = ${org}`;
    const closed = await within(link.closed, 35_000, 'the link closed');
    assert.equal(closed.code, 4001);
    assert.match(closed.reason, /API key deleted/);
    const snapshots = link.messages.filter((m) => m.type === 'keys.snapshot') as unknown as Array<{ keys: unknown[] }>;
    assert.deepEqual(snapshots.at(-1)?.keys, [], 'the proxy is told the organization has no key left');
    assert.equal(await upgradeStatus(stack.admin.port, created.key), 401);
  });
});
