/**
 * The metrics observer: counts each finished request by route, router, provider and status, and
 * observes its latency and, for a streamed 2xx answer, its time to first byte (Prometheus,
 * ../metrics.ts). A non-streamed answer's first byte is its whole body, and an error's is no token:
 * either would blur the streams' time to first token.
 */
import { observeRequest } from '../metrics.ts';
import type { ResponseObserver } from './types.ts';

/** Updates `gw.metrics` (compose it only when the gateway has metrics). */
export const metricsObserver: ResponseObserver = {
  name: 'metrics',
  onFinish(ctx) {
    const seconds = (ctx.endMs - ctx.startMs) / 1000;
    const status = ctx.outcomeStatus;
    const ttft = ctx.streamed && ctx.firstByteMs !== null && status >= 200 && status < 300 ? (ctx.firstByteMs - ctx.startMs) / 1000 : null;
    const hit = ctx.cache !== null && ctx.cache.hitOf !== null;
    observeRequest(ctx.gw.metrics!, ctx.routeLabel, ctx.routerName ?? '', ctx.provider ?? 'none', hit, status, seconds, ttft);
  },
};
