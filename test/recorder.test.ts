/** Unit tests: the response recorder (SSE assembly from recorded provider streams), the record batch codec and the log queue. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { LogQueue } from '../proxy/log-queue.ts';
import { responses } from '../proxy/endpoints/responses.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { decodeBatch, encodeBatch, encodeRecord, RECORD_BATCH_VERSION } from '../shared/record-batch.ts';

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

/** Runs `fn` counting the JSON.parse calls whose text starts with `prefix`. */
function countingParses<T>(prefix: string, fn: () => T): { result: T; parses: number } {
  const parse = JSON.parse;
  let parses = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    if (typeof text === 'string' && text.startsWith(prefix)) parses++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    return { result: fn(), parses };
  } finally {
    JSON.parse = parse;
  }
}

test('Responses stream: the final event supersedes created and in_progress, which are then never parsed', () => {
  const sse = fixture('openai/responses-stream.sse');
  const completed = JSON.parse(
    sse
      .toString()
      .split('\n')
      .find((l) => l.startsWith('data: {"type":"response.completed"'))!
      .slice(6),
  ).response;
  for (const piece of [1, 13, 1 << 16]) {
    const { result: out, parses } = countingParses('{"type":"response.', () => {
      const rec = new ResponseRecorder(true, 1 << 20, responses);
      feed(rec, sse, piece);
      return rec.finish(200);
    });
    assert.deepEqual(out.body, completed, 'the logged body is the final response, output folded from the deltas');
    assert.deepEqual(out.usage, completed.usage);
    // 16 events: the two superseded lifecycle events are not parsed.
    assert.equal(parses, 14);
  }
});

test('Responses stream cut before its final event: the newest lifecycle event is folded in at the end', () => {
  const sse = fixture('openai/responses-stream.sse').toString();
  const cut = sse.slice(0, sse.indexOf('event: response.output_item.done'));
  const rec = new ResponseRecorder(true, 1 << 20, responses);
  rec.push(Buffer.from(cut));
  const body = rec.finish(200).body as any;
  assert.equal(body.status, 'in_progress');
  assert.match(body.id, /^resp_/);
  assert.equal(body.model, 'gpt-4.1-nano-2025-04-14');
  assert.ok(body.output[0].content[0].text.length > 0, 'the text folded from the deltas so far');
});

test('a non-stream 2xx body is handed over as its bytes, unparsed; an error body is parsed and kept on 4xx', () => {
  const rec = new ResponseRecorder(false, 1 << 20);
  const answer = fixture('openai/chat-completion.json');
  rec.push(answer.subarray(0, 10));
  rec.push(answer.subarray(10));
  const out = rec.finish(200);
  assert.deepEqual(out.raw, answer);
  assert.equal(out.body, null, 'admin parses it');
  assert.equal(out.usage, null, 'admin reads its usage');
  const notJson = new ResponseRecorder(false, 1 << 20);
  notJson.push(Buffer.from('not json'));
  assert.equal(notJson.finish(200).raw?.toString(), 'not json', 'unchecked: admin keeps it as {raw}');
  const err = new ResponseRecorder(false, 1 << 20);
  err.push(fixture('openai/error-429.json'));
  const failed = err.finish(429);
  assert.match(failed.error ?? '', /rate_limit_exceeded/);
  assert.equal(failed.raw, null);
  assert.equal((failed.body as any).error.code, 'rate_limit_exceeded');
  const s = new ResponseRecorder(true, 1 << 20);
  s.push(Buffer.from('data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n'));
  assert.equal(s.finish(200).raw, null, 'a stream is folded, not kept as bytes');
});

test('a record batch decodes to the heads and body bytes encoded (property)', () => {
  const body = fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: null });
  fc.assert(
    fc.property(fc.uuid(), fc.array(fc.tuple(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }), body, body), { maxLength: 6 }), (batchId, records) => {
      const message = encodeBatch(batchId, records.map(([head, req, res]) => encodeRecord(JSON.stringify(head), req, res)));
      const decoded = decodeBatch(message);
      assert.equal(decoded.batchId, batchId);
      assert.equal(decoded.records.length, records.length);
      decoded.records.forEach((r, i) => {
        const [head, req, res] = records[i]!;
        assert.deepEqual(JSON.parse(r.head.toString()), JSON.parse(JSON.stringify(head)));
        assert.deepEqual(r.requestBody, req);
        assert.deepEqual(r.responseBody, res);
      });
    }),
    { numRuns: 300 },
  );
});

test('a record batch that is cut, padded or of another version is refused, naming what is wrong', () => {
  const message = encodeBatch('0b0e4f63-5a2b-4c1c-9d7e-2f8f3f1b6a11', [encodeRecord('{"a":1}', Buffer.from('{}'), null)]);
  assert.throws(() => decodeBatch(message.subarray(0, message.length - 1)), /record 0: request body of 2 bytes overruns|cut before/);
  assert.throws(() => decodeBatch(Buffer.concat([message, Buffer.from([0])])), /1 bytes after the last of 1 records/);
  const newer = Buffer.from(message);
  newer[0] = RECORD_BATCH_VERSION + 1;
  assert.throws(() => decodeBatch(newer), new RegExp(`version ${RECORD_BATCH_VERSION + 1} \\(expected 1 to ${RECORD_BATCH_VERSION}\\)`));
  assert.throws(() => decodeBatch(message.subarray(0, 10)), /shorter than its header/);
  assert.throws(() => encodeBatch('short', []), /36 ASCII/);
});

const heads = (message: Buffer) => decodeBatch(message).records.map((r) => JSON.parse(r.head.toString()));

test('log queue: bounded by count (oldest dropped), batches re-queued on link loss, acked once', () => {
  const sent: Buffer[] = [];
  let up = true;
  const q = new LogQueue({ maxRecords: 3, maxBytes: 1 << 20, batchSize: 2 }, (m) => (up ? (sent.push(m), true) : false));
  for (let i = 0; i < 5; i++) q.push({ i }, i === 4 ? Buffer.from('{"req":4}') : null);
  assert.equal(q.getStats().dropped, 2);
  q.flush();
  assert.equal(sent.length, 2);
  assert.deepEqual(heads(sent[0]!), [{ i: 2 }, { i: 3 }]);
  assert.equal(decodeBatch(sent[1]!).records[0]!.requestBody?.toString(), '{"req":4}', 'the body travels as its bytes');
  q.linkLost();
  assert.equal(q.getStats().queued, 3);
  up = false;
  q.flush();
  assert.equal(q.getStats().inFlight, 0);
  up = true;
  q.flush();
  const again = decodeBatch(sent[2]!);
  assert.deepEqual(heads(sent[2]!), [{ i: 2 }, { i: 3 }], 'oldest first after re-queue');
  q.ack(again.batchId);
  q.ack(again.batchId);
  assert.equal(q.getStats().acknowledged, 2);
});

test('log queue: after an ack only full batches go out; the timer\'s flush sends the rest', () => {
  const sent: Buffer[] = [];
  const q = new LogQueue({ maxRecords: 100, maxBytes: 1 << 20, batchSize: 3 }, (m) => (sent.push(m), true));
  for (let i = 0; i < 4; i++) q.push({ i });
  q.flush(true);
  assert.deepEqual(sent.map(heads), [[{ i: 0 }, { i: 1 }, { i: 2 }]]);
  q.flush(true);
  assert.equal(sent.length, 1, 'one record waits for the timer');
  q.flush();
  assert.deepEqual(heads(sent[1]!), [{ i: 3 }]);
  q.push({ unserializable: 1n });
  assert.equal(q.getStats().unserializable, 1);
});

test('log queue: bounded by bytes', () => {
  const q = new LogQueue({ maxRecords: 1000, maxBytes: 100, batchSize: 10 }, () => false);
  for (let i = 0; i < 20; i++) q.push({ pad: 'x'.repeat(20) });
  assert.ok(q.getStats().queuedBytes <= 100);
  assert.ok(q.getStats().dropped > 0);
});
