/**
 * The proxy's `GET /health` answers 503, with a status naming why, when the proxy cannot serve
 * requests, so that a load balancer stops sending it traffic: before its first key snapshot
 * (`not_ready`), and with `rate-limit-store.fail-mode: closed` while Redis is unreachable
 * (`rate_limit_store_unavailable`); 200 otherwise (`ok`; `degraded` when it serves but something is
 * down, e.g. Redis in fail-open mode). The rate-limit store's state is in `rateLimit`. The revoked
 * control-plane key is in e2e-control-plane-key-revoked.test.ts. Real processes (stub upstream,
 * admin on a fresh PostgreSQL database, proxies) and the shared Redis.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };

interface Health {
  status: string;
  reason: string | null;
  controlPlane: { ready: boolean } | null;
  rateLimit: { store: string; failMode: string; available: boolean } | null;
}

async function health(url: string): Promise<{ code: number; body: Health }> {
  const res = await fetch(`${url}/health`);
  return { code: res.status, body: (await res.json()) as Health };
}

/** A port nothing listens on (bound, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The stack's config with a global per-key limit on a Redis store at `url` in `failMode`, the cache in memory. */
function limitedConfig(stubUrl: string, url: string, failMode: 'open' | 'closed'): Record<string, unknown> {
  return {
    ...defaultConfig(stubUrl),
    global: { 'rate-limit': { 'per-api-key': { capacity: 1000, 'refill-frequency': '1h' } } },
    'rate-limit-store': { type: 'redis', url, 'fail-mode': failMode, timeout: '200ms' },
    cache: { store: 'memory' },
  };
}

describe('GET /health of the proxy', () => {
  let stack: Stack;
  const extra: Started[] = [];
  const proxy = async (config: Record<string, unknown>) => {
    const p = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: writeConfig(config), env: PROVIDER_KEYS });
    extra.push(p);
    return p;
  };

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    for (const p of extra.reverse()) await stopProcess(p);
    await stack?.stop();
  });

  test('serving: 200 ok, no rate limiter', async () => {
    const h = await health(stack.gatewayUrl);
    assert.equal(h.code, 200);
    assert.equal(h.body.status, 'ok');
    assert.equal(h.body.reason, null);
    assert.equal(h.body.rateLimit, null);
  });

  test('started before admin (no key snapshot): 503 not_ready, as every request is', async () => {
    const p = await startLinkedProxy({ adminPort: await freePort(), apiKey: stack.apiKey, configFile: stack.configFile, env: PROVIDER_KEYS, waitReady: false });
    extra.push(p);
    const res = await fetch(`${p.url}/ai/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });
    assert.equal(res.status, 503);
    await res.arrayBuffer();
    const h = await health(p.url);
    assert.equal(h.code, 503);
    assert.equal(h.body.status, 'not_ready');
    assert.match(h.body.reason ?? '', /key/);
    assert.equal(h.body.controlPlane?.ready, false, 'the JSON shape is kept');
    const head = await fetch(`${p.url}/health`, { method: 'HEAD' });
    assert.equal(head.status, 503, 'HEAD answers the same status');
  });

  test('fail-mode closed with Redis unreachable: 503 rate_limit_store_unavailable, as every request is', async () => {
    const p = await proxy(limitedConfig(stack.stubUrl, `redis://127.0.0.1:${await freePort()}`, 'closed'));
    const res = await fetch(`${p.url}/ai/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'rate_limit_store_unavailable');
    const h = await health(p.url);
    assert.equal(h.code, 503);
    assert.equal(h.body.status, 'rate_limit_store_unavailable');
    assert.deepEqual(h.body.rateLimit, { store: 'redis', failMode: 'closed', available: false });
  });

  test('fail-mode open with Redis unreachable: 200 degraded (requests are served, unlimited)', async () => {
    const p = await proxy(limitedConfig(stack.stubUrl, `redis://127.0.0.1:${await freePort()}`, 'open'));
    const h = await health(p.url);
    assert.equal(h.code, 200);
    assert.equal(h.body.status, 'degraded');
    assert.match(h.body.reason ?? '', /rate-limit store/);
    assert.deepEqual(h.body.rateLimit, { store: 'redis', failMode: 'open', available: false });
  });

  test('fail-mode closed with Redis up: 200 ok, the store available', async () => {
    const p = await proxy(limitedConfig(stack.stubUrl, REDIS_URL, 'closed'));
    await waitFor(async () => (await health(p.url)).code === 200, 5_000);
    const h = await health(p.url);
    assert.equal(h.body.status, 'ok');
    assert.deepEqual(h.body.rateLimit, { store: 'redis', failMode: 'closed', available: true });
  });
});
