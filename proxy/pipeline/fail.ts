/**
 * fail: answers a request with an error, in its endpoint kind's error shape, and leaves the
 * counting and logging to the finish observers (which run once the response closes).
 */
import { lingerAfterAnswer } from '../../shared/linger.ts';
import { GatewayError, sendError } from '../errors.ts';
import type { RequestContext } from './context.ts';

/**
 * Answers `err` to the client (unless it already has a response: then the response is ended as it
 * stands). A {@link GatewayError} is answered as it is; anything else is logged and answered as a
 * 500 `internal_error`. The answer carries `Svc-Id`, `Svc-Provider` once chosen, and the admitted
 * request's rate-limit headers.
 */
export function fail(ctx: RequestContext, err: unknown): void {
  let e: GatewayError;
  if (err instanceof GatewayError) e = err;
  else {
    ctx.gw.logger.error({ err, requestId: ctx.id }, 'unexpected error in the request path');
    e = new GatewayError(500, 'internal gateway error', 'server_error', 'internal_error');
  }
  ctx.status = e.status;
  ctx.error = e.message;
  ctx.errorCode = e.code ?? e.type;
  const extra: Record<string, string> = { ...ctx.rateLimitHeaders, 'svc-id': ctx.id };
  if (ctx.provider) extra['svc-provider'] = ctx.provider;
  // An unread request body (413, early 4xx) must not be parsed as the next request. A stalled one
  // is abandoned with the connection; any other is read and discarded after the answer (bounded),
  // so the client sees the answer rather than a reset, and Node's parser finds the next request.
  const unread = !ctx.req.complete;
  if (unread && e.status === 408) extra.connection = 'close';
  else if (unread) lingerAfterAnswer(ctx.req);
  sendError(ctx.res, e, extra, ctx.kind.errorBody);
}
