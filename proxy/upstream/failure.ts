/**
 * An attempt that failed: before the provider answered (unreachable: 502, silent: 504, or a router
 * retry) or in the middle of its answer (the stream ends with an error event in the client's stream
 * framing; an answer being collected is answered 502/504 instead), and a client that stopped
 * reading the answer while the gateway held the provider for it.
 */
import { GatewayError } from '../errors.ts';
import { observesChunks, responseChunk } from '../observers/dispatch.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { fail } from '../pipeline/fail.ts';
import { failBalancer } from './balancer.ts';
import { retryIfAllowed } from './retry.ts';

/** What an upstream error is logged and answered as: its code (`ECONNREFUSED`, `UND_ERR_SOCKET`) or else its message. */
export function upstreamErrorCode(err: Error): string {
  return (err as { code?: string }).code ?? err.message;
}

/** The upstream request failed before a response: a retry, or 502 (504 on timeout). */
export function upstreamError(ctx: RequestContext, err: Error): void {
  if (ctx.finished) return;
  ctx.phase = 'none';
  ctx.deadlineMs = Infinity;
  if (!ctx.res.headersSent && retryIfAllowed(ctx, 0, null, upstreamErrorCode(err))) return;
  // Headers the gateway sent itself: what they announced says whether an error event still fits.
  if (ctx.res.headersSent) return onMidStreamError(ctx, String(ctx.res.getHeader('content-type') ?? '').includes('event-stream'));
  if (ctx.res.destroyed) return; // the client went away; finish records it
  const latency = performance.now() - ctx.attemptStartMs;
  ctx.attempts.push({ provider: ctx.provider!, status: 0, latencyMs: latency, error: upstreamErrorCode(err) });
  // As on the retry path: a timeout and a connection error are both the provider's failure.
  failBalancer(ctx, latency);
  const timeoutMs = ctx.gw.config.server.upstreamTimeoutMs;
  fail(ctx, ctx.timedOut
    ? new GatewayError(504, `provider ${ctx.provider} did not answer within ${timeoutMs} ms`, 'server_error', 'upstream_timeout')
    : new GatewayError(502, `provider ${ctx.provider} is unreachable (${upstreamErrorCode(err)})`, 'server_error', 'upstream_unreachable'));
}

/**
 * The provider's answer failed after its status arrived: end the stream with an error event, cut a
 * body that is not a stream (`streamed` false), or answer the error if nothing was sent yet.
 * `cause`: why, when the exchange knows better than "connection lost" or "went silent" (an answer
 * too large or too slow to collect, or one that cannot be decoded); null: the connection was lost,
 * or the provider went silent for `upstream-timeout` when `ctx.timedOut` (504 `upstream_timeout`).
 */
export function onMidStreamError(ctx: RequestContext, streamed: boolean, cause: GatewayError | null = null): void {
  const res = ctx.res;
  if (ctx.finished || res.writableEnded) return;
  const timedOut = ctx.timedOut;
  ctx.error = cause?.message ?? (timedOut ? 'provider timed out mid-response' : 'provider connection lost mid-response');
  if (res.headersSent && !streamed) return cutOff(ctx);
  if (res.headersSent) {
    const err = cause ?? (timedOut ? new GatewayError(504, ctx.error, 'server_error', 'upstream_timeout') : new GatewayError(502, ctx.error, 'server_error', 'upstream_disconnected'));
    const json = JSON.stringify(ctx.kind.errorBody(err));
    // A passed-through stream may have sent an event's lines without its blank line: end it first (./sse-boundary.ts).
    const event = (ctx.exchange?.errorEventPrefix() ?? '') + (ctx.kind.framing ? ctx.kind.framing.error(json) : json);
    if (observesChunks(ctx)) responseChunk(ctx, Buffer.from(event));
    res.end(event);
    return;
  }
  // The answer was being collected for mapping: nothing reached the client yet.
  const timeoutMs = ctx.gw.config.server.upstreamTimeoutMs;
  fail(ctx, cause ?? (timedOut
    ? new GatewayError(504, `provider ${ctx.provider} went silent for ${timeoutMs} ms mid-response`, 'server_error', 'upstream_timeout')
    : new GatewayError(502, `provider ${ctx.provider} closed the connection mid-response`, 'server_error', 'upstream_disconnected')));
}

/**
 * The client took none of its answer for `server.send-timeout` while the gateway held the
 * provider's answer for it (backpressure: the provider is not read then, so its silence is not
 * measured). Its connection is closed, which also stops the provider's answer
 * (../pipeline/finish.ts); logged as the client's (499) with this reason. Nothing else would end
 * such a request: the server has no socket timeout (Node's `server.timeout` is 0), its
 * `request-timeout` stops applying once the request has arrived, and `keepAliveTimeout` applies
 * only between requests.
 */
export function clientStalled(ctx: RequestContext): void {
  if (ctx.finished) return;
  ctx.error = `the client read none of its answer for ${ctx.gw.config.server.sendTimeoutMs} ms (server.send-timeout): the gateway closed the connection`;
  ctx.res.destroy();
}

/** The error of a collected answer that outgrew `server.max-translated-response-size` (`limit`, bytes) and was stopped there. */
export function answerTooLarge(ctx: RequestContext, limit: number): GatewayError {
  return new GatewayError(502, `provider ${ctx.provider} answered more than ${limit} bytes, the most the gateway reads to translate an answer (server.max-translated-response-size)`, 'server_error', 'upstream_response_too_large');
}

/**
 * The error of a passed-through event stream one of whose lines outgrew `limit` bytes before it ended
 * (./exchange.ts `sendLines`, ../translators/shared/translator-stream.ts `MAX_STREAM_EVENT_CHARS`): 502
 * `upstream_response_too_large`, sent as the client's error event once the provider is stopped.
 */
export function eventTooLarge(ctx: RequestContext, limit: number): GatewayError {
  return new GatewayError(502, `provider ${ctx.provider} sent a stream line longer than ${limit} bytes, the most the gateway holds of one`, 'server_error', 'upstream_response_too_large');
}

/** The error of a collected answer still arriving `ms` after its headers (a provider trickling bytes). */
export function answerTooSlow(ctx: RequestContext, ms: number): GatewayError {
  return new GatewayError(504, `provider ${ctx.provider} did not finish its answer within ${ms} ms of its headers`, 'server_error', 'upstream_timeout');
}

/** The error of an answer the gateway must read but cannot decode (`encoding`: its content-encoding; `detail`: zlib's error, or null for a coding it does not read). */
export function answerUndecodable(ctx: RequestContext, encoding: string, detail: string | null): GatewayError {
  const why = detail === null ? `content-encoding ${encoding}, which the gateway cannot decode` : `content-encoding ${encoding} that does not decode (${detail})`;
  return new GatewayError(502, `provider ${ctx.provider} answered with ${why}`, 'server_error', 'upstream_bad_response');
}

/**
 * A body passed on as the provider sent it (JSON, its length said) broke off: no error fits in it,
 * and ending it would leave the client waiting for the bytes its length promised (until the
 * server's keep-alive timeout closed the connection, 65 s). Breaking the connection is the one
 * signal left that the body is incomplete. Logged as the gateway's 502 (504: the provider went
 * silent), not as a client that left.
 */
function cutOff(ctx: RequestContext): void {
  ctx.status = ctx.timedOut ? 504 : 502;
  ctx.errorCode = ctx.timedOut ? 'upstream_timeout' : 'upstream_disconnected';
  ctx.cutOff = true;
  ctx.res.destroy();
}
