/**
 * A hit's answer: written as a provider's answer would come (`Svc-Id`, `Svc-Provider`, the admitted
 * request's rate-limit headers, plus `Svc-Cache: HIT`), through the response observers (metrics,
 * access log, log record see it as any answer; the record also gets the usage stored with the answer, when its
 * stream withheld it from its client). A stored stream is replayed as a stream: its SSE
 * events in order, each written when the client has read the previous ones (backpressure: the next
 * write waits for `drain`), so a slow client never makes the gateway buffer the whole answer.
 */
import type { ServerResponse } from 'node:http';
import { responseChunk, responseStarted } from '../observers/dispatch.ts';
import { contextOf, type RequestContext } from '../pipeline/context.ts';
import type { CachedAnswer } from './types.ts';

/** The end of an SSE event (`\n\n`; a provider writing `\r\n\r\n` is replayed as one piece, still in order). */
const EVENT_END = Buffer.from('\n\n');

/** Answers `ctx` with `answer` (see the module comment); `ctx.cache` is set. */
export function answerFromCache(ctx: RequestContext, answer: CachedAnswer): void {
  const cache = ctx.cache!;
  cache.hitOf = answer.requestId;
  cache.usage = answer.usage ?? null;
  const headers: Record<string, string> = { ...ctx.rateLimitHeaders, 'content-type': answer.contentType, 'svc-id': ctx.id, 'svc-cache': 'HIT' };
  if (ctx.provider) headers['svc-provider'] = ctx.provider;
  ctx.status = answer.status;
  ctx.responseAtMs = performance.now();
  responseStarted(ctx, answer.streamed);
  if (!answer.streamed) {
    headers['content-length'] = String(answer.body.length);
    ctx.res.writeHead(answer.status, headers);
    ctx.firstByteMs = performance.now();
    responseChunk(ctx, answer.body);
    ctx.res.end(answer.body);
    return;
  }
  headers['cache-control'] = 'no-cache';
  ctx.res.writeHead(answer.status, headers);
  cache.replay = events(answer.body);
  cache.replayAt = 0;
  pump(ctx);
}

/** The body cut after each `\n\n` (views, no copies). */
function events(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (let at = body.indexOf(EVENT_END); at >= 0; at = body.indexOf(EVENT_END, from)) {
    out.push(body.subarray(from, at + 2));
    from = at + 2;
  }
  if (from < body.length) out.push(body.subarray(from));
  return out;
}

/** Writes events until the socket's buffer is full (then waits for `drain`) or the last was written. */
function pump(ctx: RequestContext): void {
  const cache = ctx.cache!;
  const list = cache.replay!;
  const res = ctx.res;
  while (cache.replayAt < list.length) {
    if (res.destroyed) return;
    const piece = list[cache.replayAt++]!;
    if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
    responseChunk(ctx, piece);
    if (!res.write(piece)) {
      res.once('drain', onDrain);
      return;
    }
  }
  cache.replay = null;
  res.end();
}

/** The shared `drain` listener: the replay of the response's request continues. */
function onDrain(this: ServerResponse): void {
  pump(contextOf(this));
}
