/**
 * A named router at run time: its load-balance strategy, the health of each of its providers, and
 * its retry policy.
 *
 * Health: every attempt's outcome is kept in a sliding window (`health.window`, ms). A provider
 * whose share of 5xx and connection errors over the window exceeds `health.error-threshold`, with at
 * least `health.min-requests` attempts, leaves the pool for `health.cool-down`; after that one probe
 * request is let through, and its success returns the provider to the pool (its failure restarts the
 * cool-down). A 429 takes the provider out for its `Retry-After` (seconds or an HTTP date; default 1 s; at most
 * `health.cool-down`, ../balancer/retry-after.ts). When every provider
 * is out, the one whose ejection ends first is used rather than failing the request, preferring one
 * that did not ask to wait (a `Retry-After` not yet over).
 *
 * Providers the gateway holds no credentials for are left out of the choice while the router has
 * another provider for the endpoint (a request must never go upstream without credentials; the
 * gateway refuses one routed to such a provider with `provider_key_missing`).
 *
 * Each endpoint kind chooses among the members of its load-balance group that serve it (a binding
 * for the kind, or a count kind the gateway answers itself): a router without an `embeddings` group
 * balances embeddings over its chat members, and sends them only to those that offer embeddings.
 * These sets are computed once, when the router is built; a request does one Map lookup.
 *
 * model-mappings: a member that lacks the requested model is sent the model's mapping for it (the
 * first `<member>/<model>` candidate). A model that has mappings goes only to the members that offer
 * it or have a mapping for it, so a member with neither is never sent a model it does not serve.
 *
 * Retries: exponential backoff with full jitter between `min-delay` and `max-delay`
 * (delay_n = min(max, min·factorⁿ), slept as random(0, delay_n]) or a constant delay — AWS
 * Architecture Blog, "Exponential Backoff And Jitter" (2015). A retry that can only go to providers
 * whose 429 asked to wait (`Retry-After`, RFC 9110 §10.2.3) waits until the first of those waits is
 * over, at most `max-delay` ({@link RouterRuntime.retryWaitMs}; ./upstream/retry.ts).
 */
import type { LoadBalanceConfig, ProviderConfig, RetryPolicy, RouterConfig } from '../shared/config.ts';
import { getModelInfo, listModels } from '../shared/models.ts';
import type { ProviderName } from '../shared/providers.ts';
import { LatencyBalancer } from './balancer/latency.ts';
import { WeightedBalancer } from './balancer/weighted.ts';
import { ENDPOINT_KINDS } from './endpoints/index.ts';
import { storedResponses } from './endpoints/stored-response.ts';
import type { EndpointKind, EndpointName, LoadBalanceKey } from './endpoints/types.ts';
import { bindingFor } from './providers/index.ts';

interface Outcome {
  atMs: number;
  failed: boolean;
}

interface ProviderHealth {
  outcomes: Outcome[];
  /** Out of the pool until this time (ms); 0 when in the pool. */
  ejectedUntilMs: number;
  /** A probe is under way after the cool-down. */
  probing: boolean;
  /**
   * Until when (ms) the provider asked not to be sent requests: its last 429's `Retry-After`; 0 when
   * it never sent one. Unlike {@link ejectedUntilMs}, not set by a 429 without it nor by errors.
   */
  waitUntilMs: number;
}

/** A provider choice: the provider and the model to send it. */
export interface RouteChoice {
  provider: ProviderName;
  model: string;
  /** True when this request is the post-cool-down probe of an ejected provider. */
  probe: boolean;
}

/** Health state of one provider, for /health and tests. */
export interface ProviderHealthView {
  provider: ProviderName;
  healthy: boolean;
  ejectedForMs: number;
  windowRequests: number;
  windowErrors: number;
  /** Attempts sent to the provider and not yet answered (the latency balancer's count). */
  inFlight: number;
}

/** The `load-balance.<key>` groups of a router's config, each choosing providers for endpoint kinds naming it. */
export const LOAD_BALANCE_KEYS: readonly LoadBalanceKey[] = ['chat', 'embeddings'];

/** One load-balance group of a router (`load-balance.<key>`): its settings, members and weighted balancer. */
interface Group {
  config: LoadBalanceConfig;
  /** Every member, in config order. */
  members: readonly ProviderName[];
  weighted: WeightedBalancer<ProviderName>;
}

/** The providers one endpoint kind of a router chooses among, computed when the router is built. */
interface Pool {
  group: Group;
  /**
   * The group's members that serve the kind and have credentials (those that serve it when none
   * has); empty when no member serves it.
   */
  usable: readonly ProviderName[];
  /**
   * model-mappings: for each mapped model, the usable members that offer it or have a mapping for
   * it (absent when none does: then any usable member is chosen, as for an unmapped model).
   */
  mapped: ReadonlyMap<string, readonly ProviderName[]>;
}

/**
 * Whether `provider` can answer a request of `kind`: it has a binding there, or the kind is a count
 * the gateway answers itself for a provider without one (count_tokens, input_tokens).
 */
export function servesKind(provider: ProviderName, kind: EndpointKind): boolean {
  return kind.localCount !== null || bindingFor(provider, kind.name) !== undefined;
}

/** Every endpoint kind a router may be asked to choose for: the routed ones and stored responses. */
const ROUTED_KINDS: readonly EndpointKind[] = [...ENDPOINT_KINDS, storedResponses];

/**
 * Run-time state of one router. The choice ({@link choose}, {@link targets}) is per endpoint kind
 * (its name); {@link members} lists a load-balance group (`EndpointKind.loadBalance`: `chat` for
 * the chat dialects, `embeddings`) as configured.
 */
export class RouterRuntime {
  readonly latency: LatencyBalancer<ProviderName>;
  private readonly groups = new Map<LoadBalanceKey, Group>();
  private readonly pools = new Map<EndpointName, Pool>();
  private readonly health = new Map<ProviderName, ProviderHealth>();

  /**
   * @param config the router's config.
   * @param providers every provider's config (for `models` lists).
   * @param now clock in ms (monotonic); injectable for tests.
   * @param random random source in [0, 1); injectable for tests.
   * @param keyless providers without credentials: never chosen while another member remains.
   * @param serves whether a provider can answer a kind (default {@link servesKind}); injectable for tests.
   */
  constructor(
    readonly config: RouterConfig,
    private readonly providers: Record<ProviderName, ProviderConfig>,
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
    keyless: ReadonlySet<ProviderName> = new Set(),
    serves: (provider: ProviderName, kind: EndpointKind) => boolean = servesKind,
  ) {
    const all = new Set<ProviderName>();
    for (const key of LOAD_BALANCE_KEYS) {
      const lb = config[key];
      const members = lb.providers.map((p) => p.provider);
      this.groups.set(key, { config: lb, members, weighted: new WeightedBalancer(lb.providers, random) });
      for (const p of members) all.add(p);
    }
    for (const kind of ROUTED_KINDS) {
      const group = this.groups.get(kind.loadBalance)!;
      const serving = group.members.filter((p) => serves(p, kind));
      const withKeys = serving.filter((p) => !keyless.has(p));
      const usable = withKeys.length > 0 ? withKeys : serving;
      this.pools.set(kind.name, { group, usable, mapped: this.mappedMembers(group.config, usable) });
    }
    this.latency = new LatencyBalancer([...all], { now, random });
    for (const p of all) this.health.set(p, { outcomes: [], ejectedUntilMs: 0, probing: false, waitUntilMs: 0 });
  }

  /**
   * model-mappings: each mapped model's members among `usable`, less those that lack it and have no
   * mapping for it. A member lacks a model its configured `models` list leaves out; without a list,
   * one the model table does not list at it (unless the table lists nothing for it), since a request
   * sent there is a 404 and router retries do not cover 4xx.
   */
  private mappedMembers(lb: LoadBalanceConfig, usable: readonly ProviderName[]): ReadonlyMap<string, readonly ProviderName[]> {
    const mapped = new Map<string, readonly ProviderName[]>();
    if (lb.strategy !== 'model-mappings') return mapped;
    const tabled = new Set(listModels().map((m) => m.provider));
    for (const [model, candidates] of Object.entries(lb.modelMappings)) {
      const able = usable.filter((p) => !this.lacks(p, model, tabled) || candidates.some((c) => c.startsWith(`${p}/`)));
      if (able.length > 0) mapped.set(model, able);
    }
    return mapped;
  }

  /**
   * Whether `provider` lacks `model`: its configured `models` list leaves it out, or (no list) the
   * table lists models for the provider (`tabled`) but not this one, whether or not it lists the
   * model at another provider. Only a provider the table lists nothing for is taken to serve any model.
   */
  private lacks(provider: ProviderName, model: string, tabled: ReadonlySet<ProviderName>): boolean {
    const listed = this.providers[provider]?.models ?? [];
    if (listed.length > 0) return !listed.includes(model);
    return tabled.has(provider) && getModelInfo(provider, model) === null;
  }

  /** The load-balance settings of a load-balance key. */
  loadBalance(key: LoadBalanceKey): LoadBalanceConfig {
    return this.groups.get(key)!.config;
  }

  /** The router's providers for a load-balance key (in config order; shared, not to be changed). */
  members(key: LoadBalanceKey): readonly ProviderName[] {
    return this.groups.get(key)!.members;
  }

  /**
   * Chooses a provider for a bare model name at an endpoint kind among the members that serve the
   * kind (and, under model-mappings, can serve the model), avoiding providers without credentials
   * while others remain, providers already tried when others remain, and unhealthy providers while
   * healthy ones remain.
   * @returns the choice, or null when no member of the router serves the endpoint kind.
   */
  choose(endpoint: EndpointName, model: string, tried: ReadonlySet<ProviderName> = new Set()): RouteChoice | null {
    const pool = this.pools.get(endpoint)!;
    const lb = pool.group.config;
    const members = pool.mapped.get(model) ?? pool.usable;
    if (members.length === 0) return null;
    let untried: readonly ProviderName[] = members.filter((p) => !tried.has(p));
    if (untried.length === 0) untried = members;
    const now = this.now();
    const healthy = untried.filter((p) => this.available(p, now));
    let probe = false;
    let candidates = healthy;
    if (candidates.length === 0) {
      // Everyone is out: use the provider whose ejection ends first, among those not asking to wait
      // when there are any (a retry waited for one of the others: ./upstream/retry.ts).
      const free = untried.filter((p) => this.health.get(p)!.waitUntilMs <= now);
      candidates = [(free.length > 0 ? free : untried).reduce((a, b) => (this.health.get(a)!.ejectedUntilMs <= this.health.get(b)!.ejectedUntilMs ? a : b))];
    }
    const provider = lb.strategy === 'weighted' ? pool.group.weighted.pick(candidates) : this.latency.pick(candidates);
    if (!provider) return null;
    const h = this.health.get(provider)!;
    if (h.ejectedUntilMs > 0 && now >= h.ejectedUntilMs) {
      h.probing = true;
      probe = true;
    }
    return { provider, model: this.mapModel(lb, provider, model), probe };
  }

  /**
   * Every provider {@link choose} may pick for `model` at `endpoint`, on this attempt or a retry
   * (the members that serve it with credentials, whatever their health), each with the model it
   * would be sent (model-mappings applied), in config order. Side-effect free (no probe is claimed),
   * for the token-limit handlers, which run once before the choice.
   */
  targets(endpoint: EndpointName, model: string): Array<{ provider: ProviderName; model: string }> {
    const pool = this.pools.get(endpoint)!;
    return (pool.mapped.get(model) ?? pool.usable).map((provider) => ({ provider, model: this.mapModel(pool.group.config, provider, model) }));
  }

  /**
   * How long a retry must wait before a provider it may go to no longer asks to wait (its 429's
   * `Retry-After`): 0 when one of them never asked or its wait is over, else the shortest wait (ms).
   * The providers are those {@link choose} picks from for `model` at `endpoint` after `tried` (the
   * untried members, else all), or `pinned` alone when the client pinned it.
   */
  retryWaitMs(endpoint: EndpointName, model: string, tried: ReadonlySet<ProviderName>, pinned: ProviderName | null): number {
    const now = this.now();
    const waitOf = (p: ProviderName): number => Math.max(0, (this.health.get(p)?.waitUntilMs ?? 0) - now);
    if (pinned !== null) return waitOf(pinned);
    const pool = this.pools.get(endpoint)!;
    const members = pool.mapped.get(model) ?? pool.usable;
    const untried = members.filter((p) => !tried.has(p));
    let wait = Infinity;
    for (const p of untried.length > 0 ? untried : members) wait = Math.min(wait, waitOf(p));
    return wait === Infinity ? 0 : wait;
  }

  /** True when `provider` may take requests at `now` (in the pool, or due for its probe). */
  private available(provider: ProviderName, now: number): boolean {
    const h = this.health.get(provider);
    if (!h) return true;
    if (h.ejectedUntilMs === 0) return true;
    return now >= h.ejectedUntilMs && !h.probing;
  }

  /** model-mappings: when `provider` lacks `model`, the first mapping candidate for that provider. */
  private mapModel(lb: LoadBalanceConfig, provider: ProviderName, model: string): string {
    // Own keys only: a client's model named "constructor" or "__proto__" is just an unmapped name.
    if (lb.strategy !== 'model-mappings' || this.offers(provider, model) || !Object.hasOwn(lb.modelMappings, model)) return model;
    for (const candidate of lb.modelMappings[model]!) {
      const slash = candidate.indexOf('/');
      const p = slash > 0 ? candidate.slice(0, slash) : '';
      if (p === provider) return candidate.slice(slash + 1);
    }
    return model;
  }

  /** True when the provider is known to serve the model (its `models` list, else the price table). */
  offers(provider: ProviderName, model: string): boolean {
    const listed = this.providers[provider]?.models ?? [];
    if (listed.length > 0) return listed.includes(model);
    return getModelInfo(provider, model) !== null;
  }

  /**
   * Records an attempt's outcome.
   * @param status the provider's HTTP status, or 0 for a connection error or timeout.
   * @param retryAfterMs for a 429, how long the provider asked to be left alone (ms).
   */
  record(provider: ProviderName, status: number, retryAfterMs: number | null = null): void {
    const h = this.health.get(provider);
    if (!h) return;
    const now = this.now();
    const { windowMs, errorThreshold, minRequests, coolDownMs } = this.config.health;
    if (status === 429) {
      h.ejectedUntilMs = now + (retryAfterMs ?? 1000);
      if (retryAfterMs !== null) h.waitUntilMs = h.ejectedUntilMs;
      h.probing = false;
      return;
    }
    const failed = status === 0 || status >= 500;
    if (h.probing) {
      h.probing = false;
      if (failed) {
        h.ejectedUntilMs = now + coolDownMs;
        return;
      }
      h.ejectedUntilMs = 0;
      h.outcomes = [];
    } else if (h.ejectedUntilMs > 0 && now >= h.ejectedUntilMs && !failed) {
      h.ejectedUntilMs = 0;
      h.outcomes = [];
    }
    h.outcomes.push({ atMs: now, failed });
    let drop = 0;
    while (drop < h.outcomes.length && h.outcomes[drop]!.atMs < now - windowMs) drop++;
    if (drop > 0) h.outcomes.splice(0, drop);
    if (h.outcomes.length > 10_000) h.outcomes.splice(0, h.outcomes.length - 10_000);
    if (!failed || h.ejectedUntilMs > now) return;
    const errors = h.outcomes.reduce((n, o) => n + (o.failed ? 1 : 0), 0);
    if (h.outcomes.length >= minRequests && errors / h.outcomes.length > errorThreshold) {
      h.ejectedUntilMs = now + coolDownMs;
      h.outcomes = [];
    }
  }

  /** The health of every provider of the router. */
  healthView(): ProviderHealthView[] {
    const now = this.now();
    return [...this.health.entries()].map(([provider, h]) => ({
      provider,
      healthy: h.ejectedUntilMs === 0 || now >= h.ejectedUntilMs,
      ejectedForMs: Math.max(0, h.ejectedUntilMs - now),
      windowRequests: h.outcomes.length,
      windowErrors: h.outcomes.filter((o) => o.failed).length,
      inFlight: this.latency.snapshot(provider)?.inFlight ?? 0,
    }));
  }

  /**
   * Delay before retry number `attempt` (1-based), in ms; null when no retry is allowed.
   */
  retryDelayMs(attempt: number): number | null {
    return retryDelay(this.config.retries, attempt, this.random);
  }
}

/**
 * Delay before retry `attempt` (1-based) under `policy`, in ms: constant `min-delay`, or exponential
 * with full jitter, random(0, min(max, min·factor^(attempt−1))]. Null when `attempt` exceeds
 * `max-retries` or there is no policy.
 */
export function retryDelay(policy: RetryPolicy | null, attempt: number, random: () => number = Math.random): number | null {
  if (!policy || attempt > policy.maxRetries) return null;
  if (policy.strategy === 'constant') return policy.minDelayMs;
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * policy.factor ** (attempt - 1));
  return Math.max(1, random() * ceiling);
}

/** True for outcomes a router retries: connection errors/timeouts (status 0), 429 and 5xx. */
export function isRetryable(status: number): boolean {
  return status === 0 || status === 429 || status >= 500;
}
