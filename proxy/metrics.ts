/**
 * The proxy's Prometheus metrics (prom-client), served at `GET /metrics`: requests by route, router,
 * provider and status, each counted once, and router retries apart; latency (a cache hit's under
 * provider `cache`) and streamed answers' time-to-first-token histograms (seconds); rate-limit denials and
 * store errors; response-cache hits and misses, and the memory store's buckets and bytes; log queue
 * depth, bytes, in-flight records, drops and negative acks; the control-plane link state. Cache,
 * queue and link values are read when scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CacheStore } from './cache/types.ts';
import { mirroredCounter } from '../shared/metrics.ts';
import type { ControlPlaneClient } from './controlplane.ts';

/** The metric handles the request path updates. */
export interface Metrics {
  registry: Registry;
  /**
   * Requests, once each, by `route` (the path, `router:<kind>`), `router` (the router's name from the
   * config; '' off a router), `provider` (the last attempt's) and `status`.
   */
  requests: Counter<'route' | 'router' | 'provider' | 'status'>;
  /**
   * Router retries: an attempt that failed retryably and was retried, by `router`, the `provider` that
   * failed and its `status` (0: connection error or timeout). Not requests: {@link requests} counts the request once.
   */
  routerRetries: Counter<'router' | 'provider' | 'status'>;
  /** Whole-request latency by provider; a cache hit under provider `cache`. */
  latency: Histogram<'provider'>;
  /** Time to the first byte of a streamed 2xx answer, by provider (`cache` for a replayed hit). */
  timeToFirstToken: Histogram<'provider'>;
  /** Cached label children of {@link observeRequest}, by route + router + provider + status + hit. */
  children: Map<string, { requests: { inc(): void }; latency: { observe(v: number): void }; ttft: { observe(v: number): void } }>;
  rateLimitDenials: Counter<'policy'>;
  rateLimitStoreErrors: Counter<string>;
  /** Response-cache lookups (requests with `Svc-Cache-Enabled: true`) by result: `hit` or `miss`. */
  cacheLookups: Counter<'result'>;
  /** {@link cacheLookups}' two label children, bound once (a label lookup per request costs ~1 µs). */
  cacheHits: { inc(): void };
  cacheMisses: { inc(): void };
  /** Records waiting for admin (read from the queue at scrape time; `set` is not needed). */
  logQueueDepth: Gauge<string>;
}

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];


/** The histograms' provider label of a cache hit: its latency is the cache's, not the stored answer's provider's. */
export const CACHE_PROVIDER = 'cache';

/**
 * Records one finished request: its count by route, router ('' off a router), provider and status,
 * its whole latency and its time to first byte (seconds; `ttftSeconds` null when not observed: the
 * caller passes it for streamed 2xx answers only). A cache hit (`hit`) is counted under its
 * provider, and timed under {@link CACHE_PROVIDER}. Every label is bounded: routes and routers come
 * from the code and the config, providers from the provider list, statuses are HTTP codes. The
 * label children are cached per label combination, so the per-request cost is a map lookup, not a
 * label hash.
 */
export function observeRequest(m: Metrics, route: string, router: string, provider: string, hit: boolean, status: number, seconds: number, ttftSeconds: number | null): void {
  const key = `${route}\u0000${router}\u0000${provider}\u0000${status}${hit ? '\u0000hit' : ''}`;
  let c = m.children.get(key);
  if (!c) {
    const timed = hit ? CACHE_PROVIDER : provider;
    c = {
      requests: m.requests.labels(route, router, provider, String(status)),
      latency: m.latency.labels(timed),
      ttft: m.timeToFirstToken.labels(timed),
    };
    if (m.children.size < 10_000) m.children.set(key, c);
  }
  c.requests.inc();
  c.latency.observe(seconds);
  if (ttftSeconds !== null) c.ttft.observe(ttftSeconds);
}

/**
 * Adds the memory cache store's gauges to `m`'s registry: `svc_proxy_cache_buckets` (buckets held)
 * and `svc_proxy_cache_bytes` (bytes of the arena they take), read when scraped. Nothing for Redis,
 * whose figures live in Redis, nor twice for one registry.
 */
export function watchCacheStore(m: Metrics, cache: CacheStore): void {
  if (cache.usage() === null || m.registry.getSingleMetric('svc_proxy_cache_buckets') !== undefined) return;
  const gauges: Array<[string, string, 'buckets' | 'bytes']> = [
    ['svc_proxy_cache_buckets', 'Response-cache buckets held in memory', 'buckets'],
    ['svc_proxy_cache_bytes', 'Bytes of the memory cache arena the held buckets take (cache.max-size bounds it)', 'bytes'],
  ];
  for (const [name, help, member] of gauges) {
    new Gauge({
      name,
      help,
      registers: [m.registry],
      collect() {
        this.set(cache.usage()?.[member] ?? 0);
      },
    });
  }
}

/** Creates a fresh registry with the proxy's metrics; `controlPlane` feeds the link and queue metrics. */
export function createMetrics(controlPlane: ControlPlaneClient | null): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const queue = () => controlPlane?.queue.getStats() ?? null;
  const cacheLookups = new Counter({ name: 'svc_proxy_cache_lookups_total', help: 'Response-cache lookups by result (hit, miss)', labelNames: ['result'], registers: [registry] });
  const metrics: Metrics = {
    registry,
    requests: new Counter({ name: 'svc_proxy_requests_total', help: 'Requests (each once, retries apart) by route, router, provider and status', labelNames: ['route', 'router', 'provider', 'status'], registers: [registry] }),
    routerRetries: new Counter({ name: 'svc_proxy_router_retries_total', help: 'Router retries by router, the provider whose attempt failed, and its status (0: connection error or timeout)', labelNames: ['router', 'provider', 'status'], registers: [registry] }),
    latency: new Histogram({ name: 'svc_proxy_request_duration_seconds', help: 'Whole-request latency by provider (a cache hit: provider "cache")', labelNames: ['provider'], buckets: BUCKETS, registers: [registry] }),
    children: new Map(),
    timeToFirstToken: new Histogram({ name: 'svc_proxy_time_to_first_token_seconds', help: 'Time to the first byte of a streamed 2xx answer', labelNames: ['provider'], buckets: BUCKETS, registers: [registry] }),
    rateLimitDenials: new Counter({ name: 'svc_proxy_rate_limit_denials_total', help: 'Requests denied by the rate limiter', labelNames: ['policy'], registers: [registry] }),
    rateLimitStoreErrors: new Counter({ name: 'svc_proxy_rate_limit_store_errors_total', help: 'Rate-limit checks the store could not answer', registers: [registry] }),
    cacheLookups,
    cacheHits: cacheLookups.labels('hit'),
    cacheMisses: cacheLookups.labels('miss'),
    logQueueDepth: new Gauge({
      name: 'svc_proxy_log_queue_depth',
      help: 'Log records waiting for admin',
      registers: [registry],
      collect() {
        this.set(queue()?.queued ?? 0);
      },
    }),
  };
  if (controlPlane) {
    new Gauge({
      name: 'svc_proxy_log_queue_bytes',
      help: 'Bytes of log records waiting for admin',
      registers: [registry],
      collect() {
        this.set(queue()!.queuedBytes);
      },
    });
    new Gauge({
      name: 'svc_proxy_log_queue_buffer_bytes',
      help: 'Bytes of memory the log batches waiting for admin or its ack hold',
      registers: [registry],
      collect() {
        this.set(queue()!.bufferBytes);
      },
    });
    new Gauge({
      name: 'svc_proxy_log_queue_in_flight',
      help: 'Log records sent to admin and not yet acknowledged',
      registers: [registry],
      collect() {
        this.set(queue()!.inFlight);
      },
    });
    mirroredCounter(registry, 'svc_proxy_log_queue_dropped_total', 'Log records dropped because the queue was full (or unserializable)', () => queue()!.dropped);
    mirroredCounter(registry, 'svc_proxy_log_records_acknowledged_total', 'Log records admin acknowledged (stored)', () => queue()!.acknowledged);
    mirroredCounter(registry, 'svc_proxy_log_batches_nacked_total', 'Log record batches admin failed to store (re-sent later)', () => queue()!.nacked);
    new Gauge({
      name: 'svc_proxy_control_plane_connected',
      help: '1 when the control-plane link is up',
      registers: [registry],
      collect() {
        this.set(controlPlane.health().connected ? 1 : 0);
      },
    });
    new Gauge({
      name: 'svc_proxy_control_plane_reconnect_attempts',
      help: 'Reconnect attempts since the link was last stable',
      registers: [registry],
      collect() {
        this.set(controlPlane.health().reconnectAttempts);
      },
    });
    new Gauge({
      name: 'svc_proxy_control_plane_keys',
      help: 'API keys held from the control plane',
      registers: [registry],
      collect() {
        this.set(controlPlane.health().keysHeld);
      },
    });
  }
  return metrics;
}
