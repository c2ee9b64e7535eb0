/**
 * What happens when a request's deadline passes (swept by `gw.deadlines`, one timer for all): a
 * stalled body is answered 408; a silent provider's exchange is aborted, which the response side
 * answers as a 504 (or an SSE error event mid-stream, or a retry on a router).
 */
import { GatewayError } from '../errors.ts';
import { stopBody } from '../stages/read-body.ts';
import type { RequestContext } from './context.ts';

/** The deadline of `ctx` passed: it is cleared, then the body stall or the provider's silence is handled. */
export function onDeadline(ctx: RequestContext): void {
  ctx.deadlineMs = Infinity;
  if (ctx.phase === 'body') {
    stopBody(ctx, new GatewayError(408, `the request body stalled: nothing arrived for ${ctx.gw.config.server.headersTimeoutMs} ms`, 'invalid_request_error', 'request_timeout'));
  } else if (ctx.phase === 'upstream') {
    ctx.timedOut = true;
    ctx.exchange!.abort(new Error('upstream timeout'));
  }
}
