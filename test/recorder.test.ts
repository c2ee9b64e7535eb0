/** Unit tests: the response recorder (SSE assembly from recorded provider streams) and the log queue. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { LogQueue, serializeRecord } from '../proxy/log-queue.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';

const fixture = (p: string) => readFileSync(new URL(`./fixtures/providers/${p}`, import.meta.url));

function feed(rec: ResponseRecorder, bytes: Buffer, piece: number) {
  for (let i = 0; i < bytes.length; i += piece) rec.push(bytes.subarray(i, i + piece));
}

test('OpenAI stream fed in odd-sized pieces assembles text and usage', () => {
  for (const piece of [1, 7, 4096]) {
    const rec = new ResponseRecorder(true, 1 << 20);
    feed(rec, fixture('openai/chat-completion-stream.sse'), piece);
    const out = rec.finish(200);
    const body = out.body as any;
    assert.equal(body.choices[0].message.content, 'The capital of the UK is London.');
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(out.usage?.prompt_tokens, 78);
    assert.equal(out.error, null);
  }
});

test('tool-call stream: arguments concatenated', () => {
  const rec = new ResponseRecorder(true, 1 << 20);
  feed(rec, fixture('openai/chat-completion-stream-tool-call.sse'), 13);
  const body = rec.finish(200).body as any;
  assert.equal(body.choices[0].message.tool_calls[0].function.arguments, '{"country":"UK"}');
  assert.equal(body.choices[0].finish_reason, 'tool_calls');
});

test('DeepSeek: reasoning content and usage on the finish chunk', () => {
  const rec = new ResponseRecorder(true, 1 << 20);
  feed(rec, fixture('deepseek/chat-completion-stream-reasoner.sse'), 1000);
  const out = rec.finish(200);
  const msg = (out.body as any).choices[0].message;
  assert.ok(msg.reasoning_content.length > 100);
  assert.ok(msg.content.length > 0);
  assert.ok(out.usage && out.usage.completion_tokens > 0);
});

test('Groq stream that errors midway keeps the error', () => {
  const rec = new ResponseRecorder(true, 1 << 20);
  feed(rec, fixture('groq/chat-completion-stream-error.sse'), 512);
  const out = rec.finish(200);
  assert.match(out.error ?? '', /tool_use_failed/);
});

test('the cap bounds what is kept', () => {
  const rec = new ResponseRecorder(true, 10);
  feed(rec, fixture('openai/chat-completion-stream.sse'), 100);
  const out = rec.finish(200);
  assert.equal(out.truncated, true);
  assert.ok(((out.body as any).choices[0].message.content ?? '').length <= 10);
  const json = new ResponseRecorder(false, 5);
  json.push(Buffer.from('{"a":1234567}'));
  assert.equal(json.finish(200).truncated, true);
});

test('non-stream body parsed; error body kept on 4xx', () => {
  const rec = new ResponseRecorder(false, 1 << 20);
  rec.push(fixture('openai/chat-completion.json'));
  assert.equal(rec.finish(200).usage?.total_tokens, 32);
  const err = new ResponseRecorder(false, 1 << 20);
  err.push(fixture('openai/error-429.json'));
  assert.match(err.finish(429).error ?? '', /rate_limit_exceeded/);
});

test('a record with raw JSON members reads back as the record with those values (property)', () => {
  const member = fc.constantFrom('requestBody', 'responseBody', 'a"b', '');
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 }), fc.uniqueArray(fc.tuple(member, fc.jsonValue()), { selector: ([k]) => k, maxLength: 2 }), fc.boolean(), (record, raws, spaced) => {
      const base: Record<string, unknown> = { ...record };
      for (const [k] of raws) delete base[k];
      // Raw texts as a client might send them: compact or spread over lines.
      const rawMembers = raws.map(([k, v]) => [k, JSON.stringify(v, null, spaced ? 2 : undefined)] as const);
      const expected: Record<string, unknown> = { ...base };
      for (const [k, v] of raws) expected[k] = v;
      assert.deepEqual(JSON.parse(serializeRecord(base, rawMembers)), JSON.parse(JSON.stringify(expected)));
    }),
    { numRuns: 500 },
  );
  assert.throws(() => serializeRecord([] as unknown as object, []), /JSON object/);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => serializeRecord(cyclic, [['requestBody', '{}']]), TypeError);
});

test('the recorder hands over a JSON answer\'s text as received, and none for a stream', () => {
  const text = '{ "id": "x", "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3} }';
  const r = new ResponseRecorder(false, 1 << 20);
  r.push(Buffer.from(text));
  const out = r.finish(200);
  assert.equal(out.json, text);
  assert.deepEqual(out.usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  const bad = new ResponseRecorder(false, 1 << 20);
  bad.push(Buffer.from('not json'));
  assert.equal(bad.finish(200).json, null);
  const s = new ResponseRecorder(true, 1 << 20);
  s.push(Buffer.from('data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n'));
  assert.equal(s.finish(200).json, null);
});

test('log queue: bounded by count (oldest dropped), batches re-queued on link loss, acked once', () => {
  const sent: string[] = [];
  let up = true;
  const q = new LogQueue({ maxRecords: 3, maxBytes: 1 << 20, batchSize: 2 }, (m) => (up ? (sent.push(m), true) : false));
  for (let i = 0; i < 5; i++) q.push({ i });
  assert.equal(q.getStats().dropped, 2);
  q.flush();
  assert.equal(sent.length, 2);
  const first = JSON.parse(sent[0]!);
  assert.deepEqual(first.records, [{ i: 2 }, { i: 3 }]);
  q.linkLost();
  assert.equal(q.getStats().queued, 3);
  up = false;
  q.flush();
  assert.equal(q.getStats().inFlight, 0);
  up = true;
  q.flush();
  const again = JSON.parse(sent[2]!);
  assert.deepEqual(again.records, [{ i: 2 }, { i: 3 }], 'oldest first after re-queue');
  q.ack(again.batchId);
  q.ack(again.batchId);
  assert.equal(q.getStats().acknowledged, 2);
});

test('log queue: bounded by bytes', () => {
  const q = new LogQueue({ maxRecords: 1000, maxBytes: 100, batchSize: 10 }, () => false);
  for (let i = 0; i < 20; i++) q.push({ pad: 'x'.repeat(20) });
  assert.ok(q.getStats().queuedBytes <= 100);
  assert.ok(q.getStats().dropped > 0);
});
