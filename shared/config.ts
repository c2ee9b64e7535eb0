/**
 * The gateway configuration (`gateway.yaml`): its schema, validated once at start with superstruct,
 * and the typed object every other module reads. Nothing reads raw YAML or `process.env` after
 * {@link loadConfig} returns (provider API keys are read here, once, from the environment).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import ms from 'ms';
import YAML from 'yaml';
import {
  array,
  boolean,
  define,
  enums,
  integer,
  min,
  number,
  object,
  optional,
  record,
  size,
  string,
  refine,
  type Infer,
} from 'superstruct';
import { describeStructError, validateValue } from './validate.ts';
import { checkModelOverrides, ModelOverrideError, REASONING_EFFORTS, type ModelOverride } from './models.ts';
import { missingProviderSetting } from './provider-settings.ts';
import { PROVIDER_NAMES, PROVIDERS, isProviderName, offersEmbeddings, type ProviderName } from './providers.ts';
import { escapedSecretForm, secretForm } from './secret-form.ts';

/** Raised when the configuration is invalid; `message` names the key path and what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses a duration such as `500ms`, `1s`, `1m`, `5m`, `1h` (the `ms` package's syntax) into milliseconds.
 * @throws {ConfigError} when the text is not a positive duration.
 */
export function parseDuration(text: string, path = 'duration'): number {
  const value = typeof text === 'string' ? ms(text as ms.StringValue) : undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`${path}: expected a positive duration such as "500ms", "1s", "5m" or "1h", got ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * The longest duration a Node timer holds (ms): 2^31 − 1, about 24.8 days. Node turns a longer
 * `setTimeout`/`setInterval` delay into 1 ms (TimeoutOverflowWarning), so such a setting would fire at once.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Whether `value` is a duration (a positive number of ms, or `ms` text), and at most `maxMs` when given. */
function checkDuration(value: unknown, maxMs: number | null): true | string {
  let parsed: number | undefined;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return 'expected a positive number of milliseconds';
    parsed = value;
  } else {
    if (typeof value !== 'string') return 'expected a duration such as "500ms", "1s", "5m" or "1h"';
    parsed = ms(value as ms.StringValue);
    if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed <= 0) {
      return `expected a duration such as "500ms", "1s", "5m" or "1h", got ${JSON.stringify(value)}`;
    }
  }
  if (maxMs !== null && parsed > maxMs) {
    return `at most ${maxMs} ms (about 24.8 days; a timer waits it, and Node fires a longer timer at once), got ${JSON.stringify(value)}`;
  }
  return true;
}

/** A duration string (`500ms`, `1s`, `5m`, `1h`, `30d`) or a positive number of milliseconds; a span, never a timer's delay. */
const Duration = define<string | number>('duration', (value) => checkDuration(value, null));

/** A {@link Duration} a timer waits (a timeout, an interval, a retry delay): at most {@link MAX_TIMER_MS}. */
const TimerDuration = define<string | number>('timer duration', (value) => checkDuration(value, MAX_TIMER_MS));

/** Why `value` is not an absolute URL of one of `protocols` (`example` shows one), or true when it is one. */
function checkUrl(value: unknown, protocols: readonly string[], example: string): true | string {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : null;
  return url && protocols.includes(url.protocol)
    ? true
    : `expected an absolute ${protocols.join(' or ')} URL such as "${example}", got ${JSON.stringify(value)}`;
}

/** An absolute `http:` or `https:` URL (a provider's base URL, which request paths are appended to). */
const HttpUrl = define<string>('http url', (value) => checkUrl(value, ['http:', 'https:'], 'https://api.example.com/v1'));

/**
 * Why `value` is not a control-plane URL, or true when it is one: `ws:` or `wss:`, and `http:` or `https:`, which
 * the `ws` client accepts as the same (configurations written so kept starting).
 */
function checkWsUrl(value: unknown): true | string {
  return checkUrl(value, ['ws:', 'wss:', 'http:', 'https:'], 'ws://127.0.0.1:8585/v1/control-plane');
}

/** admin's control-plane WebSocket URL. */
const WsUrl = define<string>('ws url', checkWsUrl);

/** A model-mappings candidate: `<provider>/<model>` with a known provider and a model. */
const MappingTarget = define<string>('mapping target', (value) => {
  const slash = typeof value === 'string' ? value.indexOf('/') : -1;
  if (typeof value !== 'string' || slash <= 0 || slash === value.length - 1) {
    return `expected "<provider>/<model>" such as "openai/gpt-4o-mini", got ${JSON.stringify(value)}`;
  }
  const provider = value.slice(0, slash);
  return isProviderName(provider) ? true : `unknown provider ${JSON.stringify(provider)}; known providers: ${PROVIDER_NAMES.join(', ')}`;
});

const Provider = define<ProviderName>('provider', (value) =>
  typeof value === 'string' && isProviderName(value)
    ? true
    : `unknown provider ${JSON.stringify(value)}; known providers: ${PROVIDER_NAMES.join(', ')}`,
);

const PositiveInt = min(integer(), 1);

/** GCRA limit: `capacity` requests of burst, refilled fully over `refill-frequency`. */
const GcraLimitSchema = object({
  capacity: PositiveInt,
  'refill-frequency': Duration,
});

const RateLimitLevelSchema = object({
  'per-api-key': optional(GcraLimitSchema),
  'per-user': optional(GcraLimitSchema),
});

const GlobalRateLimitSchema = object({
  store: optional(enums(['in-memory', 'redis'])),
  'per-api-key': optional(GcraLimitSchema),
  'per-user': optional(GcraLimitSchema),
  'cleanup-interval': optional(TimerDuration),
});

const RetrySchema = object({
  strategy: optional(enums(['exponential', 'constant'])),
  'max-retries': optional(min(integer(), 0)),
  'min-delay': optional(TimerDuration),
  'max-delay': optional(TimerDuration),
  factor: optional(min(number(), 1)),
  delay: optional(TimerDuration),
});

const HealthSchema = object({
  window: optional(Duration),
  'error-threshold': optional(refine(number(), 'ratio', (v) => (v > 0 && v <= 1) || 'expected a ratio in (0, 1]')),
  'min-requests': optional(PositiveInt),
  'cool-down': optional(Duration),
});

/** A router's provider: a name, or `{provider, weight}` for the weighted strategy. */
const RouterProviderEntry = define<ProviderName | { provider: ProviderName; weight: number }>('router provider', (value) => {
  const known = (name: unknown) =>
    typeof name === 'string' && isProviderName(name) ? true : `unknown provider ${JSON.stringify(name)}; known providers: ${PROVIDER_NAMES.join(', ')}`;
  if (typeof value === 'string') return known(value);
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'expected a provider name or {provider, weight}';
  const { provider, weight, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `unknown key ${Object.keys(rest)[0]}`;
  const k = known(provider);
  if (k !== true) return k;
  return typeof weight === 'number' && weight > 0 && Number.isFinite(weight) ? true : 'weight: expected a positive number';
});

const LoadBalanceChatSchema = object({
  strategy: enums(['latency', 'weighted', 'model-mappings']),
  providers: array(RouterProviderEntry),
  'model-mappings': optional(record(string(), array(MappingTarget))),
});

const RouterSchema = object({
  'load-balance': object({ chat: LoadBalanceChatSchema, embeddings: optional(LoadBalanceChatSchema) }),
  'rate-limit': optional(RateLimitLevelSchema),
  retries: optional(RetrySchema),
  health: optional(HealthSchema),
});

const ProviderConfigSchema = object({
  'base-url': optional(HttpUrl),
  /** Azure: deployments by model name; Bedrock: region override. */
  'api-version': optional(string()),
  deployments: optional(record(string(), string())),
  region: optional(string()),
  models: optional(array(string())),
  /** Bedrock: the Anthropic betas sent on (proxy/translators/wire/bedrock-betas.ts); replaces the documented list. */
  'anthropic-betas': optional(array(string())),
});

const PricePerMTok = min(number(), 0);

/**
 * One entry of `models:`: prices in USD per 1,000,000 tokens, limits in tokens, `reasoning` (the
 * model takes a reasoning effort) and `reasoning-efforts` (the ones it accepts when only some); see
 * {@link ModelOverride} for what an absent member means.
 */
const ModelOverrideSchema = object({
  kind: optional(enums(['chat', 'embeddings'])),
  reasoning: optional(boolean()),
  'reasoning-efforts': optional(size(array(enums(REASONING_EFFORTS)), 1, REASONING_EFFORTS.length)),
  input: optional(PricePerMTok),
  output: optional(PricePerMTok),
  'cache-read': optional(PricePerMTok),
  'cache-write-5m': optional(PricePerMTok),
  'cache-write-1h': optional(PricePerMTok),
  'context-window': optional(PositiveInt),
  'max-output-tokens': optional(min(integer(), 0)),
  'default-output-tokens': optional(min(integer(), 0)),
});

/** Superstruct schema of the YAML document (kebab-case keys, as users write them). */
export const GatewayConfigSchema = object({
  svc: optional(object({ features: optional(enums(['none', 'auth', 'observability'])) })),
  'control-plane': optional(object({ url: optional(WsUrl), 'ca-file': optional(string()) })),
  server: optional(
    object({
      'max-body-size': optional(PositiveInt),
      'max-translated-response-size': optional(PositiveInt),
      'upstream-timeout': optional(TimerDuration),
      'shutdown-timeout': optional(TimerDuration),
      'headers-timeout': optional(TimerDuration),
      'request-timeout': optional(TimerDuration),
      'send-timeout': optional(TimerDuration),
    }),
  ),
  providers: optional(record(Provider, ProviderConfigSchema)),
  routers: optional(record(string(), RouterSchema)),
  global: optional(object({ 'rate-limit': optional(GlobalRateLimitSchema) })),
  'rate-limit-store': optional(
    object({
      type: enums(['in-memory', 'redis']),
      url: optional(string()),
      'fail-mode': optional(enums(['local', 'open', 'closed'])),
      timeout: optional(TimerDuration),
    }),
  ),
  'log-queue': optional(
    object({
      'max-records': optional(PositiveInt),
      'max-bytes': optional(PositiveInt),
      'batch-size': optional(PositiveInt),
      'flush-interval': optional(TimerDuration),
      'max-body-bytes': optional(PositiveInt),
    }),
  ),
  admin: optional(
    object({
      'max-body-size': optional(PositiveInt),
      'retention-days': optional(PositiveInt),
      'max-page-body-bytes': optional(PositiveInt),
    }),
  ),
  'token-limit': optional(object({ preload: optional(boolean()) })),
  /** The response cache (issue 18): see {@link CacheConfig}. */
  cache: optional(
    object({
      store: optional(enums(['memory', 'redis'])),
      url: optional(string()),
      'max-size': optional(PositiveInt),
      'max-entry-size': optional(PositiveInt),
      'default-max-age': optional(Duration),
      timeout: optional(TimerDuration),
    }),
  ),
  logging: optional(object({ level: optional(enums(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])) })),
  metrics: optional(object({ enabled: optional(boolean()) })),
  /** Operator overrides of the model table, keyed `<provider>/<model>`. */
  models: optional(record(string(), ModelOverrideSchema)),
});

/** The YAML document as validated, before defaults and duration parsing. */
export type RawGatewayConfig = Infer<typeof GatewayConfigSchema>;

/** A GCRA limit: burst `capacity` (requests) refilled fully over `periodMs` (ms). */
export interface GcraLimit {
  capacity: number;
  periodMs: number;
}

/** Rate limits of one level (global or a router). */
export interface RateLimitLevel {
  perApiKey: GcraLimit | null;
  perUser: GcraLimit | null;
}

/** Retry policy of a router (issue 6). Delays in ms. */
export interface RetryPolicy {
  strategy: 'exponential' | 'constant';
  maxRetries: number;
  minDelayMs: number;
  maxDelayMs: number;
  factor: number;
}

/** Provider health tracking of a router: error share over a sliding window (ms). */
export interface HealthPolicy {
  windowMs: number;
  errorThreshold: number;
  minRequests: number;
  coolDownMs: number;
}

/** A provider of a router's pool with its weight (1 unless the strategy is `weighted`). */
export interface RouterProvider {
  provider: ProviderName;
  weight: number;
}

/** Load-balance settings of one endpoint kind (chat or embeddings) of a router. */
export interface LoadBalanceConfig {
  strategy: 'latency' | 'weighted' | 'model-mappings';
  providers: RouterProvider[];
  /** model-mappings: requested model → `<provider>/<model>` candidates in order. */
  modelMappings: Record<string, string[]>;
}

/** A named router (`/router/<name>/...`). */
export interface RouterConfig {
  name: string;
  /** `load-balance.chat`: chat completions, Messages, Responses and their count and stored-response calls. */
  chat: LoadBalanceConfig;
  /**
   * `load-balance.embeddings`, else the chat group itself: the proxy then balances embeddings over
   * the chat members that offer them (proxy/router.ts keeps, per endpoint kind, the members that serve it).
   */
  embeddings: LoadBalanceConfig;
  rateLimit: RateLimitLevel;
  retries: RetryPolicy | null;
  health: HealthPolicy;
}

/** A provider's effective settings: base URL (no trailing slash) and its key from the environment. */
export interface ProviderConfig {
  name: ProviderName;
  baseUrl: string;
  /** The provider's API key, from `PROVIDERS[name].keyEnv`; never logged, never stored. */
  apiKey: string | null;
  /**
   * The credential the gateway sends this provider with its own key, in the form provider answers are
   * searched for it (./secret-form.ts; proxy/upstream/provider-secrets.ts redacts it): `apiKey`, for
   * Bedrock `AWS_SESSION_TOKEN` with SigV4 keys (sent as `x-amz-security-token`), else `AWS_BEARER_TOKEN_BEDROCK`; null when none or too short. Worked out once when the config is
   * built, so a request pays nothing for it. Absent (a config written by hand, as in tests): worked
   * out from `apiKey` when needed.
   */
  secret?: string | null;
  /**
   * `secret` JSON-escaped (`/` as `\/`, ./secret-form.ts `escapedSecretForm`), as a provider's JSON error body may
   * carry it; null when the same as `secret`. Worked out with it, once; absent: worked out when needed (error paths).
   */
  secretEscaped?: string | null;
  apiVersion: string | null;
  deployments: Record<string, string>;
  region: string | null;
  models: string[];
  /**
   * Bedrock only: the Anthropic betas the gateway sends on to Bedrock (`anthropic-betas`, replacing the list
   * Bedrock documents; a beta outside it is removed and recorded); null: the documented list.
   */
  anthropicBetas: readonly string[] | null;
}

/** Which features run: `none` (no auth, no log), `auth` (API keys), `observability` (auth and request log). */
export type Features = 'none' | 'auth' | 'observability';

/** The largest memory cache store: one arena, so at most Node's largest Buffer (bytes). */
const MAX_MEMORY_CACHE_BYTES = 4 * 1024 * 1024 * 1024;

/**
 * The response cache (`cache:` in gateway.yaml), used by requests that send `Svc-Cache-Enabled: true`.
 * `store`: `memory` (one process, an arena of `maxBytes`, least recently read out first) or `redis`
 * (`redisUrl`, shared by every gateway on it); `maxEntryBytes` bounds one stored answer (larger ones
 * are not kept);
 * `defaultTtlMs` is the lifetime without `Cache-Control: max-age` (at most 365 days); `timeoutMs`
 * bounds a Redis read (past it the request is a miss).
 */
export interface CacheConfig {
  store: 'memory' | 'redis';
  redisUrl: string | null;
  maxBytes: number;
  maxEntryBytes: number;
  defaultTtlMs: number;
  timeoutMs: number;
}

/**
 * Default `admin.max-page-body-bytes`: 64 MiB of body text per answer of a list route that returns
 * bodies (`POST /v1/request/query`, a dataset's rows). Admin holds a page three or four times over
 * while answering (the text from PostgreSQL, the parsed bodies, `llmSchema` repeating the messages,
 * the serialized answer: a page at 64 MiB is a JSON answer of about 126 MiB and took about 0.5 GB of
 * RSS, measured), so one answer stays within a few hundred MB and far below V8's longest string
 * (2^29 − 24 characters), past which the answer cannot be serialized at all. The console's pages of
 * 200 requests fit while their bodies average under 320 KiB.
 */
export const DEFAULT_MAX_PAGE_BODY_BYTES = 64 * 1024 * 1024;

/** The longest a cached answer lives (ms): 365 days, whatever `max-age` or `default-max-age` say. */
export const CACHE_MAX_TTL_MS = 365 * 24 * 3600 * 1000;

/**
 * `cache:` with defaults: Redis when the rate-limit store is Redis (its URL), else memory; 256 MiB,
 * 1 MiB per answer, 7 days, 500 ms.
 * @throws {ConfigError} naming the key: a Redis store without a URL, a default lifetime over 365 days,
 *   an entry larger than the whole memory store, a memory store over 4 GiB.
 */
function toCacheConfig(raw: RawGatewayConfig['cache'], rateLimitStore: string, rateLimitUrl: string | null, source: string): CacheConfig {
  const store = raw?.store ?? (rateLimitStore === 'redis' ? 'redis' : 'memory');
  const redisUrl = raw?.url ?? rateLimitUrl;
  if (store === 'redis' && !redisUrl) throw new ConfigError(`${source}: cache.url: required when cache.store is "redis" (or set rate-limit-store.url)`);
  const defaultTtlMs = toDuration(raw?.['default-max-age'], 7 * 24 * 3600 * 1000);
  if (defaultTtlMs > CACHE_MAX_TTL_MS) throw new ConfigError(`${source}: cache.default-max-age: at most 365 days, got ${JSON.stringify(raw?.['default-max-age'])}`);
  const maxBytes = raw?.['max-size'] ?? 256 * 1024 * 1024;
  const maxEntryBytes = raw?.['max-entry-size'] ?? 1024 * 1024;
  if (maxEntryBytes > maxBytes) throw new ConfigError(`${source}: cache.max-entry-size: ${maxEntryBytes} bytes exceeds cache.max-size (${maxBytes} bytes)`);
  if (store === 'memory' && maxBytes > MAX_MEMORY_CACHE_BYTES) throw new ConfigError(`${source}: cache.max-size: the memory store holds at most ${MAX_MEMORY_CACHE_BYTES} bytes (4 GiB), got ${maxBytes}`);
  return { store, redisUrl: store === 'redis' ? redisUrl : null, maxBytes, maxEntryBytes, defaultTtlMs, timeoutMs: toDuration(raw?.timeout, 500) };
}

/** The validated, typed gateway configuration. Times in ms, sizes in bytes. */
export interface GatewayConfig {
  features: Features;
  controlPlane: { url: string; caFile: string | null };
  /**
   * `headersTimeoutMs`: the request's headers, and then each next piece of its body, must arrive
   * within it; `requestTimeoutMs` (≥ `headersTimeoutMs`): the whole request, headers and body, must
   * arrive within it from its first byte (the answer is not bounded by it).
   * `maxTranslatedResponseBytes`: the most of a provider's answer the proxy reads whole to translate
   * it (a non-streamed answer on a translated route, an error it maps); the request's own limit is
   * `maxBodyBytes`. `upstreamTimeoutMs`: the provider's silence (before its headers, and between
   * pieces of its answer); an answer read whole must also end within twice it of its headers.
   * `sendTimeoutMs`: how long a client may take none of its answer while the proxy holds the
   * provider's for it (nginx's `send_timeout`).
   */
  server: {
    maxBodyBytes: number;
    maxTranslatedResponseBytes: number;
    upstreamTimeoutMs: number;
    sendTimeoutMs: number;
    shutdownTimeoutMs: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
  };
  providers: Record<ProviderName, ProviderConfig>;
  routers: Record<string, RouterConfig>;
  rateLimit: {
    global: RateLimitLevel;
    store: 'in-memory' | 'redis';
    redisUrl: string | null;
    /** On a store failure: `local` (limit with an in-memory GCRA of this proxy), `open` (admit), `closed` (refuse). */
    failMode: 'local' | 'open' | 'closed';
    storeTimeoutMs: number;
    cleanupIntervalMs: number;
  };
  logQueue: { maxRecords: number; maxBytes: number; batchSize: number; flushIntervalMs: number; maxBodyBytes: number };
  /**
   * `maxPageBodyBytes`: the most body text (request and response bodies, in bytes as stored) one
   * answer of a list route may carry; see {@link DEFAULT_MAX_PAGE_BODY_BYTES}.
   */
  admin: { maxBodyBytes: number; retentionDays: number; maxPageBodyBytes: number };
  /**
   * `preload`: load the tokenizer tables at start (about 75 MB of memory) instead of on the first
   * request whose size needs a token count. Default false.
   */
  tokenLimit: { preload: boolean };
  /** The response cache (`Svc-Cache-Enabled`). */
  cache: CacheConfig;
  logLevel: string;
  /** `metrics.enabled` (default true): false and neither process answers `GET /metrics` (404). */
  metrics: { enabled: boolean };
  /**
   * `models:`: prices (USD per 1M tokens) and limits (tokens) the operator adds or overrides, keyed
   * `<provider>/<model>`; both processes apply them at start with `applyModelOverrides`
   * (shared/models.ts). Validated against the shipped table here.
   */
  models: Record<string, ModelOverride>;
}

function toDuration(value: string | number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  return typeof value === 'number' ? value : parseDuration(value);
}

function toGcra(raw: Infer<typeof GcraLimitSchema> | undefined): GcraLimit | null {
  return raw ? { capacity: raw.capacity, periodMs: toDuration(raw['refill-frequency'], 1000) } : null;
}

/**
 * One `load-balance.<key>` group (`path` names it, `source` the file).
 * @throws {ConfigError} naming the key: no provider, a provider listed twice, a weight on a router that
 *   is not `weighted` or `model-mappings` on one that is not `model-mappings` (both would be ignored),
 *   and, for the embeddings group (`embeddings`), no provider that offers embeddings.
 */
function toLoadBalance(raw: Infer<typeof LoadBalanceChatSchema>, path: string, source: string, embeddings = false): LoadBalanceConfig {
  const fail = (key: string, what: string) => new ConfigError(`${source}: ${path}.${key}: ${what}`);
  if (raw.providers.length === 0) throw fail('providers', 'expected at least one provider');
  const providers: RouterProvider[] = [];
  for (const [i, p] of raw.providers.entries()) {
    const entry = typeof p === 'string' ? { provider: p, weight: 1 } : { provider: p.provider, weight: p.weight };
    if (typeof p !== 'string' && raw.strategy !== 'weighted') {
      throw fail(`providers.${i}.weight`, `only a "weighted" router uses weights; this one is "${raw.strategy}" (list the provider by its name)`);
    }
    if (providers.some((q) => q.provider === entry.provider)) throw fail(`providers.${i}`, `${entry.provider} is listed twice`);
    providers.push(entry);
  }
  if (raw['model-mappings'] !== undefined && raw.strategy !== 'model-mappings') {
    throw fail('model-mappings', `only a "model-mappings" router applies mappings; this one is "${raw.strategy}"`);
  }
  if (embeddings && !providers.some((p) => offersEmbeddings(p.provider))) {
    const offering = PROVIDER_NAMES.filter(offersEmbeddings).join(', ');
    throw fail('providers', `none of ${providers.map((p) => p.provider).join(', ')} offers embeddings (those that do: ${offering})`);
  }
  return { strategy: raw.strategy, providers, modelMappings: raw['model-mappings'] ?? {} };
}

/**
 * `retries:` with its defaults (exponential, 2 retries, 100 ms to 2 s, factor 2), or null without one:
 * then the router retries nothing.
 * @throws {ConfigError} when an exponential backoff's `min-delay` is above its `max-delay`.
 */
function toRetries(rt: Infer<typeof RetrySchema> | undefined, path: string, source: string): RetryPolicy | null {
  if (!rt) return null;
  const strategy = rt.strategy ?? 'exponential';
  const minDelayMs = toDuration(rt['min-delay'] ?? rt.delay, 100);
  const maxDelayMs = toDuration(rt['max-delay'], 2000);
  // A constant delay reads only min-delay (or delay).
  if (strategy === 'exponential' && minDelayMs > maxDelayMs) {
    throw new ConfigError(`${source}: ${path}.min-delay: ${minDelayMs} ms is above ${path}.max-delay (${maxDelayMs} ms${rt['max-delay'] === undefined ? ', its default' : ''})`);
  }
  return { strategy, maxRetries: rt['max-retries'] ?? 2, minDelayMs, maxDelayMs, factor: rt.factor ?? 2 };
}

/**
 * The `models:` entries as {@link ModelOverride}s, each checked against the shipped model table.
 * @throws {ConfigError} naming the key path (`models.<provider>/<model>.<member>`) and the problem.
 */
function toModelOverrides(raw: RawGatewayConfig['models'], source: string): Record<string, ModelOverride> {
  const out: Record<string, ModelOverride> = Object.create(null);
  for (const [key, m] of Object.entries(raw ?? {})) {
    const o: ModelOverride = {};
    if (m.kind !== undefined) o.kind = m.kind;
    if (m.reasoning !== undefined) o.reasoning = m.reasoning;
    if (m['reasoning-efforts'] !== undefined) o.reasoningEfforts = m['reasoning-efforts'];
    if (m.input !== undefined) o.inputPerMTok = m.input;
    if (m.output !== undefined) o.outputPerMTok = m.output;
    if (m['cache-read'] !== undefined) o.cachedInputPerMTok = m['cache-read'];
    if (m['cache-write-5m'] !== undefined) o.cacheWritePerMTok = m['cache-write-5m'];
    if (m['cache-write-1h'] !== undefined) o.cacheWrite1hPerMTok = m['cache-write-1h'];
    if (m['context-window'] !== undefined) o.contextWindow = m['context-window'];
    if (m['max-output-tokens'] !== undefined) o.maxOutputTokens = m['max-output-tokens'];
    if (m['default-output-tokens'] !== undefined) o.defaultOutputTokens = m['default-output-tokens'];
    out[key] = o;
  }
  try {
    checkModelOverrides(out);
  } catch (err) {
    if (!(err instanceof ModelOverrideError)) throw err;
    throw new ConfigError(`${source}: models.${err.key}${err.member ? `.${err.member}` : ''}: ${err.message}`);
  }
  return out;
}

/**
 * The secret part of what the gateway sends Bedrock with its own credentials, as the transport chooses them
 * (proxy/providers/bedrock.ts): with SigV4 keys (`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`) the session token,
 * `AWS_SESSION_TOKEN`, sent as `x-amz-security-token` (the secret key itself only signs, it is never sent); else
 * the Bedrock API key `AWS_BEARER_TOKEN_BEDROCK`, sent as a bearer token.
 */
function bedrockSentSecret(env: NodeJS.ProcessEnv): string | undefined {
  return env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY ? env.AWS_SESSION_TOKEN : env.AWS_BEARER_TOKEN_BEDROCK;
}

/**
 * `providers:` with the defaults of shared/providers.ts and each provider's key from `env` (with its
 * plain and JSON-escaped forms, which the proxy redacts).
 * @throws {ConfigError} for `anthropic-betas` on a provider other than bedrock.
 */
function toProviders(rawProviders: RawGatewayConfig['providers'], env: NodeJS.ProcessEnv, source: string): Record<ProviderName, ProviderConfig> {
  const providers = {} as Record<ProviderName, ProviderConfig>;
  for (const name of PROVIDER_NAMES) {
    const p = rawProviders?.[name];
    const info = PROVIDERS[name];
    const secret = secretForm(info.keyEnv ? env[info.keyEnv] : name === 'bedrock' ? bedrockSentSecret(env) : null);
    providers[name] = {
      name,
      baseUrl: (p?.['base-url'] ?? info.defaultBaseUrl).replace(/\/+$/, ''),
      apiKey: info.keyEnv ? env[info.keyEnv] ?? null : null,
      secret,
      secretEscaped: escapedSecretForm(secret),
      apiVersion: p?.['api-version'] ?? null,
      deployments: p?.deployments ?? {},
      region: p?.region ?? null,
      models: p?.models ?? [],
      anthropicBetas: p?.['anthropic-betas'] ? Object.freeze([...p['anthropic-betas']]) : null,
    };
    if (p?.['anthropic-betas'] && name !== 'bedrock') throw new ConfigError(`${source}: providers.${name}.anthropic-betas: only bedrock takes a list of betas (Anthropic takes every beta its client sends)`);
  }
  return providers;
}

/**
 * `routers:` with their defaults (retries, health window, threshold and cool-down in ms).
 * @throws {ConfigError} for a router name outside `[A-Za-z0-9_.-]`, a load-balance it cannot use
 *   ({@link toLoadBalance}) or retries whose delays contradict ({@link toRetries}).
 */
function toRouters(rawRouters: RawGatewayConfig['routers'], source: string): Record<string, RouterConfig> {
  // No prototype: a router named "__proto__" is stored as one, not made the object's prototype.
  const routers: Record<string, RouterConfig> = Object.create(null);
  for (const [name, r] of Object.entries(rawRouters ?? {})) {
    const path = `routers.${name}`;
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new ConfigError(`${source}: ${path}: router names may use letters, digits, '-', '_' and '.'`);
    const chat = toLoadBalance(r['load-balance'].chat, `${path}.load-balance.chat`, source);
    const embeddings = r['load-balance'].embeddings;
    routers[name] = {
      name,
      chat,
      embeddings: embeddings ? toLoadBalance(embeddings, `${path}.load-balance.embeddings`, source, true) : chat,
      rateLimit: { perApiKey: toGcra(r['rate-limit']?.['per-api-key']), perUser: toGcra(r['rate-limit']?.['per-user']) },
      retries: toRetries(r.retries, `${path}.retries`, source),
      health: {
        windowMs: toDuration(r.health?.window, 60_000),
        errorThreshold: r.health?.['error-threshold'] ?? 0.5,
        minRequests: r.health?.['min-requests'] ?? 10,
        coolDownMs: toDuration(r.health?.['cool-down'], 30_000),
      },
    };
  }
  return routers;
}

/**
 * Refuses a router member that no request could reach: one without a setting its transport cannot do without
 * (./provider-settings.ts: Azure's base URL, Bedrock's region, read from `env` as the proxy reads it). Without
 * this check such a router started and answered every request sent to that member with an error. A member
 * without credentials is accepted: a client may bring its own, and the proxy answers 503 otherwise.
 * @throws {ConfigError} naming the member (`routers.<name>.load-balance.<key>.providers.<i>`) and what to set.
 */
function checkRouterMembers(routers: Record<string, RouterConfig>, providers: Record<ProviderName, ProviderConfig>, env: NodeJS.ProcessEnv, source: string): void {
  for (const router of Object.values(routers)) {
    const groups = router.embeddings === router.chat ? ([['chat', router.chat]] as const) : ([['chat', router.chat], ['embeddings', router.embeddings]] as const);
    for (const [key, group] of groups) {
      for (const [i, { provider }] of group.providers.entries()) {
        const missing = missingProviderSetting(providers[provider], env);
        if (missing !== null) throw new ConfigError(`${source}: routers.${router.name}.load-balance.${key}.providers.${i}: provider ${provider} needs ${missing}`);
      }
    }
  }
}

/**
 * `server:` with its defaults: sizes in bytes, timeouts in ms (see {@link GatewayConfig.server}).
 * @throws {ConfigError} when `request-timeout` is below `headers-timeout`.
 */
function toServer(rawServer: RawGatewayConfig['server'], source: string): GatewayConfig['server'] {
  const headersTimeoutMs = toDuration(rawServer?.['headers-timeout'], 10_000);
  // Node's own default for the whole request (http.Server requestTimeout): a client sending the
  // 10 MiB a body may hold gets there at 35 KB/s. Never below a headers timeout set higher.
  const requestTimeoutMs = toDuration(rawServer?.['request-timeout'], Math.max(300_000, headersTimeoutMs));
  // node:http refuses a headers timeout above the request timeout (it would never fire).
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`${source}: server.request-timeout: ${requestTimeoutMs} ms is below server.headers-timeout (${headersTimeoutMs} ms); the whole request cannot arrive sooner than its headers`);
  }
  return {
    maxBodyBytes: rawServer?.['max-body-size'] ?? 10 * 1024 * 1024,
    maxTranslatedResponseBytes: rawServer?.['max-translated-response-size'] ?? 32 * 1024 * 1024,
    upstreamTimeoutMs: toDuration(rawServer?.['upstream-timeout'], 600_000),
    sendTimeoutMs: toDuration(rawServer?.['send-timeout'], 60_000),
    shutdownTimeoutMs: toDuration(rawServer?.['shutdown-timeout'], 10_000),
    headersTimeoutMs,
    requestTimeoutMs,
  };
}

/**
 * admin's control-plane URL: `control-plane.url` (checked by the schema), else `SVC_CONTROL_PLANE_URL`,
 * else the local admin on `ADMIN_PORT` (default 8585).
 * @throws {ConfigError} naming `SVC_CONTROL_PLANE_URL` when it is not a ws: or wss: URL.
 */
function controlPlaneUrl(configured: string | undefined, env: NodeJS.ProcessEnv): string {
  if (configured !== undefined) return configured;
  const fromEnv = env.SVC_CONTROL_PLANE_URL;
  if (fromEnv === undefined) return `ws://127.0.0.1:${Number(env.ADMIN_PORT ?? 8585)}/v1/control-plane`;
  const valid = checkWsUrl(fromEnv);
  if (valid !== true) throw new ConfigError(`SVC_CONTROL_PLANE_URL: ${valid}`);
  return fromEnv;
}

/** What {@link buildConfig} checks beyond the document itself. */
export interface ConfigOptions {
  /**
   * Refuse a router member whose provider lacks a setting it cannot work without ({@link checkRouterMembers}),
   * read partly from the environment (`AWS_REGION`). Default true; false for admin, which routes nothing and may
   * run on a machine whose environment is not the proxy's.
   */
  checkRouterMembers?: boolean;
}

/**
 * Validates a parsed YAML document and returns the typed configuration with defaults applied.
 * @param doc the parsed YAML (any shape).
 * @param env the environment to read provider keys and `DEFAULT_CONTROL_PLANE_URL`-style overrides from.
 * @throws {ConfigError} naming the key path and the problem (unknown key, wrong type, unknown provider or strategy,
 *   a router member without a setting it cannot be reached without: {@link checkRouterMembers}).
 */
export function buildConfig(doc: unknown, env: NodeJS.ProcessEnv = process.env, source = 'gateway.yaml', options: ConfigOptions = {}): GatewayConfig {
  const [error, raw] = validateValue(doc ?? {}, GatewayConfigSchema);
  if (error) throw new ConfigError(`${source}: ${describeStructError(error)}`);

  const providers = toProviders(raw.providers, env, source);
  const routers = toRouters(raw.routers, source);
  if (options.checkRouterMembers !== false) checkRouterMembers(routers, providers, env, source);
  const features: Features = raw.svc?.features ?? 'observability';
  const g = raw.global?.['rate-limit'];
  const global: RateLimitLevel = { perApiKey: toGcra(g?.['per-api-key']), perUser: toGcra(g?.['per-user']) };
  const anyLimit =
    global.perApiKey || global.perUser || Object.values(routers).some((r) => r.rateLimit.perApiKey || r.rateLimit.perUser);
  if (anyLimit && features === 'none') {
    throw new ConfigError(
      `${source}: svc.features: rate limits are configured but svc.features is "none"; rate limits are per API key and need "auth" or "observability"`,
    );
  }
  const storeType = raw['rate-limit-store']?.type ?? g?.store ?? 'in-memory';
  if (g?.store && raw['rate-limit-store']?.type && g.store !== raw['rate-limit-store'].type) {
    throw new ConfigError(`${source}: global.rate-limit.store: "${g.store}" contradicts rate-limit-store.type "${raw['rate-limit-store'].type}"`);
  }
  const redisUrl = raw['rate-limit-store']?.url ?? null;
  if (storeType === 'redis' && !redisUrl) throw new ConfigError(`${source}: rate-limit-store.url: required when the store type is "redis"`);

  const q = raw['log-queue'];
  return {
    features,
    controlPlane: { url: controlPlaneUrl(raw['control-plane']?.url, env), caFile: raw['control-plane']?.['ca-file'] ?? null },
    server: toServer(raw.server, source),
    providers,
    routers,
    rateLimit: {
      global,
      store: storeType,
      redisUrl,
      failMode: raw['rate-limit-store']?.['fail-mode'] ?? 'local',
      // 1 s: a loaded proxy's event loop lags past 100 ms, and a timer that fires before the reply is
      // read is no store failure; a Redis that is really down refuses or resets at once instead.
      storeTimeoutMs: toDuration(raw['rate-limit-store']?.timeout, 1000),
      cleanupIntervalMs: toDuration(g?.['cleanup-interval'], 300_000),
    },
    logQueue: {
      maxRecords: q?.['max-records'] ?? 100_000,
      maxBytes: q?.['max-bytes'] ?? 256 * 1024 * 1024,
      batchSize: q?.['batch-size'] ?? 500,
      flushIntervalMs: toDuration(q?.['flush-interval'], 50),
      maxBodyBytes: q?.['max-body-bytes'] ?? 1024 * 1024,
    },
    admin: {
      maxBodyBytes: raw.admin?.['max-body-size'] ?? 1024 * 1024,
      retentionDays: raw.admin?.['retention-days'] ?? 90,
      maxPageBodyBytes: raw.admin?.['max-page-body-bytes'] ?? DEFAULT_MAX_PAGE_BODY_BYTES,
    },
    tokenLimit: { preload: raw['token-limit']?.preload ?? false },
    cache: toCacheConfig(raw.cache, storeType, redisUrl, source),
    logLevel: raw.logging?.level ?? env.LOG_LEVEL ?? 'info',
    metrics: { enabled: raw.metrics?.enabled ?? true },
    models: toModelOverrides(raw.models, source),
  };
}

/**
 * Reads and validates a configuration file.
 * @param file path to a YAML file; defaults to `--config`, then `GATEWAY_CONFIG`, then `./gateway.yaml`.
 * @throws {ConfigError} when the file is unreadable, not YAML, or invalid.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env, options: ConfigOptions = {}): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read the configuration file (${(err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML (${(err as Error).message})`);
  }
  return buildConfig(doc, env, file, options);
}

/**
 * Picks the configuration file from argv (`--config FILE`) or env `GATEWAY_CONFIG`, else `gateway.yaml`.
 * Uses node:util parseArgs.
 */
export function configPathFrom(argv: string[], env: NodeJS.ProcessEnv = process.env): string {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string' } }, strict: false, allowPositionals: true });
  const fromArgs = values.config;
  return typeof fromArgs === 'string' ? fromArgs : env.GATEWAY_CONFIG ?? 'gateway.yaml';
}
