/**
 * What happens when a request's deadline passes (swept by `gw.deadlines`, one timer for all): a
 * stalled body is answered 408; in the `upstream` phase the exchange is aborted, and the response
 * side (../upstream/exchange.ts `onError`) says why from the state it was in: a silent provider
 * (504, or an SSE error event mid-stream, or a retry on a router), an answer read whole that did
 * not end in time (504), or a client that took none of its answer for `server.send-timeout` while
 * the provider waited for it (its connection closed).
 */
import { GatewayError } from '../errors.ts';
import { stopBody } from '../stages/read-body.ts';
import type { RequestContext } from './context.ts';

/** The deadline of `ctx` passed: it is cleared, then the body stall or the exchange's wait is handled. */
export function onDeadline(ctx: RequestContext): void {
  ctx.deadlineMs = Infinity;
  if (ctx.phase === 'body') {
    stopBody(ctx, new GatewayError(408, `the request body stalled: nothing arrived for ${ctx.gw.config.server.headersTimeoutMs} ms`, 'invalid_request_error', 'request_timeout'));
  } else if (ctx.phase === 'upstream') {
    ctx.timedOut = true;
    ctx.exchange!.abort(new Error('upstream timeout'));
  }
}
