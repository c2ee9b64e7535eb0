/**
 * The gateway's graceful stop: stop accepting, wait for in-flight requests up to
 * `server.shutdown-timeout`, then cut what is left, each logged as the gateway's 502
 * `gateway_shutdown` before its connection closes (a stream first ended with its dialect's error
 * event), and release the shared resources.
 */
import type http from 'node:http';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { finish } from '../pipeline/finish.ts';
import type { GatewayRuntime } from '../pipeline/runtime.ts';
import { onMidStreamError } from '../upstream/failure.ts';

/** How long a graceful stop waits, after cutting what was left, for the cut connections to close (ms). */
const CUT_CLOSE_GRACE_MS = 1_000;

/**
 * A graceful stop: stop accepting, wait for in-flight requests up to `server.shutdown-timeout`,
 * then cut what is left ({@link cutByShutdown}: each is finished, so logged, before its connection
 * is closed), then the deadline sweep, the upstream pools, the rate limiter and the response store.
 * Resolves once every request's record is queued, so the caller's flush of the log queue carries them.
 */
export async function drain(gw: GatewayRuntime, server: http.Server): Promise<void> {
  server.close();
  server.closeIdleConnections();
  if (!(await allClosed(gw, gw.config.server.shutdownTimeoutMs))) {
    // The close events of the sockets destroyed below come a turn of the event loop later (or, for
    // a response queued behind another on its socket, never): the records are built here first.
    for (const ctx of gw.deadlines.snapshot()) cutByShutdown(ctx);
    server.closeAllConnections();
    if (!(await allClosed(gw, CUT_CLOSE_GRACE_MS))) gw.logger.warn({ inFlight: gw.inFlight }, 'requests cut by the shutdown whose connection did not close');
  }
  gw.deadlines.close();
  await gw.upstreamAgent.destroy();
  await gw.rateLimiter?.close();
  await gw.responseStore.close();
  await gw.cache.close();
}

/** Resolves true once no request is in flight, false when `timeoutMs` passes first. */
function allClosed(gw: GatewayRuntime, timeoutMs: number): Promise<boolean> {
  if (gw.inFlight === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs).unref();
    gw.idle.push(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * A request still in flight when the shutdown timeout passed: the gateway cuts it, as it cuts a
 * passed-on body the provider broke off (upstream/failure.ts): not a client that left, but the
 * gateway's 502 `gateway_shutdown` (an error status already answered is kept, and so is an error
 * already recorded). A stream under way is first ended with its dialect's error event, as a
 * provider's failure mid-stream is ({@link endCutStream}); other answers only lose their connection.
 * It is finished now, so its record (with the bytes streamed so far) and its access-log line are
 * made before its connection closes and before the log queue is flushed.
 */
function cutByShutdown(ctx: RequestContext): void {
  if (ctx.finished) return;
  ctx.cutOff = true;
  if (ctx.status < 400) ctx.status = 502;
  const message = `the gateway shut down before the response was complete (server.shutdown-timeout: ${ctx.gw.config.server.shutdownTimeoutMs} ms)`;
  const recorded = ctx.error;
  if (recorded === null) {
    ctx.error = message;
    ctx.errorCode = 'gateway_shutdown';
  }
  if (ctx.streamed && ctx.res.headersSent && !ctx.res.writableEnded) {
    endCutStream(ctx, new GatewayError(502, message, 'server_error', 'gateway_shutdown'));
    // onMidStreamError records the event's message; an error recorded before it is the one logged.
    if (recorded !== null) ctx.error = recorded;
  }
  finish(ctx);
}

/**
 * Ends a stream the shutdown cuts with `err` as its dialect's error event, the helper a provider's
 * failure mid-stream goes through (../upstream/failure.ts `onMidStreamError`): the provider's answer
 * is stopped first (its exchange no longer writes to the client, its request is aborted), then the
 * event written and the response ended. A replayed cache hit has no exchange: its event is written
 * the same way. The caller closes the connections right after, so nothing more is written to it.
 * Without the event an SDK reads the close as a bare "terminated".
 */
function endCutStream(ctx: RequestContext, err: GatewayError): void {
  ctx.exchange?.stopReading(err);
  if (!ctx.res.writableEnded) onMidStreamError(ctx, true, err);
}
