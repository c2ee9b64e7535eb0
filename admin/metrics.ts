/**
 * Admin's Prometheus metrics (prom-client), served at `GET /metrics` by `admin/main.ts` ahead of the
 * Koa app: HTTP requests by route (the matched route pattern, e.g. `/v1/request/:requestId`, or
 * `unmatched`) and status, with a latency histogram; log records ingested, duplicate (already
 * stored) and rejected; record batches that failed to store; open control-plane connections.
 * The record and connection values are read from the control plane's counters when scraped.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { mirroredCounter } from '../shared/metrics.ts';
import type { ControlPlaneStats } from './controlplane.ts';

/** Admin's metrics and how to observe one HTTP request. */
export interface AdminMetrics {
  registry: Registry;
  /**
   * Counts `req` once its response is over. `route()` is asked then (the route pattern the app
   * matched, or null for none).
   */
  observe(req: IncomingMessage, res: ServerResponse, route: () => string | null): void;
  /** Answers a scrape (`GET /metrics`). */
  serve(res: ServerResponse): void;
}

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];


/** Creates a fresh registry with admin's metrics; `stats` reads the control plane's counters. */
export function createAdminMetrics(stats: () => ControlPlaneStats): AdminMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'svc_admin_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['route', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 'svc_admin_http_request_duration_seconds', help: 'HTTP request latency by route', labelNames: ['route'], buckets: BUCKETS, registers: [registry] });
  mirroredCounter(registry, 'svc_admin_records_ingested_total', 'Log records stored', () => stats().recordsStored);
  mirroredCounter(registry, 'svc_admin_records_duplicate_total', 'Log records received again and ignored (already stored)', () => stats().recordsDuplicate);
  mirroredCounter(registry, 'svc_admin_records_rejected_total', 'Log records rejected as invalid', () => stats().recordsRejected);
  mirroredCounter(registry, 'svc_admin_records_key_id_cleared_total', "Log records stored with their API key id cleared (not a key of the link's organization)", () => stats().recordsKeyIdCleared);
  mirroredCounter(registry, 'svc_admin_record_batches_failed_total', 'Log record batches that failed to store (the proxy re-sends them)', () => stats().batchesFailed);
  new Gauge({
    name: 'svc_admin_control_plane_connections',
    help: 'Open control-plane connections from proxies',
    registers: [registry],
    collect() {
      this.set(stats().connections);
    },
  });
  return {
    registry,
    observe(req, res, route) {
      const start = performance.now();
      res.once('close', () => {
        const label = route() ?? 'unmatched';
        const status = res.writableFinished ? res.statusCode : 499;
        requests.inc({ route: label, status: String(status) });
        duration.observe({ route: label }, (performance.now() - start) / 1000);
      });
    },
    serve(res) {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text) });
          res.end(text);
        },
        () => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('metrics unavailable\n');
        },
      );
    },
  };
}
