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

/** True when the last {@link ERROR_TAIL} bytes of the answer (`bytes` in `chunks`) carry an error event. */
function endsInError(chunks: Buffer[], bytes: number): boolean {
  let from = chunks.length - 1;
  for (let n = chunks[from]!.length; n < ERROR_TAIL && from > 0; ) n += chunks[--from]!.length;
  const tail = from === chunks.length - 1 ? chunks[from]! : Buffer.concat(chunks.slice(from));
  return ERROR_EVENT.test(tail.toString('utf8', Math.max(0, tail.length - Math.min(ERROR_TAIL, bytes))));
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
    // copied once, by the store, when the response completed.
    else cache.chunks.push(chunk);
  },
  onFinish(ctx) {
    const cache = ctx.cache;
    if (cache === null || cache.chunks === null) return;
    const chunks = cache.chunks;
    cache.chunks = null;
    if (ctx.clientClosed || ctx.error !== null || ctx.status < 200 || ctx.status >= 300) return;
    if (cache.streamed && chunks.length > 0 && endsInError(chunks, cache.bytes)) return;
    const answer = { requestId: ctx.id, status: ctx.status, streamed: cache.streamed, contentType: contentTypeOf(ctx, cache.streamed), chunks, bytes: cache.bytes };
    ctx.gw.cache.add(cache.key, answer, cache.ttlMs, cache.bucketMax);
  },
};
