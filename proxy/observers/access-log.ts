/**
 * The access-log observer: one line per request (ids, route, status, timings — never bodies, keys
 * or error texts). Successes at debug (a line per request costs more than the rest of the
 * gateway's own work), client errors at info, upstream and gateway errors at warn.
 */
import type { ResponseObserver } from './types.ts';

/** Logs the `request` line through `gw.logger`. */
export const accessLogObserver: ResponseObserver = {
  name: 'access-log',
  onFinish(ctx) {
    const status = ctx.outcomeStatus;
    const level = status >= 500 ? 'warn' : status >= 400 ? 'info' : 'debug';
    const logger = ctx.gw.logger;
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        requestId: ctx.id,
        route: ctx.routeLabel,
        provider: ctx.provider,
        model: ctx.model,
        status,
        durationMs: Math.round(ctx.endMs - ctx.startMs),
        ttftMs: ctx.firstByteMs !== null ? Math.round(ctx.firstByteMs - ctx.startMs) : null,
        attempts: ctx.attempts.length,
        clientClosed: ctx.clientClosed,
        errorCode: ctx.errorCode ?? (ctx.error !== null ? 'upstream_error' : null),
        organizationId: ctx.key?.organizationId ?? null,
      },
      'request',
    );
  },
};
