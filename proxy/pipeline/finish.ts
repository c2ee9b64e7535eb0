/**
 * finish: once the response is over (or the client left), the request's outcome is settled once —
 * its end time, whether the client left, the status counted — and the response observers' `onFinish`
 * hooks run (metrics, access log, log record).
 */
import type { ServerResponse } from 'node:http';
import { responseFinished } from '../observers/dispatch.ts';
import { finishBalancer } from '../upstream/balancer.ts';
import { contextOf, type RequestContext } from './context.ts';

/**
 * The response's `close` listener (shared by every request): stops the request's deadline, finishes
 * it, stops the provider's work when the client left early, and wakes a graceful stop waiting for
 * the last request.
 */
export function onResponseClose(this: ServerResponse): void {
  const ctx = contextOf(this);
  const gw = ctx.gw;
  gw.deadlines.untrack(ctx);
  finish(ctx);
  // The client left before the answer was complete: stop the provider's work too.
  if (!this.writableFinished && ctx.exchange) ctx.exchange.abort(new Error('client closed the connection'));
  if (--gw.inFlight === 0) for (const f of gw.idle.splice(0)) f();
}

/** Settles the outcome and runs the observers; runs once per request (later calls do nothing). */
export function finish(ctx: RequestContext): void {
  if (ctx.finished) return;
  ctx.finished = true;
  // A response the gateway cut itself is unfinished too, but the client did not leave.
  ctx.clientClosed = !ctx.res.writableFinished && !ctx.cutOff;
  // An attempt still counted has no outcome now (the client left before the answer).
  finishBalancer(ctx, null);
  ctx.endMs = performance.now();
  ctx.outcomeStatus = ctx.clientClosed && ctx.status < 400 ? 499 : ctx.status;
  responseFinished(ctx);
}
