/**
 * End-to-end: the response cache's request directives and odd bodies (issue 18). `Cache-Control:
 * no-store` keeps an answer out of the cache, `no-cache` asks the provider and replaces what the
 * bucket held (RFC 9111 §5.2.1), in the memory store and in Redis shared by two gateways; a body
 * holding a number beyond a double (`1e400`, legal JSON) is cached like any other, not a 500. The
 * stub's request log proves which requests reached the provider.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, stubRequests, uniq, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

let stack: Stack;
/** Two gateways sharing the cache in Redis. */
let redisA: Started & { url: string };
let redisB: Started & { url: string };

before(async () => {
  stack = await startStack();
  const shared = writeConfig({ ...defaultConfig(stack.stubUrl), cache: { store: 'redis', url: 'redis://127.0.0.1:6379', timeout: '500ms' } });
  [redisA, redisB] = await Promise.all([
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: shared, env: PROVIDER_KEYS }),
    startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: shared, env: PROVIDER_KEYS }),
  ]);
});
after(async () => {
  await Promise.all([stopProcess(redisA), stopProcess(redisB)]);
  await stack?.stop();
});

/** POSTs a chat body with the cache on (plus `headers`) to `base`; returns the status, `Svc-Cache` and `Svc-Id`. */
async function post(body: string, headers: Record<string, string> = {}, base = stack.gatewayUrl): Promise<{ status: number; cache: string | null; id: string; text: string }> {
  const res = await fetch(`${base}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-cache-enabled': 'true', ...headers },
    body,
  });
  return { status: res.status, cache: res.headers.get('svc-cache'), id: res.headers.get('svc-id')!, text: await res.text() };
}

/** Runs `fn` and returns how many requests reached the provider meanwhile. */
async function upstreamCalls(fn: () => Promise<unknown>): Promise<number> {
  const before = (await stubRequests(stack.stubUrl)).length;
  await fn();
  return (await stubRequests(stack.stubUrl)).length - before;
}

/** A chat body unique to the calling test. */
const chat = () => JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `q ${uniq()}` }] });

/** The memory store (the main gateway) and Redis (two gateways: the second reads what the first wrote). */
const STORES = [
  { name: 'memory', first: () => stack.gatewayUrl, second: () => stack.gatewayUrl },
  { name: 'redis', first: () => redisA.url, second: () => redisB.url },
];

describe('Cache-Control request directives', { concurrency: false }, () => {
  for (const store of STORES) {
    test(`${store.name}: no-store answers from the provider and keeps nothing; a hit can still be served`, async () => {
      const body = chat();
      const first = await post(body, { 'cache-control': 'no-store' }, store.first());
      assert.deepEqual([first.status, first.cache], [200, 'MISS']);
      // Nothing was stored: the next plain request misses too (and stores its answer).
      assert.equal(await upstreamCalls(async () => assert.equal((await post(body, {}, store.second())).cache, 'MISS')), 1);
      // A stored answer is served to a no-store request (the directive is about storing). A Redis
      // write is fire and forget: the read may come before it, so it is asked until it hits.
      await waitFor(async () => (await post(body, { 'cache-control': 'no-store' }, store.second())).cache === 'HIT');
    });

    test(`${store.name}: no-cache asks the provider although an answer is held, and its answer replaces the bucket`, async () => {
      const body = chat();
      const stored = await post(body, {}, store.first());
      assert.equal(stored.cache, 'MISS');
      let fresh = '';
      assert.equal(
        await upstreamCalls(async () => {
          const r = await post(body, { 'cache-control': 'no-cache' }, store.first());
          assert.deepEqual([r.status, r.cache], [200, 'MISS'], 'no-cache is never answered from the cache');
          fresh = r.id;
        }),
        1,
      );
      // The later hit serves the no-cache request's answer, not the first one's (once Redis has the
      // replacement: the write is fire and forget, and until then the first answer is still held).
      let reference = '';
      await waitFor(async () => {
        const hit = await post(body, {}, store.second());
        reference = hit.cache === 'HIT' ? (await fetchRecord(stack, hit.id)).cache_reference_id : '';
        return reference === fresh;
      });
      assert.equal(reference, fresh, 'the bucket holds the fresh answer');
    });
  }
});

describe('bodies JSON.parse cannot hold exactly', { concurrency: false }, () => {
  test('a number beyond a double (1e400, -1e400) is keyed and cached, not a 500', async () => {
    const tag = uniq();
    const body = (x: string) => `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"inf ${tag}"}],"metadata":{"x":${x}}}`;
    const first = await post(body('1e400'));
    assert.deepEqual([first.status, first.cache], [200, 'MISS'], first.text);
    assert.equal((await post(body('1e400'))).cache, 'HIT');
    assert.equal((await post(body('1e500'))).cache, 'HIT', '1e500 parses to the same Infinity');
    assert.equal((await post(body('-1e400'))).cache, 'MISS', '-Infinity is another key');
    assert.equal((await post(body('null'))).cache, 'MISS', 'null is another key');
  });
});
