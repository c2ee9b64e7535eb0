/**
 * The memory cache store (proxy/cache/memory.ts): answers kept as bytes in one arena used as a ring,
 * CLOCK eviction (a bucket read since it was written survives its turn at the tail), buckets up to
 * their size, expiry, bodies that outlive the arena's later writes, the usage kept with an answer, and a randomized run against a
 * small arena in which every answer read back must be one that was added, whole and in order.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { MemoryCacheStore } from '../proxy/cache/memory.ts';
import type { AnswerToStore, CachedAnswer, CachedBucket } from '../proxy/cache/types.ts';

/** A bucket's answers, oldest first (null: no bucket). */
function answers(bucket: CachedBucket | null): CachedAnswer[] | null {
  return bucket === null ? null : Array.from({ length: bucket.size }, (_, i) => bucket.answer(i));
}

/** A cache key as the gateway makes them: SHA-256 in hex. */
const key = (name: string) => createHash('sha256').update(name).digest('hex');

/** An answer whose body is `bytes` bytes of `fill`, handed over in `pieces` chunks. */
function answer(id: string, bytes: number, fill = 'x', pieces = 1): AnswerToStore {
  const body = Buffer.alloc(bytes, fill);
  const chunks: Buffer[] = [];
  const step = Math.ceil(bytes / pieces) || 1;
  for (let at = 0; at < bytes; at += step) chunks.push(body.subarray(at, at + step));
  return { requestId: id, status: 200, streamed: false, contentType: 'application/json', chunks, bytes };
}

test('memory store: an answer comes back whole, its members as stored; a full bucket takes no more', () => {
  const store = new MemoryCacheStore(100_000);
  assert.equal(store.get(key('k')), null);
  store.add(key('k'), { ...answer('req-ä', 3000, 'a', 7), status: 203, streamed: true, contentType: 'text/event-stream; charset=utf-8' }, 60_000, 2);
  store.add(key('k'), answer('b', 10, 'b'), 60_000, 2);
  store.add(key('k'), answer('c', 10, 'c'), 60_000, 2);
  const bucket = answers(store.get(key('k')))!;
  assert.deepEqual(bucket.map((a) => a.requestId), ['req-ä', 'b'], 'a full bucket takes no more');
  assert.deepEqual(
    { status: bucket[0]!.status, streamed: bucket[0]!.streamed, contentType: bucket[0]!.contentType },
    { status: 203, streamed: true, contentType: 'text/event-stream; charset=utf-8' },
  );
  assert.ok(bucket[0]!.body.equals(Buffer.alloc(3000, 'a')), 'the seven pieces, in order');
  assert.equal(bucket[1]!.body.toString(), 'b'.repeat(10));
  assert.equal(bucket[1]!.streamed, false);
  assert.equal(store.get(key('other')), null);
});

test('memory store: the usage a translated stream withheld comes back with its answer; answers without one have none', () => {
  const store = new MemoryCacheStore(100_000);
  const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } };
  store.add(key('u'), answer('plain', 10, 'p'), 60_000, 3);
  store.add(key('u'), { ...answer('withheld', 30, 'w'), streamed: true, usage }, 60_000, 3);
  store.add(key('u'), answer('after', 10, 'a'), 60_000, 3);
  const bucket = answers(store.get(key('u')))!;
  assert.deepEqual(bucket.map((a) => a.requestId), ['plain', 'withheld', 'after']);
  assert.deepEqual(bucket.map((a) => a.usage), [null, usage, null]);
  assert.deepEqual(bucket.map((a) => a.body.toString()), ['p'.repeat(10), 'w'.repeat(30), 'a'.repeat(10)], 'the bodies after a usage are read where they are');
});

test('memory store: replace (Cache-Control: no-cache) empties the bucket for the new answer, and drops it when the new one is too large to keep', () => {
  const store = new MemoryCacheStore(20_000);
  store.add(key('k'), answer('a', 10, 'a'), 60_000, 3);
  store.add(key('k'), answer('b', 10, 'b'), 60_000, 3);
  store.add(key('k'), answer('c', 10, 'c'), 60_000, 3, true);
  assert.deepEqual(answers(store.get(key('k')))!.map((a) => a.requestId), ['c'], 'only the fresh answer');
  store.add(key('k'), answer('d', 10, 'd'), 60_000, 3);
  assert.deepEqual(answers(store.get(key('k')))!.map((a) => a.requestId), ['c', 'd'], 'the bucket fills again as usual');
  store.add(key('k'), answer('huge', 30_000, 'h'), 60_000, 3, true);
  assert.equal(store.get(key('k')), null, 'a refresh too large to keep leaves no stale answer behind');
  assert.equal(store.usage().buckets, 0);
});

test('memory store: bounded by bytes; the oldest unread bucket goes first, a read one survives its turn', () => {
  const store = new MemoryCacheStore(10_000);
  store.add(key('k'), answer('a', 100), 60_000, 2);
  store.add(key('k'), answer('b', 100), 60_000, 2);
  store.add(key('big1'), answer('x', 4000), 60_000, 1);
  store.get(key('k'));
  store.add(key('big2'), answer('y', 4000), 60_000, 1);
  store.add(key('big3'), answer('z', 4000), 60_000, 1);
  assert.equal(store.get(key('big1')), null, 'the least recently used went first');
  assert.deepEqual(answers(store.get(key('k')))!.map((a) => a.requestId), ['a', 'b'], 'read before the tail reached it: kept');
  assert.equal(store.get(key('big3'))!.size, 1);
  assert.equal(store.get(key('big2'))!.size, 1);
  store.add(key('huge'), answer('h', 10_000), 60_000, 1);
  assert.equal(store.get(key('huge')), null, 'an answer larger than the arena is not kept');
  assert.ok(store.get(key('big3')), 'and pushed nothing out');
});

test('memory store: of two keys sharing their index bits the later added is kept, and neither gets the other\'s answer', () => {
  const store = new MemoryCacheStore(10_000);
  const first = `abcdef01${'0'.repeat(56)}`;
  const second = `abcdef01${'f'.repeat(56)}`;
  store.add(first, answer('first', 10), 60_000, 1);
  assert.equal(store.get(second), null, 'the same index bits, another key: a miss');
  store.add(second, answer('second', 10), 60_000, 1);
  assert.deepEqual(answers(store.get(second))!.map((a) => a.requestId), ['second']);
  assert.equal(store.get(first), null, 'the earlier key gave way');
});

test('memory store: a bucket expires; a body read earlier survives the arena being rewritten', async () => {
  const store = new MemoryCacheStore(8_192);
  store.add(key('short'), answer('s', 10, 's'), 30, 1);
  store.add(key('kept'), answer('k', 1000, 'k'), 60_000, 1);
  const body = store.get(key('kept'))!.answer(0).body;
  for (let i = 0; i < 50; i++) store.add(key(`fill${i}`), answer(`f${i}`, 1000, 'f'), 60_000, 1);
  assert.ok(body.equals(Buffer.alloc(1000, 'k')), 'a copy, not a view of the arena');
  assert.equal(store.get(key('short')), null, 'pushed out by the fill');
  store.add(key('short'), answer('s', 10, 's'), 30, 1);
  assert.ok(store.get(key('short')));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(store.get(key('short')), null, 'expired');
  store.add(key('short'), answer('s2', 10, 's'), 60_000, 1);
  assert.deepEqual(answers(store.get(key('short')))!.map((a) => a.requestId), ['s2'], 'an expired bucket starts anew');
});

test('memory store: 20,000 random adds and reads on a 6 KiB arena return only whole answers that were added, in order', () => {
  const store = new MemoryCacheStore(6 * 1024);
  // A small generator with a fixed seed, so a failure repeats.
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const added = new Map<string, string[]>();
  let serial = 0;
  for (let i = 0; i < 20_000; i++) {
    const name = `key${random(40)}`;
    const k = key(name);
    if (random(3) === 0) {
      const n = serial++;
      const id = `${name}#${n}`;
      const bytes = random(4) === 0 ? random(3000) : random(300);
      store.add(k, answer(id, bytes, String.fromCharCode(97 + (n % 26)), 1 + random(4)), 60_000, 1 + random(3));
      const list = added.get(name) ?? [];
      list.push(id);
      added.set(name, list);
      const back = store.get(k);
      assert.ok(back, `${id} (${bytes} bytes) is there right after its add`);
      continue;
    }
    const back = answers(store.get(k));
    if (back === null) continue;
    const ids = back.map((a) => a.requestId);
    const all = added.get(name)!;
    const positions = ids.map((id) => all.indexOf(id));
    assert.ok(positions.every((p, j) => p >= 0 && (j === 0 || p > positions[j - 1]!)), `${name}: ${ids} were added, in this order`);
    for (const a of back) {
      const n = Number(a.requestId.split('#')[1]);
      assert.ok(a.body.equals(Buffer.alloc(a.body.length, String.fromCharCode(97 + (n % 26)))), `${a.requestId}'s body is whole`);
    }
  }
  const usage = store.usage();
  let held = 0;
  for (let i = 0; i < 40; i++) if (store.get(key(`key${i}`)) !== null) held++;
  assert.equal(usage.buckets, held, 'usage counts the buckets a read finds');
  assert.ok(usage.bytes > 0 && usage.bytes <= usage.maxBytes && usage.maxBytes === 6 * 1024, JSON.stringify(usage));
});

test('memory store: usage counts the bytes of the buckets held, not of dead or dropped ones', async () => {
  const store = new MemoryCacheStore(10_000);
  assert.deepEqual(store.usage(), { buckets: 0, bytes: 0, maxBytes: 10_000 });
  store.add(key('a'), answer('a1', 1000), 60_000, 2);
  const one = store.usage().bytes;
  assert.ok(one > 1000 && one < 1200, String(one));
  store.add(key('a'), answer('a2', 1000), 60_000, 2);
  assert.equal(store.usage().buckets, 1);
  assert.ok(store.usage().bytes > 2000 && store.usage().bytes < 2 * one, 'the grown bucket only, not its old entry');
  store.add(key('b'), answer('b1', 5000), 20, 1);
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(store.get(key('b')), null);
  assert.equal(store.usage().buckets, 1, 'an expired bucket found on a read is dropped');
  for (let i = 0; i < 20; i++) store.add(key(`f${i}`), answer(`f${i}`, 1000), 60_000, 1);
  const u = store.usage();
  assert.ok(u.bytes <= 10_000 && u.buckets <= 9, JSON.stringify(u));
  await store.close();
  assert.deepEqual(store.usage(), { buckets: 0, bytes: 0, maxBytes: 10_000 });
});
