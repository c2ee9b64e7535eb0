/**
 * End-to-end: GCRA rate limiting through running gateway processes. Two gateways on one Redis share
 * one budget; the global level is checked before the router's and a denial consumes from no level;
 * the 429 and the admitted answers (streamed or not) carry the rate-limit headers to the official
 * `openai` client; an unreachable Redis fails open (default) or closed (option) without hanging; and
 * limits with `svc.features: none` stop the start.
 *
 * Needs the real Redis at 127.0.0.1:6379 (the suite FAILS when it is unreachable) and PostgreSQL.
 * The gateways use the default bucket prefix `svc:rl:`; every bucket is keyed by a key hash or user
 * id made for this run, and exactly those keys are deleted afterwards.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { hashApiKey } from '../shared/apikey.ts';
import { defaultConfig, startLinkedProxy, startProcess, startStack, stopProcess, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const RUN = randomBytes(6).toString('hex');
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] };
const PROVIDER_ENV = { OPENAI_API_KEY: 'sk-provider-openai-secret', GROQ_API_KEY: 'gsk-provider-groq-secret' };

/** Global: 4 per key and 1 per user per hour; router `tight`: 2 per key per hour (nothing refills during the suite). */
function limitedConfig(stubUrl: string, store: Record<string, unknown> = { type: 'redis', url: REDIS_URL, timeout: '1s' }): Record<string, unknown> {
  const base = defaultConfig(stubUrl);
  return {
    ...base,
    routers: {
      ...(base.routers as object),
      tight: {
        'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } },
        'rate-limit': { 'per-api-key': { capacity: 2, 'refill-frequency': '1h' } },
      },
    },
    global: {
      'rate-limit': {
        'per-api-key': { capacity: 4, 'refill-frequency': '1h' },
        'per-user': { capacity: 1, 'refill-frequency': '1h' },
      },
    },
    'rate-limit-store': store,
  };
}

let stack: Stack;
let redis: Redis;
/** Extra gateway processes, stopped before the stack. */
const extra: Started[] = [];
const usedHashes: string[] = [];

before(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect(); // rejects, failing the suite, when Redis is unreachable
  assert.equal(await redis.ping(), 'PONG');
  stack = await startStack({ config: (stubUrl) => limitedConfig(stubUrl) });
});

after(async () => {
  for (const p of extra) await stopProcess(p);
  await stack?.stop();
  if (redis?.status === 'ready') {
    const mine: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'svc:rl:*', 'COUNT', 1000);
      cursor = next;
      for (const k of keys) if (k.includes(RUN) || usedHashes.some((h) => k.endsWith(h))) mine.push(k);
    } while (cursor !== '0');
    if (mine.length) await redis.del(...mine);
    await redis.quit();
  } else {
    redis?.disconnect();
  }
});

/** Starts another gateway on the stack's admin with `config`; waits for its first key snapshot. */
async function startGateway(config: Record<string, unknown>): Promise<string> {
  const p = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: writeConfig(config), env: PROVIDER_ENV });
  extra.push(p);
  return p.url;
}

const keysHeld = async (gatewayUrl: string): Promise<number> => ((await (await fetch(`${gatewayUrl}/health`)).json()) as any).controlPlane.keysHeld;

/**
 * Creates a fresh API key over REST (a fresh budget) and waits until every given gateway holds it,
 * without spending any of it (watching /health's keysHeld).
 */
async function freshKey(...gateways: string[]): Promise<string> {
  const before = await Promise.all(gateways.map(keysHeld));
  const res = await fetch(`${stack.adminUrl}/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `rl-${RUN}` }),
  });
  assert.equal(res.status, 200);
  const key = ((await res.json()) as { data: { key: string } }).data.key;
  usedHashes.push(hashApiKey(key));
  await waitFor(async () => (await Promise.all(gateways.map(keysHeld))).every((n, i) => n > before[i]!), 5_000);
  return key;
}

async function post(gatewayUrl: string, path: string, key: string, userId?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (userId) headers['svc-user-id'] = userId;
  const res = await fetch(`${gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(CHAT), signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res;
}

describe('GCRA rate limiting through running gateways', () => {
  test('two gateway processes on one Redis share one budget exactly', async () => {
    const second = await startGateway(limitedConfig(stack.stubUrl));
    const key = await freshKey(stack.gatewayUrl, second);
    const gateways = [stack.gatewayUrl, second];
    for (let i = 0; i < 4; i++) {
      const res = await post(gateways[i % 2]!, '/ai/chat/completions', key);
      assert.equal(res.status, 200, `request ${i + 1} of 4`);
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(3 - i));
    }
    for (const g of gateways) {
      const res = await post(g, '/ai/chat/completions', key);
      assert.equal(res.status, 429);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900, `retry-after ${res.headers.get('retry-after')}`);
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    }
  });

  test('global before router; a request denied at any level consumes from none', async () => {
    const key = await freshKey(stack.gatewayUrl);
    const user = `u-${RUN}`;
    const policy = (res: Response) => /^"([^"]+)"/.exec(res.headers.get('ratelimit') ?? '')?.[1];

    // 1. admitted by all three buckets; the tightest (this user's 1 per hour) is reported
    let res = await post(stack.gatewayUrl, '/router/tight/chat/completions', key, user);
    assert.equal(res.status, 200);
    assert.equal(policy(res), 'global-user');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    // 2. denied by the global per-user bucket (router still has room)
    res = await post(stack.gatewayUrl, '/router/tight/chat/completions', key, user);
    assert.equal(res.status, 429);
    assert.equal(policy(res), 'global-user');
    // 3. without the user: the router bucket has 1 left, so request 2 took nothing from it
    res = await post(stack.gatewayUrl, '/router/tight/chat/completions', key);
    assert.equal(res.status, 200);
    assert.equal(policy(res), 'router-tight-api-key');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    // 4. denied by the router (global still admits)
    res = await post(stack.gatewayUrl, '/router/tight/chat/completions', key);
    assert.equal(res.status, 429);
    assert.equal(policy(res), 'router-tight-api-key');
    // 5. global per key: 4 - (1 and 3) = 2 left, so requests 2 and 4 took nothing from it
    res = await post(stack.gatewayUrl, '/ai/chat/completions', key);
    assert.equal(res.status, 200);
    assert.equal(policy(res), 'global-api-key');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '1');
    res = await post(stack.gatewayUrl, '/ai/chat/completions', key);
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    res = await post(stack.gatewayUrl, '/ai/chat/completions', key);
    assert.equal(res.status, 429);
    assert.equal(policy(res), 'global-api-key');
  });

  test('admitted answers carry the limit and remaining, streamed and not; the 429 reaches the openai client in OpenAI shape', async () => {
    const key = await freshKey(stack.gatewayUrl);
    const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: key, maxRetries: 0 });

    const { data, response } = await client.chat.completions.create(CHAT).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(response.headers.get('x-ratelimit-limit'), '4');
    assert.equal(response.headers.get('x-ratelimit-remaining'), '3');
    assert.equal(response.headers.get('ratelimit-policy'), '"global-api-key";q=4;w=3600');
    assert.match(response.headers.get('ratelimit') ?? '', /^"global-api-key";r=3;t=\d+$/);
    assert.match(response.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);

    const { data: stream, response: streamed } = await client.chat.completions.create({ ...CHAT, stream: true }).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.ok(text.length > 0);
    assert.equal(streamed.headers.get('x-ratelimit-limit'), '4');
    assert.equal(streamed.headers.get('x-ratelimit-remaining'), '2');
    assert.match(streamed.headers.get('ratelimit') ?? '', /^"global-api-key";r=2;t=\d+$/);

    // through a router too (router without its own limit: the global bucket is reported)
    const viaRouter = new OpenAI({ baseURL: `${stack.gatewayUrl}/router/default`, apiKey: key, maxRetries: 0 });
    const { response: r3 } = await viaRouter.chat.completions.create({ ...CHAT, model: 'gpt-4o-mini' }).withResponse();
    assert.equal(r3.headers.get('x-ratelimit-remaining'), '1');
    await client.chat.completions.create(CHAT);

    await assert.rejects(client.chat.completions.create(CHAT), (err: unknown) => {
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.equal(err.type, 'rate_limit_exceeded');
      assert.equal(err.code, 'rate_limit_exceeded');
      const retryAfter = err.headers?.get('retry-after');
      assert.match(retryAfter ?? '', /^[1-9]\d*$/);
      assert.equal(err.headers?.get('x-ratelimit-limit'), '4');
      assert.equal(err.headers?.get('x-ratelimit-remaining'), '0');
      assert.equal(err.headers?.get('ratelimit-policy'), '"global-api-key";q=4;w=3600');
      assert.match(err.headers?.get('ratelimit') ?? '', /^"global-api-key";r=0;t=\d+$/);
      return true;
    });
  });

  test('Redis unreachable: fail-open and fail-closed by option, never a hang', async () => {
    const down = 'redis://127.0.0.1:1';
    const open = await startGateway(limitedConfig(stack.stubUrl, { type: 'redis', url: down, 'fail-mode': 'open' }));
    const closed = await startGateway(limitedConfig(stack.stubUrl, { type: 'redis', url: down, 'fail-mode': 'closed' }));
    const key = await freshKey(open, closed);
    for (let i = 0; i < 6; i++) {
      const res = await post(open, '/ai/chat/completions', key); // more than the 4 the limit would allow
      assert.equal(res.status, 200, `fail-open request ${i + 1}`);
      assert.equal(res.headers.get('x-ratelimit-limit'), null, 'no limit headers without a verdict');
    }
    const res = await fetch(`${closed}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(CHAT),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(res.status, 503);
    assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    const body = (await res.json()) as { error: { code: string; type: string; message: string } };
    assert.equal(body.error.code, 'rate_limit_store_unavailable');
    assert.equal(typeof body.error.message, 'string');
  });

  test('a body declared over the limit after a Redis check is a 413, and the gateway stays up', async () => {
    const key = await freshKey(stack.gatewayUrl);
    const { port } = new URL(stack.gatewayUrl);
    // Declares 20 MB (over the 10 MB default) and sends none of it: the answer must come from the declared length.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /ai/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: 20000000\r\n\r\n`);
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        text += d;
        if (text.includes('\r\n\r\n') && text.includes('}}')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"code":"request_too_large"/);
    const health = await fetch(`${stack.gatewayUrl}/health`);
    assert.equal(health.status, 200, 'the gateway process is still up');
  });

  test('rate limits with svc.features none stop the start with a clear message', async () => {
    const config = { ...limitedConfig(stack.stubUrl, { type: 'in-memory' }), svc: { features: 'none' } };
    await assert.rejects(
      startProcess('proxy/main.ts', { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', ...PROVIDER_ENV }, 'proxy.ready', ['--config', writeConfig(config)]),
      (err: Error) => {
        assert.match(err.message, /exited with code [1-9]\d* before it was ready/);
        assert.match(err.message, /rate limits are configured but svc\.features is "none"/);
        return true;
      },
    );
  });
});
