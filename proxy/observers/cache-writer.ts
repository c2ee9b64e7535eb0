/**
 * The cache writer (issue 18): a miss's answer (a request with `Svc-Cache-Enabled: true` that the
 * cache could not answer) is recorded as the client gets it, bounded by `cache.max-entry-size`, and
 * stored in its key's bucket once the response completed: 2xx, written to its end, no error
 * mid-stream (the gateway's own, or an error event the provider sent), the client still there. Hits and requests without the header pay one null check.
 */
import type { RequestContext } from '../pipeline/context.ts';
import type { ResponseObserver } from './types.ts';

/**
 * A stream that ended in an error event: Anthropic's and the Responses API's `event: error`, the
 * Responses API's `response.failed`, an OpenAI-format `data: {"error": …}` (a provider may end a 200
 * stream so, and the gateway ends a cut stream so). Such an answer is no answer to keep.
 */
const ERROR_EVENT = /(?:^|\n)(?:event: ?(?:error|response\.failed)\b|data: ?\{"error")/;
/** How much of a stream's end is searched for an error event (bytes). */
const ERROR_TAIL = 8192;

/** True when the last events of `body` carry an error (see {@link ERROR_EVENT}). */
function endsInError(body: Buffer): boolean {
  return ERROR_EVENT.test(body.toString('utf8', Math.max(0, body.length - ERROR_TAIL)));
}

/**
 * The answer's bytes as one buffer of `bytes` bytes that pins little else. A single piece whose
 * backing store is at most twice its size is kept as it is: a non-streamed answer usually arrives
 * in one socket read, whose backing store holds only the response head besides (the memory store
 * counts the whole backing store). Anything else is copied into a buffer of its own, outside Node's
 * shared 8 KiB pool, so a kept answer never pins a pool slab.
 */
function joined(chunks: Buffer[], bytes: number): Buffer {
  const first = chunks[0];
  if (chunks.length === 1 && first!.buffer.byteLength <= 2 * bytes) return first!;
  const out = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  for (const c of chunks) at += c.copy(out, at);
  return out;
}

/** The content type a stored answer is replayed with (the provider's own headers are not kept). */
function contentTypeOf(ctx: RequestContext, streamed: boolean): string {
  return streamed ? (ctx.kind.framing?.contentType ?? 'text/event-stream; charset=utf-8') : 'application/json';
}

/** See the module comment. */
export const cacheWriterObserver: ResponseObserver = {
  name: 'cache-writer',
  onResponseStart(ctx, streamed) {
    const cache = ctx.cache;
    if (cache === null || cache.hitOf !== null || ctx.status < 200 || ctx.status >= 300) return;
    cache.chunks = [];
    cache.streamed = streamed;
  },
  onChunk(ctx, chunk) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    cache.bytes += chunk.length;
    if (cache.bytes > ctx.gw.config.cache.maxEntryBytes) cache.chunks = null;
    // Held as they are (neither undici nor the stream mappers reuse a piece once handed on) and
    // copied once, into the stored answer, when the response completed.
    else cache.chunks.push(chunk);
  },
  onFinish(ctx) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    const chunks = cache.chunks;
    cache.chunks = null;
    if (ctx.clientClosed || ctx.error !== null || ctx.status < 200 || ctx.status >= 300) return;
    const body = joined(chunks, cache.bytes);
    if (cache.streamed && endsInError(body)) return;
    const answer = { requestId: ctx.id, status: ctx.status, streamed: cache.streamed, contentType: contentTypeOf(ctx, cache.streamed), body };
    ctx.gw.cache.add(cache.key, answer, cache.ttlMs, cache.bucketMax);
  },
};
