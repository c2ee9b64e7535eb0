/**
 * An exchange that ends abnormally lets go of its zlib decoder and its stream mapper
 * (proxy/upstream/exchange.ts `release`): the client left, the provider's connection broke or went
 * silent (undici's `onError`), or the exchange stopped reading (an answer too large). Without it the
 * zlib handle and its buffered output lived until garbage collection and the piped mapper was never
 * ended. A fake request context stands in for the gateway; the decoder and mapper are real streams.
 */
import assert from 'node:assert/strict';
import { PassThrough, type Transform } from 'node:stream';
import { test } from 'node:test';
import zlib from 'node:zlib';
import type { RequestContext } from '../proxy/pipeline/context.ts';
import { UpstreamExchange } from '../proxy/upstream/exchange.ts';

/** The least of a request context the exchange reads on these paths; `finished`: the client left. */
function fakeContext(finished: boolean): { ctx: RequestContext; ended: string[] } {
  const ended: string[] = [];
  const ctx = {
    exchange: null,
    finished,
    phase: 'upstream',
    timedOut: false,
    deadlineMs: Infinity,
    responseAtMs: performance.now(),
    provider: 'openai',
    error: null,
    gw: { config: { server: { upstreamTimeoutMs: 60_000, sendTimeoutMs: 60_000, maxTranslatedResponseBytes: 1 << 20 } }, observers: { chunk: [] } },
    kind: { errorBody: (e: Error) => ({ error: { message: e.message } }), framing: null },
    rateLimitHeaders: null,
    req: { complete: true },
    res: {
      headersSent: true,
      writableEnded: false,
      destroyed: false,
      writeHead: (status: number) => void ended.push(`status ${status}`),
      end: (s: string) => void ended.push(String(s)),
      destroy: () => void ended.push('destroyed'),
    },
  };
  return { ctx: ctx as unknown as RequestContext, ended };
}

/** An exchange that has answered a gzip stream through `mapper` (as ./response.ts sets it up). */
function decodingStream(ctx: RequestContext, mapper: Transform): { exchange: UpstreamExchange; decoder: Transform } {
  const exchange = new UpstreamExchange(ctx);
  ctx.exchange = exchange;
  exchange.onConnect(() => {});
  exchange.responded = true;
  exchange.toMapper(mapper);
  const decoder = zlib.createGunzip();
  exchange.decodeWith(decoder, 'gzip');
  exchange.onData(zlib.gzipSync('data: {"a":1}\n\n').subarray(0, 12));
  return { exchange, decoder };
}

test('the client left mid-stream: decoder and mapper are destroyed', () => {
  const { ctx } = fakeContext(true);
  const mapper = new PassThrough();
  const { exchange, decoder } = decodingStream(ctx, mapper);
  exchange.onError(new Error('client closed the connection'));
  assert.equal(decoder.destroyed, true);
  assert.equal(mapper.destroyed, true);
});

test('the provider broke its connection mid-stream: decoder and mapper destroyed, the stream ended with an error event', () => {
  const { ctx, ended } = fakeContext(false);
  const mapper = new PassThrough();
  const { exchange, decoder } = decodingStream(ctx, mapper);
  exchange.onError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
  assert.equal(decoder.destroyed, true);
  assert.equal(mapper.destroyed, true);
  assert.match(ended.join(''), /connection lost mid-response/);
});

test('a collected answer being decoded when the provider went away: the decoder is destroyed, the client answered 502', () => {
  const { ctx, ended } = fakeContext(false);
  (ctx.res as { headersSent: boolean }).headersSent = false;
  const exchange = new UpstreamExchange(ctx);
  ctx.exchange = exchange;
  exchange.onConnect(() => {});
  exchange.responded = true;
  let handed = false;
  exchange.collect(() => (handed = true));
  const decoder = zlib.createGunzip();
  exchange.decodeWith(decoder, 'gzip');
  exchange.onData(zlib.gzipSync('{"a":1}').subarray(0, 8));
  exchange.onError(new Error('other side closed'));
  assert.equal(decoder.destroyed, true);
  assert.equal(handed, false);
  assert.equal(ended[0], 'status 502');
});

test('an answer outgrowing the collect limit: the decoder is destroyed (stopReading)', async () => {
  const { ctx } = fakeContext(false);
  (ctx.res as { headersSent: boolean }).headersSent = false;
  (ctx.gw.config.server as { maxTranslatedResponseBytes: number }).maxTranslatedResponseBytes = 4;
  const exchange = new UpstreamExchange(ctx);
  ctx.exchange = exchange;
  exchange.onConnect(() => {});
  exchange.responded = true;
  exchange.collect(() => {});
  const decoder = zlib.createGunzip();
  exchange.decodeWith(decoder, 'gzip');
  decoder.write(zlib.gzipSync('{"a":"more than four bytes"}'));
  // zlib decodes on the thread pool: wait for its output (or give up after a second).
  await new Promise<void>((resolve) => {
    decoder.once('close', resolve);
    setTimeout(resolve, 1000).unref();
  });
  assert.equal(decoder.destroyed, true);
});

test('the client left after the provider finished: abort() releases the decoder and the mapper', () => {
  // Once undici called onComplete its abort does nothing and onError never runs: the client's leaving
  // (pipeline/finish.ts calls exchange.abort) is the last chance to let go of a mapper nobody reads.
  const { ctx } = fakeContext(false);
  const mapper = new PassThrough({ highWaterMark: 1 });
  const { exchange, decoder } = decodingStream(ctx, mapper);
  exchange.onComplete();
  (ctx as { finished: boolean }).finished = true;
  exchange.abort(new Error('client closed the connection'));
  assert.equal(mapper.destroyed, true, 'the mapper holding output nobody reads is destroyed');
  assert.equal(decoder.destroyed, true);
});

test('a stream mapper that fails stops the provider: its answer is no longer read and undici\'s request is aborted', async () => {
  // The mapper's error used to end the client's answer normally (so finish aborted nothing) while
  // the provider's stream went on being read and dropped (tokens billed), or, paused on the mapper,
  // stayed paused for good once finish untracked its deadline.
  const { answerMappedStream } = await import('../proxy/upstream/mapped.ts');
  const { ctx } = fakeContext(false);
  const mapper = new PassThrough();
  const wrote: Buffer[] = [];
  const resEvents: string[] = [];
  Object.assign(ctx as object, {
    call: {},
    binding: { createStreamMapper: () => mapper },
    res: { headersSent: false, writableEnded: false, destroyed: false, writeHead: () => {}, write: (c: Buffer) => (wrote.push(c), true), once: () => {}, end: () => void resEvents.push('end') },
  });
  const exchange = new UpstreamExchange(ctx);
  ctx.exchange = exchange;
  const aborted: string[] = [];
  exchange.onConnect((err) => void aborted.push(err?.message ?? 'aborted'));
  exchange.responded = true;
  answerMappedStream(exchange, 200, {});
  exchange.onData(Buffer.from('data: {"a":1}\n\n'));
  mapper.destroy(new Error('the mapper rejected an event'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(resEvents, ['end'], 'the client\'s answer is ended');
  assert.equal(ctx.error, 'the mapper rejected an event');
  assert.equal(aborted.length, 1, 'undici\'s request is aborted');
  assert.equal(ctx.phase, 'none', 'no deadline left for a request no longer read');
  const before = wrote.length;
  assert.equal(exchange.onData(Buffer.from('data: {"more":1}\n\n')), true, 'what still arrives is dropped');
  assert.equal(wrote.length, before);
});
