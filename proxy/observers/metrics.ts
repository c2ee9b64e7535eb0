/**
 * The metrics observer: counts each finished request by route, provider and status, and observes
 * its latency and time to first byte (Prometheus, ../metrics.ts).
 */
import { observeRequest } from '../metrics.ts';
import type { ResponseObserver } from './types.ts';

/** Updates `gw.metrics` (compose it only when the gateway has metrics). */
export const metricsObserver: ResponseObserver = {
  name: 'metrics',
  onFinish(ctx) {
    const seconds = (ctx.endMs - ctx.startMs) / 1000;
    const ttft = ctx.firstByteMs !== null ? (ctx.firstByteMs - ctx.startMs) / 1000 : null;
    observeRequest(ctx.gw.metrics!, ctx.routeLabel, ctx.provider ?? 'none', ctx.outcomeStatus, seconds, ttft);
  },
};
