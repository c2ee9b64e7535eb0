/**
 * The cache writer (issue 18): a miss's answer (a request with `Svc-Cache-Enabled: true` that the
 * cache could not answer) is recorded as the client gets it, bounded by `cache.max-entry-size`, and
 * stored in its key's bucket once the response completed: 2xx, written to its end, no error
 * mid-stream (the gateway's own, or an error event the provider sent), the client still there, and
 * the answer complete for its endpoint kind (the spec: "only complete, successful answers are
 * stored"): a stream ending with its dialect's final event, a body that is a JSON object and no
 * error object (../endpoints/answer-completion.ts; what marks one is the kind's `completion`). A
 * provider may end a 200 stream cleanly but early, or answer 200 with an error body; neither is
 * kept. It is added to the bucket, or replaces it with `Cache-Control: no-cache`, and is not kept
 * with `no-store` (../cache/request.ts). Hits and requests without the header pay one null check.
 */
import { isCompleteAnswer } from '../endpoints/answer-completion.ts';
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
    // `Cache-Control: no-store`: the answer is not kept, so not recorded either.
    if (cache === null || cache.hitOf !== null || cache.write === 'none' || ctx.status < 200 || ctx.status >= 300) return;
    cache.chunks = [];
    cache.streamed = streamed;
  },
  onChunk(ctx, chunk) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    cache.bytes += chunk.length;
    if (cache.bytes > ctx.gw.config.cache.maxEntryBytes) cache.chunks = null;
    // Held as they are (neither undici nor the stream mappers reuse a piece once handed on) and
    // copied once, by the store, when the response completed.
    else cache.chunks.push(chunk);
  },
  onFinish(ctx) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    const chunks = cache.chunks;
    cache.chunks = null;
    if (ctx.clientClosed || ctx.error !== null || ctx.status < 200 || ctx.status >= 300) return;
    // Reads the answer's ends only: this runs on every miss (a scan or parse of the whole answer would not fit).
    if (!isCompleteAnswer(ctx.kind, chunks, cache.streamed)) return;
    // The usage a translated stream withheld from its client goes with the answer, for a hit's record.
    const usage = ctx.call?.withheldUsage ?? null;
    const answer = { requestId: ctx.id, status: ctx.status, streamed: cache.streamed, contentType: contentTypeOf(ctx, cache.streamed), chunks, bytes: cache.bytes, usage };
    ctx.gw.cache.add(cache.key, answer, cache.ttlMs, cache.bucketMax, cache.write === 'replace');
  },
};
