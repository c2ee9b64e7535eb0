/**
 * answerJson: the gateway answers a request itself, with a whole JSON body (a token count it
 * estimated, a response from its own store), as a provider's answer would come: `Svc-Id`, the
 * admitted request's rate-limit headers, and `Svc-Provider` once a provider was chosen.
 */
import type { RequestContext } from './context.ts';

/**
 * Writes `status` and the JSON `text` to the client and sets what the observers read (status,
 * time of the answer and of its first byte). `extra` headers are added (e.g. `Svc-Token-Count`).
 */
export function answerJson(ctx: RequestContext, status: number, text: string, extra: Record<string, string> | null = null): void {
  const headers: Record<string, string> = {
    ...ctx.rateLimitHeaders,
    ...extra,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'svc-id': ctx.id,
  };
  if (ctx.provider) headers['svc-provider'] = ctx.provider;
  ctx.status = status;
  ctx.responseAtMs = ctx.firstByteMs = performance.now();
  ctx.res.writeHead(status, headers);
  ctx.res.end(text);
}
