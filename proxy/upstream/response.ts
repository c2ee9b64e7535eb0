/**
 * The provider's status and headers arrived: retry (routers), or answer the client and choose where
 * the body goes. Passthrough answers (a provider already speaking the client's format, or an error
 * its transport does not map) go to the client byte for byte; the others are mapped through the
 * request's provider binding (./mapped.ts).
 */
import type { ServerResponse } from 'node:http';
import { responseStarted } from '../observers/dispatch.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { finishBalancer } from './balancer.ts';
import type { UpstreamExchange, UpstreamHeaders } from './exchange.ts';
import { answerMappedBody, answerMappedError, answerMappedStream } from './mapped.ts';
import { removedMembersHeader } from './removed-members.ts';
import { retryIfAllowed } from './retry.ts';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the length, which the gateway sets itself: never copied to the client. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']);

/** Handles the response start of the current attempt (see the file's comment). */
export function onUpstreamResponse(exchange: UpstreamExchange, status: number, upstreamHeaders: UpstreamHeaders): void {
  const ctx = exchange.ctx;
  const res = ctx.res;
  ctx.responseAtMs = performance.now();
  // From here the timeout is the provider's silence between pieces of the answer.
  ctx.deadlineMs = ctx.responseAtMs + ctx.gw.config.server.upstreamTimeoutMs;
  const retryAfter = Number(upstreamHeaders['retry-after']);
  if (retryIfAllowed(ctx, status, Number.isFinite(retryAfter) ? retryAfter * 1000 : null, null)) {
    exchange.discard();
    ctx.responseAtMs = null;
    return;
  }
  ctx.status = status;
  const attemptMs = ctx.responseAtMs - ctx.attemptStartMs;
  ctx.attempts.push({ provider: ctx.provider!, status, latencyMs: attemptMs });
  finishBalancer(ctx, attemptMs);
  const binding = ctx.binding!;
  const ok = status >= 200 && status < 300;
  const ct = upstreamHeaders['content-type'];
  const contentType = typeof ct === 'string' ? ct : ct === undefined ? '' : ct.join(', ');
  // A binding whose translator never streams reads even a stream-typed answer as one body.
  const isStream = ok && binding.streams && (contentType.includes('event-stream') || contentType.includes('eventstream'));
  responseStarted(ctx, isStream);
  const headers = clientHeaders(ctx, upstreamHeaders);
  // Errors go through the transport's mapError even when its answers pass through (Azure).
  if (ok ? binding.passthrough : !binding.mapsErrors) return passThrough(exchange, res, status, headers, upstreamHeaders['content-length'], isStream);
  if (!ok) answerMappedError(exchange, status, headers, upstreamHeaders);
  else if (isStream) answerMappedStream(exchange, status, headers);
  else answerMappedBody(exchange, headers);
}

/**
 * The client's response headers: the provider's, less hop-by-hop ones, plus `Svc-Id`,
 * `Svc-Provider`, `Svc-Removed-Members` when a translator removed request members
 * (./removed-members.ts), and the admitted request's rate-limit headers.
 */
function clientHeaders(ctx: RequestContext, upstreamHeaders: UpstreamHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const k in upstreamHeaders) {
    if (!HOP_BY_HOP.has(k)) headers[k] = upstreamHeaders[k]!;
  }
  headers['svc-id'] = ctx.id;
  headers['svc-provider'] = ctx.provider!;
  const removed = removedMembersHeader(ctx.call?.removed);
  if (removed !== null) headers['svc-removed-members'] = removed;
  const rl = ctx.rateLimitHeaders;
  if (rl) for (const k in rl) headers[k] = rl[k]!;
  return headers;
}

/** The provider's answer goes to the client as it is (its length kept unless streamed). */
function passThrough(exchange: UpstreamExchange, res: ServerResponse, status: number, headers: Record<string, string | string[]>, length: string | string[] | undefined, isStream: boolean): void {
  if (length !== undefined && !isStream) headers['content-length'] = length;
  res.writeHead(status, headers);
  exchange.toClient();
}
