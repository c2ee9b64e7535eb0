/**
 * The cache writer (issue 18): a miss's answer (a request with `Svc-Cache-Enabled: true` that the
 * cache could not answer) is recorded as the client gets it, bounded by `cache.max-entry-size`, and
 * stored in its key's bucket once the response completed: 2xx, written to its end, no error
 * mid-stream, the client still there. Hits and requests without the header pay one null check.
 */
import type { RequestContext } from '../pipeline/context.ts';
import type { ResponseObserver } from './types.ts';

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
    else cache.chunks.push(Buffer.from(chunk));
  },
  onFinish(ctx) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    const chunks = cache.chunks;
    cache.chunks = null;
    if (ctx.clientClosed || ctx.error !== null || ctx.status < 200 || ctx.status >= 300) return;
    const answer = { requestId: ctx.id, status: ctx.status, streamed: cache.streamed, contentType: contentTypeOf(ctx, cache.streamed), body: Buffer.concat(chunks) };
    ctx.gw.cache.add(cache.key, answer, cache.ttlMs, cache.bucketMax);
  },
};
