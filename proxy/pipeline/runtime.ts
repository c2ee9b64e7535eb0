/**
 * The gateway's runtime: what every request shares, built once at start and reachable from each
 * context as `ctx.gw` — the config, the logger, the control-plane link, the metrics, the rate
 * limiter, the response store, the routers, the upstream connection pools, the deadline sweep, and
 * the composed stages and observers.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../shared/config.ts';
import type { ProviderName } from '../../shared/providers.ts';
import { createCacheStore, type CacheStore } from '../cache/index.ts';
import type { ControlPlaneClient } from '../controlplane.ts';
import { Deadlines, sweepIntervalMs } from '../deadlines.ts';
import { watchCacheStore, type Metrics } from '../metrics.ts';
import type { Observers } from '../observers/types.ts';
import { missingCredentials } from '../providers/index.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import { createResponseStore, type ResponseStore } from '../response-store/index.ts';
import { LOAD_BALANCE_KEYS, RouterRuntime } from '../router.ts';
import { buildModelBodies, type ModelBodies } from '../server/get-routes.ts';
import { Agent } from '../upstream-agent.ts';
import type { RequestContext } from './context.ts';
import type { Pipeline } from './pipeline.ts';
import { onDeadline } from './timeouts.ts';

/** Dependencies of the gateway, created once by main (or a test) and passed in. */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  /** The control-plane link; required unless `svc.features` is `none`. */
  controlPlane: ControlPlaneClient | null;
  metrics: Metrics | null;
  /** The rate limiter; undefined: made from the config; null: none. */
  rateLimiter?: RateLimiter | null;
  /** The Responses API's response store; undefined: made from the config (Redis with a Redis rate-limit store, else memory). */
  responseStore?: ResponseStore;
  /** The response cache's store; undefined: made from `cache:` in the config. */
  cache?: CacheStore;
}

/** What every request shares. */
export interface GatewayRuntime {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly controlPlane: ControlPlaneClient | null;
  readonly metrics: Metrics | null;
  readonly rateLimiter: RateLimiter | null;
  /** The responses the gateway made or relayed (Responses API: `previous_response_id`, `GET /responses/{id}`). */
  readonly responseStore: ResponseStore;
  /** The response cache (`Svc-Cache-Enabled`): memory or Redis. */
  readonly cache: CacheStore;
  /** `svc.features` is `observability`: requests are recorded. */
  readonly observe: boolean;
  /** Routers by name (a Map: a path's router name never finds an inherited property). */
  readonly routers: ReadonlyMap<string, RouterRuntime>;
  /** Providers without credentials, with the environment variable(s) to set: never sent anything. */
  readonly keyMissing: ReadonlyMap<ProviderName, string>;
  /** One keep-alive pool per provider origin (undici). */
  readonly upstreamAgent: InstanceType<typeof Agent>;
  /** Body and provider timeouts, swept by one timer. */
  readonly deadlines: Deadlines<RequestContext>;
  readonly pipeline: Pipeline;
  readonly observers: Observers;
  /** `GET /ai/models` bodies. */
  readonly models: ModelBodies;
  /** Requests not yet closed (a graceful stop waits for 0). */
  inFlight: number;
  /** Called once {@link inFlight} drops to 0. */
  readonly idle: Array<() => void>;
}

/**
 * Builds the runtime around composed `pipeline` and `observers`.
 * @param deps with `rateLimiter` already resolved (null: none).
 * @throws {Error} when auth/observability is on and no control-plane client is given.
 */
export function createRuntime(deps: GatewayDeps & { rateLimiter: RateLimiter | null }, pipeline: Pipeline, observers: Observers): GatewayRuntime {
  const { config, logger } = deps;
  if (config.features !== 'none' && !deps.controlPlane) throw new Error('svc.features requires a control-plane link (SVC_CONTROL_PLANE_API_KEY)');
  const keyMissing = new Map<ProviderName, string>();
  for (const p of Object.values(config.providers)) {
    const hint = missingCredentials(p);
    if (hint !== null) keyMissing.set(p.name, hint);
  }
  const keyless = new Set(keyMissing.keys());
  const routers = new Map<string, RouterRuntime>();
  for (const r of Object.values(config.routers)) routers.set(r.name, new RouterRuntime(r, config.providers, undefined, undefined, keyless));
  logMissingCredentials(logger, keyMissing, routers);
  const cache = deps.cache ?? createCacheStore(config.cache, logger);
  if (deps.metrics) watchCacheStore(deps.metrics, cache);
  return {
    config,
    logger,
    controlPlane: deps.controlPlane,
    metrics: deps.metrics,
    rateLimiter: deps.rateLimiter,
    responseStore: deps.responseStore ?? createResponseStore(config, logger),
    cache,
    observe: config.features === 'observability',
    routers,
    keyMissing,
    // Connections unbounded; undici's own header and body timeouts are off: the provider's silence
    // is a deadline swept with the others (server.upstream-timeout).
    upstreamAgent: new Agent({ connections: null, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 }),
    deadlines: new Deadlines<RequestContext>(sweepIntervalMs(config.server.headersTimeoutMs, config.server.upstreamTimeoutMs), onDeadline),
    pipeline,
    observers,
    models: buildModelBodies(),
    inFlight: 0,
    idle: [],
  };
}

/**
 * Says once, at start, which providers have no credentials and what to set (names of environment
 * variables, never values): at warn level when a router counts on one of them, else at info.
 */
function logMissingCredentials(logger: Logger, keyMissing: ReadonlyMap<ProviderName, string>, routers: ReadonlyMap<string, RouterRuntime>): void {
  if (keyMissing.size === 0) return;
  const routed = [...routers.values()].some((r) => LOAD_BALANCE_KEYS.some((key) => r.members(key).some((p) => keyMissing.has(p))));
  logger[routed ? 'warn' : 'info'](
    { providersWithoutCredentials: Object.fromEntries(keyMissing) },
    'providers without credentials: requests routed to them are refused (503 provider_key_missing) until the named environment variables are set',
  );
}
