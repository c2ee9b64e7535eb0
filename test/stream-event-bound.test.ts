/**
 * The stream parsers of the log's recorder and of the stream translators are bounded (one server-sent event that
 * never ends took the proxy to its heap limit; see test/e2e-stream-event-bound.test.ts for the whole path):
 * an event longer than the bound stops the recorder (record marked truncated, what came before kept) and fails a
 * translator with 502 `upstream_response_too_large`, after the events it translated before; a stream within the
 * bound is read as before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../proxy/errors.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { MAX_STREAM_EVENT_CHARS, SseTranslatorStream } from '../proxy/translators/shared/translator-stream.ts';

const MIB = 1024 * 1024;
const Y = Buffer.alloc(MIB, 'y');
const CHUNK = (content: string) => `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;

describe('ResponseRecorder, an endless event', () => {
  test('stops parsing past the bound: truncated, the content before it kept, memory not grown with the bytes', () => {
    const rec = new ResponseRecorder(true, MIB);
    rec.push(Buffer.from(CHUNK('Hello')));
    rec.push(Buffer.from('data: '));
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < MAX_STREAM_EVENT_CHARS / MIB + 40; i++) rec.push(Y);
    const grown = process.memoryUsage().heapUsed - before;
    const out = rec.finish(200);
    assert.equal(out.truncated, true);
    assert.equal((out.body as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, 'Hello');
    assert.ok(grown < 2 * MAX_STREAM_EVENT_CHARS, `heap grew ${grown} bytes for ${MAX_STREAM_EVENT_CHARS + 40 * MIB} sent`);
  });

  test('a stream within the bound is read as before', () => {
    const rec = new ResponseRecorder(true, MIB);
    rec.push(Buffer.from(CHUNK('a') + CHUNK('b') + 'data: [DONE]\n\n'));
    const out = rec.finish(200);
    assert.equal(out.truncated, false);
    assert.equal((out.body as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, 'ab');
  });
});

/** A translator that writes each event's data as one line. */
class EchoStream extends SseTranslatorStream {
  protected onEvent(event: EventSourceMessage): void {
    this.out += `${event.data.slice(0, 20)}\n`;
  }
  protected onEnd(): void {
    this.state = 'done';
  }
}

/** Writes `pieces` into a fresh EchoStream; what it pushed and the error it failed with (null: it ended). */
async function run(pieces: Buffer[]): Promise<{ out: string; error: Error | null }> {
  const stream = new EchoStream();
  let out = '';
  stream.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<Error | null>((resolve) => {
    stream.on('end', () => resolve(null));
    stream.on('error', (err) => resolve(err));
  });
  for (const p of pieces) if (!stream.destroyed) stream.write(p);
  if (!stream.destroyed) stream.end();
  return { out, error: await ended };
}

describe('SseTranslatorStream, an endless event', () => {
  test('fails with 502 upstream_response_too_large after the events before it', async () => {
    const pieces = [Buffer.from('data: first\n\ndata: ')];
    for (let i = 0; i < MAX_STREAM_EVENT_CHARS / MIB + 2; i++) pieces.push(Y);
    const { out, error } = await run(pieces);
    assert.equal(out, 'first\n');
    assert.ok(error instanceof GatewayError, `a GatewayError, got ${String(error)}`);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_response_too_large');
  });

  test('an event just within the bound passes', async () => {
    const big = Buffer.alloc(10 * MIB, 'x');
    const { out, error } = await run([Buffer.from('data: '), big, Buffer.from('\n\ndata: next\n\n')]);
    assert.equal(error, null);
    assert.equal(out, `${'x'.repeat(20)}\nnext\n`);
  });
});
