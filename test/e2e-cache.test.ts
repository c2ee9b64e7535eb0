/**
 * End-to-end: the response cache (issue 18). Stub upstream, admin (real PostgreSQL) and proxies run
 * as separate processes; the stub's request log (`/__requests`) proves that a hit never reached the
 * provider. Covers non-streamed and streamed answers of chat completions, embeddings, Messages and
 * Responses, bucket rotation, seeds and ignored keys, expiry, the memory store's bound, organizations,
 * bad headers, the log record of a hit and `isCached`, Redis shared by two gateways, and Redis down
 * (a miss).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { defaultConfig, fetchRecord, PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, stubRequests, uniq, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
let stack: Stack;
/** Two gateways sharing the cache in Redis, and one whose Redis is down (nothing listens on port 1). */
let redisA: Started & { url: string };
let redisB: Started & { url: string };
let redisDown: Started & { url: string };
/** The config file of the gateways sharing Redis. */
let sharedConfig: string;

before(async () => {
  stack = await startStack();
  const withCache = (cache: Record<string, unknown>) => writeConfig({ ...defaultConfig(stack.stubUrl), cache });
  const shared = (sharedConfig = withCache({ store: 'redis', url: REDIS_URL, timeout: '500ms' }));
  const env = PROVIDER_KEYS;
  [redisA, redisB, redisDown] = await Promise.all([
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: shared, env }),
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: shared, env }),
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: withCache({ store: 'redis', url: 'redis://127.0.0.1:1', timeout: '200ms' }), env }),
  ]);
});
after(async () => {
  await Promise.all([stopProcess(redisA), stopProcess(redisB), stopProcess(redisDown)]);
  await stack?.stop();
});

interface Answer {
  status: number;
  cache: string | null;
  id: string;
  contentType: string;
  text: string;
  /** Body pieces as they arrived. */
  pieces: number;
}

/** POSTs `body` as JSON to `path` on `base` (the main gateway by default) with the cache on unless `headers` say otherwise. */
async function post(path: string, body: unknown, headers: Record<string, string> = {}, base = stack.gatewayUrl, key = stack.apiKey): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'svc-cache-enabled': 'true', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  let text = '';
  let pieces = 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    pieces++;
    text += decoder.decode(chunk, { stream: true });
  }
  return { status: res.status, cache: res.headers.get('svc-cache'), id: res.headers.get('svc-id')!, contentType: res.headers.get('content-type') ?? '', text, pieces };
}

/** How many requests the stub has received. */
const upstreamCount = async (): Promise<number> => (await stubRequests(stack.stubUrl)).length;

/** Runs `fn` and returns how many requests reached the provider meanwhile. */
async function upstreamCalls(fn: () => Promise<unknown>): Promise<number> {
  const before = await upstreamCount();
  await fn();
  return (await upstreamCount()) - before;
}

/** A chat body unique to the calling test (so tests never share keys). */
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `q ${uniq()}` }], ...extra });

describe('response cache: chat completions', () => {
  test('a repeated request is answered from the cache without calling the provider, and logged as a hit', async () => {
    const body = chat();
    const first = await post('/ai/chat/completions', body);
    assert.equal(first.status, 200);
    assert.equal(first.cache, 'MISS');
    let second!: Answer;
    assert.equal(await upstreamCalls(async () => (second = await post('/ai/chat/completions', body))), 0, 'no upstream call for a hit');
    assert.equal(second.status, 200);
    assert.equal(second.cache, 'HIT');
    assert.equal(second.text, first.text);
    assert.match(second.contentType, /application\/json/);
    assert.notEqual(second.id, first.id, 'a hit is a request of its own');

    const rec = await fetchRecord(stack, second.id);
    assert.equal(rec.cache_enabled, true);
    assert.equal(rec.cache_reference_id, first.id);
    assert.equal(rec.prompt_tokens, 24, "the served answer's tokens");
    assert.equal(rec.completion_tokens, 8);
    assert.equal(rec.cost, 0);
    const original = await fetchRecord(stack, first.id);
    assert.equal(original.cache_enabled, true);
    assert.equal(original.cache_reference_id, null);
    assert.ok(original.cost > 0);
    assert.equal(Number(rec.properties['svc-cache-cost-saved']), original.cost, 'the hit saved what the original cost');

    const query = async (isCached: boolean) => {
      const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ filter: 'all', isCached, limit: 1000 }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { data: Array<{ request_id: string }> }).data.map((r) => r.request_id);
    };
    const hits = await query(true);
    assert.ok(hits.includes(second.id) && !hits.includes(first.id), 'isCached: true finds the hit only');
    const others = await query(false);
    assert.ok(others.includes(first.id) && !others.includes(second.id));

    const metrics = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    assert.match(metrics, /svc_proxy_cache_lookups_total\{result="hit"\} [1-9]/);
    assert.match(metrics, /svc_proxy_cache_lookups_total\{result="miss"\} [1-9]/);
  });

  test('member order does not matter; without the header the cache is not used', async () => {
    const body = chat({ temperature: 0.5 });
    assert.equal((await post('/ai/chat/completions', body)).cache, 'MISS');
    const reordered = JSON.stringify({ temperature: 0.5, messages: body.messages, model: body.model });
    assert.equal((await post('/ai/chat/completions', reordered)).cache, 'HIT');
    let plain!: Answer;
    assert.equal(await upstreamCalls(async () => (plain = await post('/ai/chat/completions', body, { 'svc-cache-enabled': 'false' }))), 1);
    assert.equal(plain.cache, null);
  });

  test('a streamed answer is replayed as a stream, event by event, without calling the provider', async () => {
    const body = chat({ stream: true, stream_options: { include_usage: true } });
    const first = await post('/ai/chat/completions', body);
    assert.equal(first.cache, 'MISS');
    let second!: Answer;
    assert.equal(await upstreamCalls(async () => (second = await post('/ai/chat/completions', body))), 0);
    assert.equal(second.cache, 'HIT');
    assert.match(second.contentType, /text\/event-stream/);
    assert.equal(second.text, first.text, 'the same events in the same order');
    assert.ok(second.text.trimEnd().endsWith('data: [DONE]'));
    const rec = await fetchRecord(stack, second.id);
    assert.equal(rec.cache_reference_id, first.id);
    assert.equal(rec.prompt_tokens, 78);
    assert.equal(rec.llmSchema.response.messages[0].content, 'The capital of the UK is London.');
  });

  test('a stream replayed to a client that reads slowly arrives whole (backpressure)', async () => {
    const body = chat({ stream: true, model: 'openai/chunks-20' });
    const first = await post('/ai/chat/completions', body);
    const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-cache-enabled': 'true' },
      body: JSON.stringify(body),
    });
    assert.equal(res.headers.get('svc-cache'), 'HIT');
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString();
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(text, first.text);
    assert.ok(text.match(/^data: /gm)!.length > 20);
  });

  test('an error is not stored: an error status, a stream cut mid-way, a 200 stream ending in an error event', async () => {
    const body = chat({ model: 'openai/error-400' });
    assert.equal((await post('/ai/chat/completions', body)).status, 400);
    const again = await post('/ai/chat/completions', body);
    assert.equal(again.status, 400);
    assert.notEqual(again.cache, 'HIT');
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/ai/chat/completions', chat({ model: 'openai/reset-mid-stream', stream: true })],
      ['/ai/chat/completions', chat({ model: 'openai/groq-stream-error', stream: true })],
      ['/v1/messages', { model: 'anthropic/stream-error', max_tokens: 10, stream: true, messages: [{ role: 'user', content: `s ${uniq()}` }] }],
    ];
    for (const [path, b] of cases) {
      const first = await post(path, b);
      assert.equal(first.status, 200, `${path} ${b.model}: ${first.text.slice(0, 200)}`);
      assert.equal(first.cache, 'MISS');
      const second = await post(path, b);
      assert.equal(second.cache, 'MISS', `${path} ${b.model}: not kept`);
    }
  });
});

describe('response cache: keys, buckets, lifetime, organizations', () => {
  test('a bucket of 3 takes three answers, then serves them in turn', async () => {
    const body = chat();
    const h = { 'svc-cache-bucket-max-size': '3' };
    const misses: string[] = [];
    const calls = await upstreamCalls(async () => {
      for (let i = 0; i < 3; i++) {
        const a = await post('/ai/chat/completions', body, h);
        assert.equal(a.cache, 'MISS', `request ${i + 1} fills the bucket`);
        misses.push(a.id);
      }
    });
    assert.equal(calls, 3);
    const hits: string[] = [];
    assert.equal(
      await upstreamCalls(async () => {
        for (let i = 0; i < 6; i++) {
          const a = await post('/ai/chat/completions', body, h);
          assert.equal(a.cache, 'HIT');
          hits.push(a.id);
        }
      }),
      0,
    );
    const refs = [];
    for (const id of hits) refs.push((await fetchRecord(stack, id)).cache_reference_id);
    assert.deepEqual(refs, [...misses, ...misses], 'each stored answer in turn');
  });

  test('seeds partition the cache; ignored keys are left out of it', async () => {
    const body = chat();
    assert.equal((await post('/ai/chat/completions', body, { 'svc-cache-seed': 'a' })).cache, 'MISS');
    assert.equal((await post('/ai/chat/completions', body, { 'svc-cache-seed': 'a' })).cache, 'HIT');
    assert.equal((await post('/ai/chat/completions', body, { 'svc-cache-seed': 'b' })).cache, 'MISS');
    assert.equal((await post('/ai/chat/completions', body)).cache, 'MISS', 'no seed is a partition of its own');

    const other = chat();
    const ignore = { 'svc-cache-ignore-keys': 'user, metadata' };
    assert.equal((await post('/ai/chat/completions', { ...other, user: 'u1' }, ignore)).cache, 'MISS');
    assert.equal((await post('/ai/chat/completions', { ...other, user: 'u2', metadata: { x: '1' } }, ignore)).cache, 'HIT');
    assert.equal((await post('/ai/chat/completions', other, ignore)).cache, 'HIT', 'absent or not, an ignored member does not count');
    assert.equal((await post('/ai/chat/completions', { ...other, user: 'u3' })).cache, 'MISS', 'without the header user counts');
  });

  test('Cache-Control: max-age sets the lifetime', async () => {
    const body = chat();
    const h = { 'cache-control': 'max-age=1' };
    assert.equal((await post('/ai/chat/completions', body, h)).cache, 'MISS');
    assert.equal((await post('/ai/chat/completions', body, h)).cache, 'HIT');
    await new Promise((r) => setTimeout(r, 1_200));
    assert.equal((await post('/ai/chat/completions', body, h)).cache, 'MISS', 'expired');
  });

  test('bad header values are a 400 naming the header, in the caller’s dialect', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'svc-cache-enabled': 'yes' }, /Svc-Cache-Enabled/],
      [{ 'cache-control': 'max-age=abc' }, /Cache-Control/],
      [{ 'cache-control': 'max-age=40000000' }, /Cache-Control/],
      [{ 'svc-cache-bucket-max-size': '21' }, /Svc-Cache-Bucket-Max-Size/],
      [{ 'svc-cache-bucket-max-size': '0' }, /Svc-Cache-Bucket-Max-Size/],
      [{ 'svc-cache-ignore-keys': 'a,,b' }, /Svc-Cache-Ignore-Keys/],
    ];
    for (const [h, name] of cases) {
      const a = await post('/ai/chat/completions', chat(), h);
      assert.equal(a.status, 400, JSON.stringify(h));
      assert.match(JSON.parse(a.text).error.message, name);
    }
    const m = await post('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, { 'svc-cache-bucket-max-size': 'x' });
    assert.equal(m.status, 400);
    const err = JSON.parse(m.text);
    assert.equal(err.type, 'error', "Anthropic's error shape");
    assert.match(err.error.message, /Svc-Cache-Bucket-Max-Size/);
  });
});

describe('response cache: every dialect', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['embeddings', '/ai/embeddings', { model: 'openai/text-embedding-3-small', input: `e ${uniq()}` }],
    ['Messages', '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: `m ${uniq()}` }] }],
    ['Messages streamed', '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: `m ${uniq()}` }] }],
    ['Messages translated to chat', '/v1/messages', { model: 'openai/gpt-4o-mini', max_tokens: 100, stream: true, messages: [{ role: 'user', content: `m ${uniq()}` }] }],
    ['Responses', '/v1/responses', { model: 'openai/gpt-4.1-nano', input: `r ${uniq()}` }],
    ['Responses streamed', '/v1/responses', { model: 'openai/gpt-4.1-nano', stream: true, input: `r ${uniq()}` }],
    ['Responses translated to chat', '/v1/responses', { model: 'groq/llama-3.3-70b-versatile', stream: true, input: `r ${uniq()}` }],
  ];
  for (const [name, path, body] of cases) {
    test(`${name}: a miss, then a hit with the same bytes and no provider call`, async () => {
      const first = await post(path, body);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.cache, 'MISS');
      let second!: Answer;
      assert.equal(await upstreamCalls(async () => (second = await post(path, body))), 0);
      assert.equal(second.cache, 'HIT');
      assert.equal(second.status, 200);
      assert.equal(second.text, first.text);
      const rec = await fetchRecord(stack, second.id);
      assert.equal(rec.cache_reference_id, first.id);
      assert.ok(rec.total_tokens > 0, `tokens of the served answer: ${rec.total_tokens}`);
    });
  }
});

describe('response cache in memory: bounded by cache.max-size', () => {
  test('a 4 KiB store keeps a few answers: the oldest unread goes, one read between adds stays, hits are whole', async () => {
    const config = writeConfig({ ...defaultConfig(stack.stubUrl), cache: { store: 'memory', 'max-size': 4096, 'max-entry-size': 2048 } });
    const small = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: config, env: PROVIDER_KEYS });
    try {
      const kept = chat();
      const first = await post('/ai/chat/completions', kept, {}, small.url);
      assert.equal(first.cache, 'MISS');
      const others = Array.from({ length: 10 }, () => chat());
      for (const body of others) {
        assert.equal((await post('/ai/chat/completions', body, {}, small.url)).cache, 'MISS');
        const hit = await post('/ai/chat/completions', kept, {}, small.url);
        assert.equal(hit.cache, 'HIT', 'read since its last turn at the tail: kept');
        assert.equal(hit.text, first.text, 'the answer as first served, byte for byte');
      }
      // Ten ~1 KB answers went through a 4 KiB arena: the first of them was pushed out long ago.
      assert.equal(await upstreamCalls(async () => assert.equal((await post('/ai/chat/completions', others[0], {}, small.url)).cache, 'MISS')), 1);
      assert.equal((await post('/ai/chat/completions', others[9], {}, small.url)).cache, 'HIT', 'the newest is still there');
      const health = (await (await fetch(`${small.url}/health`)).json()) as { cache: { store: string; buckets: number; bytes: number; maxBytes: number } };
      assert.equal(health.cache.store, 'memory');
      assert.ok(health.cache.buckets >= 2 && health.cache.buckets <= 4 && health.cache.bytes <= 4096 && health.cache.maxBytes === 4096, JSON.stringify(health.cache));
      const metrics = await (await fetch(`${small.url}/metrics`)).text();
      assert.match(metrics, new RegExp(`^svc_proxy_cache_buckets ${health.cache.buckets}$`, 'm'));
      assert.match(metrics, /^svc_proxy_cache_bytes \d+$/m);
    } finally {
      await stopProcess(small);
    }
  });
});

describe('response cache in Redis', () => {
  test('two gateways on one Redis share answers', async () => {
    const body = chat();
    assert.equal((await post('/ai/chat/completions', body, {}, redisA.url)).cache, 'MISS');
    // The write is pipelined after the answer; give it a moment to land.
    let hit!: Answer;
    await waitFor(async () => (hit = await post('/ai/chat/completions', body, { 'svc-cache-seed': 'probe' }, redisB.url)).status === 200);
    await waitFor(async () => (hit = await post('/ai/chat/completions', body, {}, redisB.url)).cache === 'HIT', 2_000);
    assert.equal(await upstreamCalls(() => post('/ai/chat/completions', body, {}, redisB.url)), 0);
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
    try {
      const keys = await redis.keys('svc:cache:*');
      assert.ok(keys.length > 0);
      for (const k of keys) assert.match(k, /^svc:cache:[0-9a-f]{64}$/, 'Redis keys are hashes: no prompt text in them');
      const ttl = await redis.pttl(keys[0]!);
      assert.ok(ttl > 0 && ttl <= 7 * 24 * 3600 * 1000, `default lifetime of 7 days: ${ttl}`);
    } finally {
      redis.disconnect();
    }
  });

  test('another organization’s gateway on the same Redis never gets this one’s answer', async () => {
    const org = await createOrganization(stack.db.sql, `cache ${uniq()}`);
    const other = await createApiKey(stack.db.sql, org, 'other');
    const foreign = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: other.key, configFile: sharedConfig, env: PROVIDER_KEYS });
    try {
      const body = chat();
      assert.equal((await post('/ai/chat/completions', body, {}, redisA.url)).cache, 'MISS');
      await waitFor(async () => (await post('/ai/chat/completions', body, {}, redisB.url)).cache === 'HIT', 2_000);
      assert.equal((await post('/ai/chat/completions', body, {}, foreign.url, other.key)).cache, 'MISS', 'the same request of another organization');
      await waitFor(async () => (await post('/ai/chat/completions', body, {}, foreign.url, other.key)).cache === 'HIT', 2_000);
    } finally {
      await stopProcess(foreign);
    }
  });

  test('Redis down: a miss, answered normally', async () => {
    const body = chat();
    for (let i = 0; i < 2; i++) {
      let a!: Answer;
      assert.equal(await upstreamCalls(async () => (a = await post('/ai/chat/completions', body, {}, redisDown.url))), 1);
      assert.equal(a.status, 200);
      assert.equal(a.cache, 'MISS');
      assert.equal(JSON.parse(a.text).object, 'chat.completion');
    }
  });
});
