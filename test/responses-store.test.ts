/**
 * The pieces of the Responses API's support that need no server: the in-memory response store's
 * bounds; what the response-store observer captures from recorded OpenAI answers (a relayed id from
 * the first bytes; a made response from its stream split anywhere); the Responses stream folded for
 * the log within the text budget; the SSE error event; the `Svc-Removed-Members` header value.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { foldResponsesEvent } from '../proxy/endpoints/responses-reading.ts';
import { responsesErrorEventData, responsesSse } from '../proxy/endpoints/responses-sse.ts';
import type { Json } from '../proxy/endpoints/types.ts';
import { ResponseCapture } from '../proxy/observers/response-capture.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { responses } from '../proxy/endpoints/responses.ts';
import { inputItemsOf } from '../proxy/response-store/items.ts';
import { MemoryResponseStore, ownEntry, RedisResponseStore } from '../proxy/response-store/index.ts';
import { MAX_HEADER_CHARS, removedMembersHeader } from '../proxy/upstream/removed-members.ts';

const fixture = (p: string): Buffer => readFileSync(new URL(`./fixtures/providers/openai/${p}`, import.meta.url));

/** `bytes` cut into pieces of random sizes (1..`max`), deterministic for `seed`. */
function pieces(bytes: Buffer, seed: number, max = 64): Buffer[] {
  const out: Buffer[] = [];
  let s = seed;
  for (let i = 0; i < bytes.length; ) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (s % max);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** The data of each event of an SSE body, parsed. */
function eventsOf(sse: Buffer): Json[] {
  return sse
    .toString('utf8')
    .split('\n\n')
    .map((e) => /^data: (.*)$/m.exec(e)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => JSON.parse(d) as Json);
}

describe('the in-memory response store', () => {
  const made = (org: string, text: string) => ({ kind: 'made' as const, org, provider: 'groq', response: { id: 'r', output: [{ text }] }, input: [] });

  test('keeps copies, scoped by organization; deletes', () => {
    const store = new MemoryResponseStore(null);
    const entry = made('o1', 'hi');
    store.put('resp_1', entry);
    entry.response.output[0]!.text = 'changed after';
    const got = store.get('resp_1');
    assert.equal((got as any).response.output[0].text, 'hi', 'a copy: later changes to the object do not reach the store');
    assert.notEqual(store.get('resp_1'), got, 'each read is a fresh copy');
    assert.equal(ownEntry(got, 'o1'), got);
    assert.equal(ownEntry(got, 'o2'), null);
    assert.equal(store.delete('resp_1'), true);
    assert.equal(store.delete('resp_1'), false);
    assert.equal(store.get('resp_1'), null);
  });

  test('a relayed entry is kept as given and read-only; a made entry of the same id replaces it, and back', () => {
    const store = new MemoryResponseStore(null);
    const entry = { kind: 'relayed' as const, org: 'o1', provider: 'openai' as const };
    store.put('resp_r', entry);
    entry.provider = 'azure' as any;
    const got = store.get('resp_r')!;
    assert.deepEqual(got, { kind: 'relayed', org: 'o1', provider: 'openai' }, 'later changes to the object put do not reach the store');
    assert.ok(Object.isFrozen(got), 'a reader cannot change what the next reader gets');
    store.put('resp_r', made('o1', 'now made'));
    assert.equal(store.get('resp_r')!.kind, 'made');
    store.put('resp_r', { kind: 'relayed', org: 'o1', provider: 'openai' });
    assert.equal(store.get('resp_r')!.kind, 'relayed');
    assert.equal(store.delete('resp_r'), true);
    assert.equal(store.get('resp_r'), null);
  });

  test('bounded in count and bytes, least recently used first, relayed ids apart; an entry over the limit is not kept', () => {
    const store = new MemoryResponseStore(null, { maxEntries: 3, maxRelayed: 5, maxBytes: 10_000, maxEntryBytes: 4_000 });
    for (let i = 0; i < 4; i++) store.put(`resp_${i}`, made('o', 'x'));
    assert.equal(store.get('resp_0'), null, 'the oldest of 4 went');
    assert.ok(store.get('resp_3'));
    store.put('resp_big', made('o', 'y'.repeat(5_000)));
    assert.equal(store.get('resp_big'), null);
    for (let i = 0; i < 10; i++) store.put(`resp_relayed_${i}`, { kind: 'relayed', org: 'o', provider: 'openai' });
    assert.ok(store.get('resp_3'), 'relayed ids never evict made responses');
    assert.equal(store.get('resp_relayed_4'), null, 'relayed ids have their own bound');
    assert.equal((store.get('resp_relayed_9') as { provider: string }).provider, 'openai');
    const byBytes = new MemoryResponseStore(null, { maxBytes: 7_000, maxEntryBytes: 4_000 });
    byBytes.put('resp_a', made('o', 'a'.repeat(3_000)));
    byBytes.put('resp_b', made('o', 'b'.repeat(3_000)));
    byBytes.put('resp_c', made('o', 'c'.repeat(3_000)));
    assert.equal(byBytes.get('resp_a'), null, 'over the byte bound: the least recently used went');
    assert.ok(byBytes.get('resp_c'));
  });

  test('a request input as items: a string is one user message, an easy message gets its type', () => {
    assert.deepEqual(inputItemsOf('hi'), [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
    assert.deepEqual(inputItemsOf([{ role: 'developer', content: 'x' }, 7, { type: 'function_call_output', call_id: 'c', output: 'o' }]), [
      { type: 'message', role: 'developer', content: 'x' },
      { type: 'function_call_output', call_id: 'c', output: 'o' },
    ]);
    assert.deepEqual(inputItemsOf(undefined), []);
  });
});

describe('the Redis response store on the test Redis (127.0.0.1:6379)', () => {
  test('ready once connected; a write is sent before put returns, so a read that follows finds it', async () => {
    const store = new RedisResponseStore({ url: 'redis://127.0.0.1:6379', timeoutMs: 2000, keyPrefix: 'svc:test-store:' }, null);
    try {
      await store.whenReady();
      const redis = store.redis!;
      assert.equal(redis.status, 'ready', 'the test needs Redis on 127.0.0.1:6379');
      const sent: string[] = [];
      const set = redis.set.bind(redis);
      (redis as any).set = (...args: any[]) => {
        sent.push(args[0]);
        return (set as any)(...args);
      };
      store.put('resp_now', { kind: 'relayed', org: 'o', provider: 'openai' });
      assert.deepEqual(sent, ['svc:test-store:resp_now'], 'on its way when put returns, not a turn of the loop later');
      assert.deepEqual(await store.get('resp_now'), { kind: 'relayed', org: 'o', provider: 'openai' });
      assert.equal(await store.delete('resp_now'), true);
    } finally {
      await store.close();
    }
  });
});

describe('the Redis response store when Redis is down', () => {
  test('ready resolves once the connect has failed, never rejects', async () => {
    const store = new RedisResponseStore({ url: 'redis://127.0.0.1:1', timeoutMs: 200 }, null);
    await store.whenReady();
    assert.notEqual(store.redis?.status, 'ready');
    await store.close();
  });

  test('a read rejects (the stages answer 503), a write is dropped without throwing, close resolves', async () => {
    const store = new RedisResponseStore({ url: 'redis://127.0.0.1:1', timeoutMs: 200 }, null);
    store.put('resp_1', { kind: 'relayed', org: 'o', provider: 'openai' });
    await assert.rejects(Promise.resolve(store.get('resp_1')), /response store|ECONNREFUSED|not connected|not ready|closed/);
    await assert.rejects(Promise.resolve(store.delete('resp_1')));
    await store.close();
  });
});

describe('what the response-store observer captures', () => {
  test('a relayed answer: the id in its first bytes, JSON or stream', () => {
    const json = new ResponseCapture(true, false);
    assert.equal(json.push(fixture('responses-text.json').subarray(0, 200)), true);
    assert.equal(json.id, 'resp_0827ae5b7debffd10069cbcbd8749c819bb7f7bcf278d05379');
    const stream = new ResponseCapture(true, true);
    assert.equal(stream.push(fixture('responses-stream.sse')), true);
    assert.equal(stream.id, 'resp_0e054c0b7ea15b350069cbcbfbc338819898e8a9ab6185e5d3');
    const none = new ResponseCapture(true, false);
    assert.equal(none.push(Buffer.from('{"object":"list"}')), false);
    assert.equal(none.done, true, 'only the first piece is read');
  });

  test('a made answer: the final response of a stream split anywhere; the JSON body whole', () => {
    const sse = fixture('responses-stream-function-call.sse');
    for (const seed of [1, 7, 42]) {
      const capture = new ResponseCapture(false, true);
      const completions = pieces(sse, seed).filter((p) => capture.push(p)).length;
      assert.equal(completions, 1, `seed ${seed}: complete exactly once`);
      assert.equal(capture.response!.id, 'resp_689f74e452808192a56e86fa1107aa6b0d633b0c8e3fd59d');
      assert.equal(capture.response!.output[0].name, 'compose_music');
    }
    const body = fixture('responses-function-call.json');
    const capture = new ResponseCapture(false, false);
    const parts = pieces(body, 3, 300);
    const done = parts.map((p) => capture.push(p));
    assert.deepEqual(done.indexOf(true), parts.length - 1, 'complete at the last piece');
    assert.equal(capture.response!.output[0].call_id, 'call_u7hc7oWBn1bvGlcSegpiJOiJ');
  });

  test('a stream without the final event keeps nothing', () => {
    const capture = new ResponseCapture(false, true);
    const sse = fixture('responses-stream.sse').toString('utf8');
    capture.push(Buffer.from(sse.slice(0, sse.indexOf('event: response.completed'))));
    assert.equal(capture.response, null);
  });
});

describe('the Responses stream for the log', () => {
  test('folded from the recorded streams: the final response with the texts of the deltas', () => {
    for (const name of ['responses-stream.sse', 'responses-stream-function-call.sse', 'responses-stream-reasoning-summary.sse', 'responses-stream-reasoning-function-call.sse']) {
      const recorder = new ResponseRecorder(true, 10 * 1024 * 1024, responses);
      for (const p of pieces(fixture(name), 5, 500)) recorder.push(p);
      const rec = recorder.finish(200);
      const final = eventsOf(fixture(name)).find((e) => e.type === 'response.completed')!.response as Json;
      const body = rec.body as Json;
      assert.equal(body.id, final.id, name);
      assert.equal(body.status, 'completed', name);
      assert.deepEqual(rec.usage, final.usage, name);
      assert.deepEqual(
        body.output.map((o: Json) => o.type),
        final.output.map((o: Json) => o.type),
        name,
      );
      for (let i = 0; i < final.output.length; i++) {
        const want = final.output[i] as Json;
        const got = body.output[i] as Json;
        if (want.type === 'message') assert.equal(got.content[0].text, want.content[0].text, name);
        if (want.type === 'function_call') assert.equal(got.arguments, want.arguments, name);
        if (want.type === 'reasoning') assert.deepEqual(got.summary.map((s: Json) => s.text), want.summary.map((s: Json) => s.text), name);
      }
    }
  });

  test('the texts stop at the budget and the record says it was truncated', () => {
    const recorder = new ResponseRecorder(true, 1000, responses);
    recorder.push(fixture('responses-stream-reasoning-summary.sse'));
    const rec = recorder.finish(200);
    assert.equal(rec.truncated, true);
    const kept = JSON.stringify((rec.body as Json).output);
    assert.ok(kept.length < 4000, `kept ${kept.length} characters`);
  });

  test('an event folds into nothing it does not name', () => {
    const budget = { append: (a: unknown, b: string) => String(a ?? '') + b };
    const r = foldResponsesEvent(null, { type: 'response.output_text.delta', output_index: 3, content_index: 0, delta: 'x' }, budget);
    assert.deepEqual(r.output, []);
  });
});

describe('the error event and the removed-members header', () => {
  test('a gateway error as the Responses API’s error event', () => {
    const data = responsesErrorEventData('{"error":{"message":"lost","type":"server_error","param":null,"code":"upstream_disconnected"}}');
    assert.deepEqual(JSON.parse(data), { type: 'error', code: 'upstream_disconnected', message: 'lost', param: null });
    assert.match(responsesSse.error('{"error":{"message":"m","type":"t","param":null,"code":null}}'), /^event: error\ndata: \{"type":"error","code":"t",/);
    assert.equal(responsesSse.chunk('{"type":"response.created"}'), 'event: response.created\ndata: {"type":"response.created"}\n\n');
  });

  test('paths joined, unsafe characters encoded, capped', () => {
    assert.equal(removedMembersHeader(undefined), null);
    assert.equal(removedMembersHeader([]), null);
    assert.equal(removedMembersHeader(['tools[8]', 'include']), 'tools[8], include');
    assert.equal(removedMembersHeader(['metadata.a,b%\r\né']), 'metadata.a%2Cb%25%0D%0A%C3%A9');
    assert.equal(removedMembersHeader(['\ud800']), '%EF%BF%BD');
    const many = Array.from({ length: 1000 }, (_, i) => `tools[${i}]`);
    const value = removedMembersHeader(many)!;
    assert.ok(value.length <= MAX_HEADER_CHARS + 20);
    assert.match(value, /, \.\.\.\(\+\d+ more\)$/);
  });
});
