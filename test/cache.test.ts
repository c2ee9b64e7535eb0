/**
 * Unit tests of the response cache's parts (issue 18): the `cache:` config and its errors, the key
 * (canonical JSON: member order, ignored members, every part counts), the request headers,
 * the lookup stage on a runtime without a server and a stream's replay (the memory store:
 * cache-memory-store.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cacheKey, type KeyParts } from '../proxy/cache/key.ts';
import { answerFromCache } from '../proxy/cache/replay.ts';
import { cacheEnabled, cacheOptions } from '../proxy/cache/request.ts';
import { GatewayError } from '../proxy/errors.ts';
import { cacheLookup } from '../proxy/stages/cache-lookup.ts';
import { buildConfig, ConfigError } from '../shared/config.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

const bad = (doc: unknown, pattern: RegExp) => assert.throws(() => buildConfig(doc, {}), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));

test('cache config: defaults, Redis from the rate-limit store, and errors naming the key', () => {
  const c = buildConfig({}, {}).cache;
  assert.deepEqual(c, { store: 'memory', redisUrl: null, maxBytes: 256 * 1024 * 1024, maxEntryBytes: 1024 * 1024, defaultTtlMs: 7 * 24 * 3600 * 1000, timeoutMs: 500 });
  const r = buildConfig({ 'rate-limit-store': { type: 'redis', url: 'redis://h:6379' } }, {}).cache;
  assert.equal(r.store, 'redis');
  assert.equal(r.redisUrl, 'redis://h:6379');
  assert.equal(buildConfig({ 'rate-limit-store': { type: 'redis', url: 'redis://h' }, cache: { store: 'memory' } }, {}).cache.store, 'memory');
  assert.equal(buildConfig({ cache: { 'default-max-age': '1h', 'max-size': 1000, 'max-entry-size': 10 } }, {}).cache.defaultTtlMs, 3_600_000);
  bad({ cache: { store: 'redis' } }, /cache\.url: required when cache\.store is "redis"/);
  bad({ cache: { store: 'disk' } }, /cache\.store/);
  bad({ cache: { 'default-max-age': '400d' } }, /cache\.default-max-age: at most 365 days/);
  bad({ cache: { 'default-max-age': 'soon' } }, /cache\.default-max-age/);
  bad({ cache: { 'max-size': 10, 'max-entry-size': 11 } }, /cache\.max-entry-size: 11 bytes exceeds cache\.max-size/);
  bad({ cache: { 'max-size': 0 } }, /cache\.max-size/);
  bad({ cache: { 'max-size': 5 * 1024 ** 3 } }, /cache\.max-size: the memory store holds at most 4294967296 bytes/);
  assert.equal(buildConfig({ cache: { store: 'redis', url: 'redis://127.0.0.1:6379', 'max-size': 5 * 1024 ** 3 } }, {}).cache.store, 'redis', 'Redis is not bounded so');
  bad({ cache: { sizes: 1 } }, /cache\.sizes: unknown key/);
});

const parts = (over: Partial<KeyParts> = {}): KeyParts => ({
  organization: 'org-1',
  seed: '',
  endpoint: 'chat',
  provider: 'openai',
  model: 'gpt-4o-mini',
  body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 },
  ignore: null,
  ...over,
});

test('cache key: member order does not matter, every part counts, ignored members are left out', () => {
  const k = cacheKey(parts());
  assert.match(k, /^[0-9a-f]{64}$/);
  assert.equal(cacheKey(parts({ body: { temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'openai/gpt-4o-mini' } })), k);
  for (const over of [{ organization: 'org-2' }, { seed: 's' }, { endpoint: 'responses' }, { provider: 'groq' }, { model: 'gpt-4o' }] as Partial<KeyParts>[]) {
    assert.notEqual(cacheKey(parts(over)), k, JSON.stringify(over));
  }
  assert.notEqual(cacheKey(parts({ body: { ...parts().body, user: 'a' } })), k);
  assert.equal(cacheKey(parts({ body: { ...parts().body, user: 'a' }, ignore: ['user'] })), k);
  const body = { ...parts().body, user: 'a' };
  cacheKey(parts({ body, ignore: ['user'] }));
  assert.equal(body.user, 'a', "the client's body is not changed");
});

test('cache key: a number beyond a double (JSON.parse makes 1e400 ±Infinity) is keyed, apart from null and from each other', () => {
  const body = (x: unknown) => ({ ...parts().body, metadata: { x } });
  const inf = cacheKey(parts({ body: body(JSON.parse('1e400')) }));
  assert.match(inf, /^[0-9a-f]{64}$/);
  assert.equal(cacheKey(parts({ body: body(JSON.parse('1e500')) })), inf, 'both are Infinity once parsed');
  assert.notEqual(cacheKey(parts({ body: body(JSON.parse('-1e400')) })), inf);
  assert.notEqual(cacheKey(parts({ body: body(null) })), inf);
  assert.notEqual(cacheKey(parts({ body: body('Infinity') })), inf);
  assert.notEqual(cacheKey(parts({ body: body('\u0000Infinity') })), inf, 'the string the replacer writes Infinity as, sent by a client');
  const both = (s: string) => cacheKey(parts({ body: { ...body(JSON.parse('1e400')), s } }));
  assert.notEqual(both('\u0000Infinity'), cacheKey(parts({ body: { ...body(JSON.parse('1e400')), s: JSON.parse('1e400') } })), 'within a body holding Infinity too');
});

test('cache key: a dotted path with * leaves nested members out (Codex sends new item ids each run); the body is not changed', () => {
  const run = (ids: [string, string], extra: Record<string, unknown> = {}) => ({
    model: 'gpt-4.1-nano',
    input: [{ type: 'message', id: ids[0], role: 'user', content: [{ type: 'input_text', text: 'What is 2+2?' }] }, { type: 'message', id: ids[1], role: 'user', content: 'hi' }],
    client_metadata: { turn_id: ids[0] },
    ...extra,
  });
  const ignore = ['input.*.id', 'client_metadata'];
  const a = run(['msg_1', 'msg_2']);
  const k = cacheKey(parts({ body: a, ignore }));
  assert.equal(cacheKey(parts({ body: run(['msg_3', 'msg_4']), ignore })), k, 'other item ids, the same key');
  assert.equal(cacheKey(parts({ body: { ...run(['x', 'y']), input: a.input.map(({ id: _, ...rest }) => rest) }, ignore })), k, 'items without ids, the same key');
  assert.notEqual(cacheKey(parts({ body: run(['msg_3', 'msg_4']), ignore: ['client_metadata'] })), k, 'without the path the ids count');
  const other = run(['msg_1', 'msg_2']);
  other.input[1]!.content = 'hello';
  assert.notEqual(cacheKey(parts({ body: other, ignore })), k, 'the rest of each item still counts');
  assert.equal(cacheKey(parts({ body: run(['a', 'b'], { metadata: { a: { x: 1, y: 2 } } }), ignore: [...ignore, 'metadata.*.x'] })), cacheKey(parts({ body: run(['c', 'd'], { metadata: { a: { x: 9, y: 2 } } }), ignore: [...ignore, 'metadata.*.x'] })), '* over an object\'s members');
  assert.equal(cacheKey(parts({ body: a, ignore: [...ignore, 'nothing.*.here', 'model.length', 'input.0'] })), k, 'a path that names nothing changes nothing');
  assert.equal(cacheKey(parts({ body: a, ignore: ['input.*', 'client_metadata.*'] })), cacheKey(parts({ body: { ...a, input: [], client_metadata: {} }, ignore: null })), 'a path ending in * empties an array or an object');
  assert.equal(cacheKey(parts({ body: { ...a, 'x.y': 1 }, ignore: [...ignore, 'x.y'] })), k, 'a top-level name with a dot is that member');
  assert.equal(a.input[0]!.id, 'msg_1', "the client's body is not changed");
  assert.equal(a.client_metadata.turn_id, 'msg_1');
});

const req = (headers: Record<string, string>) => ({ headers }) as never;

test('cache headers: values and the 400s naming the header', () => {
  assert.equal(cacheEnabled('true'), true);
  assert.equal(cacheEnabled(' TRUE '), true);
  assert.equal(cacheEnabled('false'), false);
  assert.throws(() => cacheEnabled('1'), (e: unknown) => e instanceof GatewayError && e.status === 400 && /Svc-Cache-Enabled/.test(e.message) && e.param === 'Svc-Cache-Enabled');
  assert.deepEqual(cacheOptions(req({}), 5000), { ttlMs: 5000, bucketMax: 1, seed: '', ignore: null, lookup: true, write: 'add' });
  assert.deepEqual(cacheOptions(req({ 'cache-control': 'public, max-age=60', 'svc-cache-bucket-max-size': '20', 'svc-cache-seed': 'x', 'svc-cache-ignore-keys': ' a , b' }), 5000), {
    ttlMs: 60_000,
    bucketMax: 20,
    seed: 'x',
    ignore: ['a', 'b'],
    lookup: true,
    write: 'add',
  });
  assert.equal(cacheOptions(req({ 'cache-control': 'max-age=31536000' }), 5000).ttlMs, 31_536_000_000);
  // RFC 9111 §5.2.1 request directives: no-store keeps the answer out, no-cache skips the lookup and replaces the bucket.
  const directives = (cc: string) => {
    const o = cacheOptions(req({ 'cache-control': cc }), 5000);
    return { ttlMs: o.ttlMs, lookup: o.lookup, write: o.write };
  };
  assert.deepEqual(directives('no-store'), { ttlMs: 5000, lookup: true, write: 'none' });
  assert.deepEqual(directives('No-Cache, max-age=60'), { ttlMs: 60_000, lookup: false, write: 'replace' });
  assert.deepEqual(directives('no-cache, no-store'), { ttlMs: 5000, lookup: false, write: 'none' });
  assert.deepEqual(directives('max-age="60"'), { ttlMs: 60_000, lookup: true, write: 'add' });
  assert.deepEqual(directives('max-age=60, max-age=abc'), { ttlMs: 60_000, lookup: true, write: 'add' }, 'the first max-age counts');
  assert.deepEqual(directives('private, must-revalidate'), { ttlMs: 5000, lookup: true, write: 'add' }, 'other directives are ignored');
  // node:http joins a repeated header with ", ": the same value twice is that value.
  assert.equal(cacheEnabled('true, true'), true);
  assert.equal(cacheEnabled('True, true'), true, 'the same value in another case');
  assert.equal(cacheOptions(req({ 'svc-cache-bucket-max-size': '3, 3' }), 5000).bucketMax, 3);
  const rejects = (h: Record<string, string>, name: RegExp) =>
    assert.throws(
      () => cacheOptions(req(h), 5000),
      // The error's `param` is the header too (OpenAI's error shape carries it).
      (e: unknown) => e instanceof GatewayError && e.status === 400 && name.test(e.message) && name.test(`${e.param}:`),
      JSON.stringify(h),
    );
  rejects({ 'cache-control': 'max-age=31536001' }, /^Cache-Control/);
  rejects({ 'cache-control': 'max-age=0' }, /^Cache-Control/);
  rejects({ 'cache-control': 'max-age=-5' }, /^Cache-Control/);
  rejects({ 'cache-control': 'max-age="60' }, /^Cache-Control/);
  rejects({ 'cache-control': 'max-age' }, /^Cache-Control/);
  rejects({ 'svc-cache-bucket-max-size': '3, 4' }, /^Svc-Cache-Bucket-Max-Size/);
  assert.throws(() => cacheEnabled('true, false'), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'Svc-Cache-Enabled');
  rejects({ 'svc-cache-bucket-max-size': '21' }, /^Svc-Cache-Bucket-Max-Size/);
  rejects({ 'svc-cache-bucket-max-size': '2.5' }, /^Svc-Cache-Bucket-Max-Size/);
  rejects({ 'svc-cache-seed': 'x'.repeat(257) }, /^Svc-Cache-Seed/);
  rejects({ 'svc-cache-ignore-keys': 'a,' }, /^Svc-Cache-Ignore-Keys/);
  rejects({ 'svc-cache-ignore-keys': 'input..id' }, /^Svc-Cache-Ignore-Keys/);
  rejects({ 'svc-cache-ignore-keys': 'input.*.' }, /^Svc-Cache-Ignore-Keys/);
  assert.deepEqual(cacheOptions(req({ 'svc-cache-ignore-keys': 'input.*.id, user' }), 5000).ignore, ['input.*.id', 'user']);
});

test('cache-lookup stage: nothing without the header; a key and a miss with it; a 400 for a bad value', async () => {
  const gw = makeRuntime();
  try {
    const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const plain = makeContext(gw, { path: '/ai/chat/completions', body });
    plain.provider = 'openai';
    plain.model = 'gpt-4o-mini';
    plain.body = body as never;
    assert.equal(cacheLookup(plain), undefined);
    assert.equal(plain.cache, null);

    const on = makeContext(gw, { path: '/ai/chat/completions', body, headers: { 'svc-cache-enabled': 'true', 'svc-cache-bucket-max-size': '2' } });
    Object.assign(on, { provider: 'openai', model: 'gpt-4o-mini', body });
    assert.equal(cacheLookup(on), undefined, 'a miss runs on');
    assert.match(on.cache!.key, /^[0-9a-f]{64}$/);
    assert.equal(on.cache!.bucketMax, 2);
    assert.equal(on.cache!.ttlMs, 7 * 24 * 3600 * 1000);

    const badValue = makeContext(gw, { path: '/ai/chat/completions', body, headers: { 'svc-cache-enabled': 'maybe' } });
    Object.assign(badValue, { provider: 'openai', model: 'gpt-4o-mini', body });
    assert.throws(() => cacheLookup(badValue), (e: unknown) => e instanceof GatewayError && e.status === 400);
  } finally {
    await closeRuntime(gw);
  }
});

test('a stored stream is replayed event by event, each write after the client drained the last', async () => {
  const gw = makeRuntime();
  try {
    const ctx = makeContext(gw, { path: '/ai/chat/completions', body: {} });
    ctx.provider = 'openai';
    ctx.cache = { key: 'k', ttlMs: 1000, bucketMax: 1, write: 'add', hitOf: null, chunks: null, bytes: 0, streamed: false, usage: null, replay: null, replayAt: 0 };
    const writes: string[] = [];
    let drain: ((this: unknown) => void) | null = null;
    const res = ctx.res as unknown as { write(c: Buffer): boolean; once(e: string, f: () => void): unknown };
    res.write = (c: Buffer) => {
      writes.push(c.toString());
      return false; // the socket's buffer is full after every write
    };
    res.once = (event: string, f: () => void) => {
      if (event === 'drain') drain = f;
      return res;
    };
    const body = Buffer.from('data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n');
    answerFromCache(ctx, { requestId: 'r0', status: 200, streamed: true, contentType: 'text/event-stream; charset=utf-8', body });
    assert.equal(ctx.res.statusCode, 200);
    assert.equal(ctx.res.headers['svc-cache'], 'HIT');
    assert.equal(ctx.res.headers['content-length'], undefined, 'a stream has no length');
    assert.equal(ctx.cache.hitOf, 'r0');
    assert.deepEqual(writes, ['data: {"a":1}\n\n'], 'one event, then a wait for drain');
    for (let i = 2; i <= 3; i++) {
      const d = drain!;
      drain = null;
      d.call(ctx.res);
      assert.equal(writes.length, i);
    }
    assert.equal(writes[2], 'data: [DONE]\n\n');
    assert.equal(ctx.res.writableEnded, false);
    drain!.call(ctx.res);
    assert.equal(ctx.res.writableEnded, true, 'ended once the last event drained');
    assert.equal(writes.join(''), body.toString());
  } finally {
    await closeRuntime(gw);
  }
});
