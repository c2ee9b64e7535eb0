/**
 * The request context: everything one request carries through the stages, in one object created
 * in one place ({@link createContext}) with every field set, so every context has the same shape
 * (V8 keeps the stages' property reads monomorphic). The fields are grouped by the stage that
 * writes them; the runtime shared by all requests is `ctx.gw`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import type { CacheRequest } from '../cache/types.ts';
import type { GatewayError } from '../errors.ts';
import type { KeyEntry } from '../../shared/controlplane.ts';
import type { ProviderName } from '../../shared/providers.ts';
import type { LogRecord } from '../../shared/record.ts';
import { DEFAULT_KIND, type EndpointKind } from '../endpoints/index.ts';
import type { ResponseCapture } from '../observers/response-capture.ts';
import type { ResponseRecorder } from '../observers/response-recorder.ts';
import type { AppliedPrompt } from '../prompts.ts';
import type { ProviderBinding } from '../providers/binding.ts';
import type { ProviderCall, UpstreamRequest } from '../providers/types.ts';
import type { RouterRuntime } from '../router.ts';
import type { TokenLimitResult } from '../tokenlimit/index.ts';
import type { ClientCredential } from './headers.ts';
import type { GatewayRuntime } from './runtime.ts';

/** The current attempt of a request's exchange with its provider: it can be called off. */
export interface UpstreamAttempt {
  /**
   * Stops the exchange (closing its connection if the request is in flight); a no-op once the
   * answer is complete. Called on a timeout and when the client leaves.
   */
  abort(reason: Error): void;
  /**
   * Stops reading the provider's answer (its request aborted) and ends the client's with `err`: its
   * dialect's error event once a stream started (../upstream/failure.ts `onMidStreamError`), else the
   * error. A no-op once the attempt was superseded or its answer is no longer read.
   */
  stopReading(err: GatewayError): void;
  /**
   * What to write before an error event that ends the client's stream: for a passed-through event stream whose last
   * event may have come without its blank line, the line ends that close it (../upstream/sse-boundary.ts
   * `cutPrefix`); '' otherwise.
   */
  errorEventPrefix(): string;
}

/** Everything one request carries through the stages. Times are `performance.now()` ms unless said. */
export interface RequestContext {
  // --- the request and the runtime -------------------------------------------------------------
  /** The gateway's shared runtime (config, control plane, routers, stages, observers). */
  gw: GatewayRuntime;
  /** The request id (UUID v4), answered as `Svc-Id`. */
  id: string;
  req: IncomingMessage;
  res: ServerResponse;
  startMs: number;
  /** Wall-clock start (ms since the epoch). */
  createdAt: number;
  /** The URL path, without the query. */
  path: string;
  /** Index in `gw.pipeline.stages` of the stage a suspended run resumes at. */
  next: number;

  // --- route -----------------------------------------------------------------------------------
  /** The endpoint kind the path names (chat completions until routing says otherwise). */
  kind: EndpointKind;
  /** The router's name on /router/<name>/…; null on /ai and /v1. */
  routerName: string | null;
  /** The router's run-time state (balancer, health, retries) on /router/<name>/…; null on /ai. */
  router: RouterRuntime | null;
  /** The metric's `route` label: the path when known, `router:<kind>`, else `unmatched`. */
  routeLabel: string;

  // --- authenticate, rate-limit ----------------------------------------------------------------
  key: KeyEntry | null;
  keyHash: string | null;
  /** Rate-limit response headers of the admitted request (added to its response), or null. */
  rateLimitHeaders: Record<string, string> | null;

  // --- read body, validate, resolve prompt, token-limit ----------------------------------------
  /** Body pieces while reading; null otherwise. */
  bodyChunks: Buffer[] | null;
  /** Bytes of body received so far. */
  bodySize: number;
  /** The body bytes as received (set once read). */
  rawBody: Buffer | null;
  /** True when {@link rawBody} is exactly {@link clientBody} in JSON, so the request log carries these bytes as they are (observability only). */
  rawBodyLogged: boolean;
  /** Byte span `[modelStart, modelEnd)` of the top-level `"model"` string in {@link rawBody} as JSON.parse reads it; -1 when unknown. */
  modelStart: number;
  modelEnd: number;
  /** The body the next stages read (a prompt or token-limit handler replaces it with a rewritten copy). */
  body: ChatCompletionRequest | null;
  /** The body as the client sent it (logged); stages rewrite copies. */
  clientBody: ChatCompletionRequest | null;
  requestModel: string | null;
  prompt: AppliedPrompt | null;
  /**
   * A `previous_response_id` the gateway did not make (left in the body for a provider that keeps
   * responses): the provider the store says keeps it, '' when the store does not know it; null when
   * there is none (stages/responses-history.ts).
   */
  previousKeptBy: string | null;
  tokenLimit: TokenLimitResult | null;

  // --- choose provider, translate --------------------------------------------------------------
  provider: ProviderName | null;
  /** The model sent to the provider (without `<provider>/`). */
  model: string | null;
  /**
   * The chosen provider's binding at this endpoint kind (transport + translator, built at start);
   * null when the provider has none and the kind answers itself (count_tokens' estimate).
   */
  binding: ProviderBinding | null;
  /** The client's own provider credential (it sent `Svc-Auth`), sent instead of the gateway's key; null: the gateway's. */
  clientCredential: ClientCredential | null;
  /** The client named the provider (`<provider>/<model>` on a router): retries stay with it. */
  pinned: boolean;
  /** Providers tried so far (router retries go elsewhere when they can). */
  tried: Set<ProviderName>;
  call: ProviderCall | null;
  upstream: UpstreamRequest | null;

  // --- cache-lookup ----------------------------------------------------------------------------
  /** The request's cache key and options (it sent `Svc-Cache-Enabled: true`), and what a hit or a miss records; else null. */
  cache: CacheRequest | null;

  // --- forward: the current attempt ------------------------------------------------------------
  /** The current attempt's exchange with the provider (set by `forward` with the phase `upstream`). */
  exchange: UpstreamAttempt | null;
  /** Start of the current attempt. */
  attemptStartMs: number;
  /** Attempts sent upstream so far (1 after the first). */
  attemptCount: number;
  /** The current attempt is counted in flight by the router's latency balancer (to be finished exactly once). */
  balancerOpen: boolean;

  // --- deadlines -------------------------------------------------------------------------------
  /** What {@link deadlineMs} is waiting for: the client's body, the provider, or nothing. */
  phase: 'body' | 'upstream' | 'none';
  /** When the current wait times out (Infinity = no wait). Swept by `gw.deadlines`. */
  deadlineMs: number;
  /** The context's slot in `gw.deadlines` (-1 when not tracked); written only by it. */
  deadlineSlot: number;
  /** The current attempt was aborted for the provider's silence. */
  timedOut: boolean;

  // --- the response ----------------------------------------------------------------------------
  /** The log recorder (observability only), made when the response starts. */
  recorder: ResponseRecorder | null;
  /** What the response store keeps of a Responses answer (its id, or the whole response), made when the response starts. */
  responseCapture: ResponseCapture | null;
  responseAtMs: number | null;
  firstByteMs: number | null;
  /** The answer started is an event stream (a provider's, or a stored one replayed); set with the response's start. */
  streamed: boolean;
  status: number;
  /** What went wrong (logged), or null. */
  error: string | null;
  /** The `code` (or `type`) of the error the gateway answered, for the access log; null when it answered none. */
  errorCode: string | null;
  /** Every attempt: provider, status, latency, error. */
  attempts: LogRecord['attempts'];
  /** The gateway broke the client's connection itself (a provider's body cut mid-way; ../upstream/failure.ts). */
  cutOff: boolean;

  // --- finish (written once, before the observers run) -----------------------------------------
  finished: boolean;
  endMs: number;
  /** The client left before the response was complete. */
  clientClosed: boolean;
  /** The status counted and logged: {@link status}, or 499 when the client left before an error. */
  outcomeStatus: number;
}

/** Where a request's context hangs on its `req` and `res`, for the shared event handlers. */
export const CTX = Symbol('svc.ctx');
type Carrier = { [CTX]?: RequestContext };

/** The context a shared `req`/`res` event handler was called for. */
export function contextOf(emitter: IncomingMessage | ServerResponse): RequestContext {
  return (emitter as Carrier)[CTX]!;
}

/**
 * A new request's context, hung on `req` and `res` under {@link CTX}. The one place a
 * {@link RequestContext} is made (tests call it with stand-in `req`/`res`).
 * @param path the URL path without the query.
 */
export function createContext(gw: GatewayRuntime, req: IncomingMessage, res: ServerResponse, path: string): RequestContext {
  const ctx: RequestContext = {
    gw,
    id: randomUUID(),
    req,
    res,
    startMs: performance.now(),
    createdAt: Date.now(),
    path,
    next: 0,
    kind: DEFAULT_KIND,
    routerName: null,
    router: null,
    routeLabel: 'unmatched',
    key: null,
    keyHash: null,
    rateLimitHeaders: null,
    bodyChunks: null,
    bodySize: 0,
    rawBody: null,
    rawBodyLogged: false,
    modelStart: -1,
    modelEnd: -1,
    body: null,
    clientBody: null,
    requestModel: null,
    prompt: null,
    previousKeptBy: null,
    tokenLimit: null,
    provider: null,
    model: null,
    binding: null,
    clientCredential: null,
    pinned: false,
    tried: new Set(),
    call: null,
    upstream: null,
    cache: null,
    exchange: null,
    attemptStartMs: 0,
    attemptCount: 0,
    balancerOpen: false,
    phase: 'none',
    deadlineMs: Infinity,
    deadlineSlot: -1,
    timedOut: false,
    recorder: null,
    responseCapture: null,
    responseAtMs: null,
    firstByteMs: null,
    streamed: false,
    status: 0,
    error: null,
    errorCode: null,
    attempts: [],
    cutOff: false,
    finished: false,
    endMs: 0,
    clientClosed: false,
    outcomeStatus: 0,
  };
  (req as Carrier)[CTX] = ctx;
  (res as Carrier)[CTX] = ctx;
  return ctx;
}
