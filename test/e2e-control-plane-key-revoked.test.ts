/**
 * A proxy whose own control-plane key is gone can no longer learn of revocations, so it must stop
 * trusting the keys it holds: revoking that key (REST, any key of the organization may) closes its
 * link with 4001, and a reconnect refused with 401 (the key revoked while admin was away) does the
 * same. From then on every request is answered 503 `control_plane_key_revoked` in the caller's
 * dialect, a key revoked afterwards gets no 200, /health answers 503, an error line tells the
 * operator to give the proxy a new key, and the proxy keeps retrying. A plain admin outage keeps
 * the held keys serving (/health 200 `degraded`). Real processes: stub upstream, admin on a fresh
 * PostgreSQL database, proxies (test/support/stack.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PROVIDER_KEYS, startLinkedProxy, startProcess, startStack, stopProcess, waitFor, type Stack, type Started } from './support/stack.ts';

const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };

interface Health {
  status: string;
  reason: string | null;
  controlPlane: { connected: boolean; ready: boolean; keysHeld: number; reconnectAttempts: number; keyRevoked: boolean; downReason: string | null };
}

async function health(url: string): Promise<{ code: number; body: Health }> {
  const res = await fetch(`${url}/health`);
  return { code: res.status, body: (await res.json()) as Health };
}

async function chat(url: string, key: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(CHAT),
  });
  return { status: res.status, body: await res.json() };
}

/** An Anthropic Messages request, to see the refusal in Anthropic's error shape. */
async function messages(url: string, key: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  return { status: res.status, body: await res.json() };
}

/** Asserts the proxy at `url` refuses every request because its control-plane key is gone. */
async function assertKeysDropped(url: string, keys: string[]): Promise<void> {
  for (const key of keys) {
    const res = await chat(url, key);
    assert.equal(res.status, 503, `key ${key.slice(0, 12)}…: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'control_plane_key_revoked');
    assert.match(res.body.error.message, /control-plane API key.*SVC_CONTROL_PLANE_API_KEY/);
  }
  const anthropic = await messages(url, keys[0]!);
  assert.equal(anthropic.status, 503);
  assert.equal(anthropic.body.type, 'error', `Anthropic's error shape: ${JSON.stringify(anthropic.body)}`);
  assert.match(anthropic.body.error.message, /control-plane API key/);
  const h = await health(url);
  assert.equal(h.code, 503);
  assert.equal(h.body.status, 'control_plane_key_revoked');
  assert.match(h.body.reason ?? '', /SVC_CONTROL_PLANE_API_KEY/);
  assert.equal(h.body.controlPlane.keyRevoked, true);
  assert.equal(h.body.controlPlane.keysHeld, 0);
  assert.equal(h.body.controlPlane.ready, false);
}

describe("the proxy's own control-plane key revoked", () => {
  let stack: Stack;
  const extra: Started[] = [];
  /** An admin started in place of the stack's (stopped after every proxy). */
  let admin: Started | null = null;
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
    await stopProcess(stack?.proxy);
    await stopProcess(admin);
    await stack?.stop();
  });

  test('revoked through REST (close 4001): the held keys are dropped, a key revoked afterwards gets no 200, the proxy retries; a new key recovers', async () => {
    const cp = await createKey('control-plane');
    const user = await createKey('user');
    const proxy = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: cp.key, configFile: stack.configFile, env: PROVIDER_KEYS });
    extra.push(proxy);
    assert.equal((await chat(proxy.url, user.key)).status, 200);
    const healthy = await health(proxy.url);
    assert.equal(healthy.code, 200);
    assert.equal(healthy.body.status, 'ok');

    // Any key of the organization may revoke the proxy's key.
    const revoke = await fetch(`${stack.adminUrl}/v1/api-keys/${cp.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.key}` } });
    assert.equal(revoke.status, 200);
    await waitFor(async () => (await health(proxy.url)).body.controlPlane.keyRevoked, 5_000);
    await assertKeysDropped(proxy.url, [user.key, stack.apiKey]);

    // A key revoked now, which the proxy cannot learn of, is not served either.
    assert.equal((await rest('DELETE', `/v1/api-keys/${user.id}`)).status, 200);
    await new Promise((r) => setTimeout(r, 500));
    assert.notEqual((await chat(proxy.url, user.key)).status, 200);

    // It keeps trying to reconnect, and says what to do.
    const attempts = (await health(proxy.url)).body.controlPlane.reconnectAttempts;
    await waitFor(async () => (await health(proxy.url)).body.controlPlane.reconnectAttempts > attempts, 10_000);
    assert.equal(proxy.child.exitCode, null);
    const out = proxy.output();
    assert.match(out, /"level":50[^\n]*SVC_CONTROL_PLANE_API_KEY[^\n]*new/, `an error line asks for a new key:\n${out}`);

    // The stack's own proxy, linked with another key, serves on.
    assert.equal((await chat(stack.gatewayUrl, stack.apiKey)).status, 200);
    // A restart with a new key recovers.
    await stopProcess(proxy);
    const fresh = await createKey('control-plane 2');
    const restarted = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: fresh.key, configFile: stack.configFile, env: PROVIDER_KEYS });
    extra.push(restarted);
    assert.equal((await chat(restarted.url, stack.apiKey)).status, 200);
    assert.equal((await health(restarted.url)).code, 200);
  });

  test('a plain admin outage keeps the held keys serving (/health 200 degraded); revoked meanwhile, the reconnect refused with 401 drops them', { timeout: 90_000 }, async () => {
    const cp = await createKey('control-plane outage');
    const proxy = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: cp.key, configFile: stack.configFile, env: PROVIDER_KEYS });
    extra.push(proxy);
    const adminPort = stack.admin.port;
    stack.admin.child.kill('SIGKILL');
    await waitFor(async () => !(await health(proxy.url)).body.controlPlane.connected, 5_000);
    await waitFor(async () => (await health(proxy.url)).body.controlPlane.reconnectAttempts >= 2, 10_000);
    const during = await health(proxy.url);
    assert.equal(during.code, 200, JSON.stringify(during.body));
    assert.equal(during.body.status, 'degraded');
    assert.match(during.body.reason ?? '', /control plane/);
    assert.equal(during.body.controlPlane.keyRevoked, false);
    assert.equal((await chat(proxy.url, stack.apiKey)).status, 200, 'served on the held keys');

    // Revoked while admin is away: no notification reaches the proxy, only the refused reconnect.
    await stack.db.sql`update api_key set revoked_at = now() where id = ${cp.id}`;
    admin = await startProcess('admin/main.ts', { DATABASE_URL: stack.db.url, SVC_BOOTSTRAP_API_KEY: stack.apiKey, ADMIN_PORT: String(adminPort) }, 'admin.ready', ['--config', stack.configFile]);
    await waitFor(async () => (await health(proxy.url)).body.controlPlane.keyRevoked, 45_000);
    await assertKeysDropped(proxy.url, [stack.apiKey]);
    assert.match(proxy.output(), /"level":50[^\n]*SVC_CONTROL_PLANE_API_KEY[^\n]*new/);
  });
});
