/**
 * The gateway, assembled: the request stages and the response observers composed once, in order,
 * here; the runtime they share; the HTTP server. Nothing per request happens in this file.
 *
 *   route → authenticate → rate-limit → stored-response (the Responses API's GET/DELETE …/responses/{id})
 *         → read-body → validate → resolve-prompt → responses-history (previous_response_id,
 *         item references) → token-limit → choose-provider → previous-response-provider
 *         → count-tokens (the gateway's own count) → cache-lookup (Svc-Cache-Enabled: a hit answers)
 *         → translate → forward
 *         ⇢ provider ⇢ response (passthrough, mapped, retry)
 *         → observers: metrics, access log, response store, cache writer, log record
 *
 * Each stage (./stages/) reads and writes the request's context (./pipeline/context.ts) and either
 * returns, suspends (a Promise, or the body's events), or throws a `GatewayError` answered in the
 * endpoint kind's error shape (./pipeline/fail.ts). `forward` sends the provider's request with
 * undici's dispatch over keep-alive pools and the answer streams back as it arrives
 * (./upstream/); the observers see the response and, once it is over, count and log it
 * (./observers/). Timeouts (a stalled body, a silent provider) are deadlines swept by one timer;
 * the whole request's arrival is bounded by node:http (`server.request-timeout`, answered in
 * ./server/request-timeout.ts), and a graceful stop cuts what is still in flight at
 * `server.shutdown-timeout` (./server/shutdown.ts). ARCHITECTURE.md draws the whole path.
 */
import http from 'node:http';
import type { Features } from '../shared/config.ts';
import { cacheWriterObserver } from './observers/cache-writer.ts';
import { accessLogObserver } from './observers/access-log.ts';
import { defineObservers } from './observers/dispatch.ts';
import { logRecordObserver } from './observers/log-record.ts';
import { metricsObserver } from './observers/metrics.ts';
import { responseStoreObserver } from './observers/response-store.ts';
import type { Observers } from './observers/types.ts';
import { definePipeline, type Pipeline } from './pipeline/pipeline.ts';
import { createRuntime, type GatewayDeps } from './pipeline/runtime.ts';
import { createRateLimiter, type RateLimiter } from './ratelimit/index.ts';
import { answerClientError } from './server/client-error.ts';
import { answerRequestTimeout } from './server/request-timeout.ts';
import { handleRequest } from './server/request.ts';
import { drain } from './server/shutdown.ts';
import { authenticate } from './stages/authenticate.ts';
import { cacheLookup } from './stages/cache-lookup.ts';
import { chooseProvider } from './stages/choose-provider.ts';
import { countTokensLocally } from './stages/count-tokens.ts';
import { forward } from './stages/forward.ts';
import { rateLimit } from './stages/rate-limit.ts';
import { readBody } from './stages/read-body.ts';
import { resolvePrompt } from './stages/resolve-prompt.ts';
import { previousResponseProvider, responsesHistory } from './stages/responses-history.ts';
import { route } from './stages/route.ts';
import { storedResponse } from './stages/stored-response.ts';
import { tokenLimit } from './stages/token-limit.ts';
import { translate } from './stages/translate.ts';
import { validate } from './stages/validate.ts';

export type { GatewayDeps } from './pipeline/runtime.ts';
export type { RequestContext } from './pipeline/context.ts';

/** A running gateway: its HTTP server and a graceful stop. */
export interface Gateway {
  server: http.Server;
  /**
   * Resolves once the response store and the cache can take writes (Redis connected, or its timeout waited);
   * never rejects. Listen after it: see {@link ResponseStore.whenReady}.
   */
  ready(): Promise<void>;
  /**
   * Stops accepting and waits for in-flight requests up to `server.shutdown-timeout` (ms), then cuts
   * what is left (each logged as the gateway's 502 `gateway_shutdown`). Resolves once every
   * request's log record is queued: the caller flushes the control plane's queue after it.
   */
  close(): Promise<void>;
  rateLimiter: RateLimiter | null;
}

/**
 * The request stages in order, for the features on: no authenticate stage without keys
 * (`svc.features: none`), no rate-limit stage without a limiter. Router retries re-enter at
 * choose-provider (translate when the client pinned the provider).
 */
export function requestPipeline(features: Features, rateLimiter: RateLimiter | null): Pipeline {
  return definePipeline(
    [
      route,
      features !== 'none' && authenticate,
      rateLimiter !== null && rateLimit,
      storedResponse,
      readBody,
      validate,
      resolvePrompt,
      responsesHistory,
      tokenLimit,
      chooseProvider,
      previousResponseProvider,
      countTokensLocally,
      cacheLookup,
      translate,
      forward,
    ],
    { retry: chooseProvider, pinnedRetry: translate },
  );
}

/**
 * The response observers in order: metrics (when there is a registry), the access log, the response
 * store (the Responses API's responses), the cache writer (a cache miss's answer), the log record
 * (observability).
 */
export function responseObservers(features: Features, hasMetrics: boolean): Observers {
  return defineObservers([
    hasMetrics && metricsObserver,
    accessLogObserver,
    responseStoreObserver,
    cacheWriterObserver,
    features === 'observability' && logRecordObserver,
  ]);
}

/**
 * Creates the gateway server (not yet listening).
 * @throws {Error} when auth/observability is on and no control-plane client is given.
 */
export function createGateway(deps: GatewayDeps): Gateway {
  const { config, logger, metrics } = deps;
  if (config.features !== 'none' && !deps.controlPlane) throw new Error('svc.features requires a control-plane link (SVC_CONTROL_PLANE_API_KEY)');
  const rateLimiter =
    deps.rateLimiter !== undefined ? deps.rateLimiter : createRateLimiter(config, { logger, onStoreError: () => metrics?.rateLimitStoreErrors.inc() });
  const gw = createRuntime({ ...deps, rateLimiter }, requestPipeline(config.features, rateLimiter), responseObservers(config.features, metrics !== null));

  // Node enforces headersTimeout and requestTimeout on a timer of `connectionsCheckingInterval` (30 s
  // by default): check often enough that a slow client is cut close to the configured timeout.
  // requestTimeout bounds the request's arrival only (a body dripping within the idle bound, slow
  // loris): Node stops watching a connection once its request is complete, so no answer, however
  // long it streams, is cut by it.
  const server = http.createServer({
    headersTimeout: config.server.headersTimeoutMs,
    requestTimeout: config.server.requestTimeoutMs,
    keepAliveTimeout: 65_000,
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(config.server.headersTimeoutMs / 4))),
  });
  server.on('request', (req, res) => handleRequest(gw, req, res));
  server.on('clientError', (err, socket) => {
    if (!answerRequestTimeout(err, socket)) answerClientError(logger, err, socket);
  });
  let closing = false;
  return {
    server,
    rateLimiter,
    ready: () => Promise.all([gw.responseStore.whenReady(), gw.cache.whenReady()]).then(() => {}),
    async close() {
      if (closing) return;
      closing = true;
      await drain(gw, server);
    },
  };
}
