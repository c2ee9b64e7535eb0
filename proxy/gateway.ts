/**
 * The proxy's request path, assembled in one place:
 *
 *   route → authenticate → rate-limit → parse → resolve prompt → token-limit → choose provider → map → forward → record
 *
 * Each stage either passes the request's {@link RequestContext} on or throws a {@link GatewayError}
 * (answered in OpenAI's error shape). Only `forward` waits on the network (plus the Redis limiter
 * and a cold prompt-cache miss, both bounded by timeouts). `forward` sends the provider's request
 * with undici's dispatch over keep-alive pools and streams the answer back as it arrives; `record`
 * reads what the stages and the stream left in the context and hands the record to the log queue
 * after the response ended. Timeouts (a stalled body, a silent provider) are deadlines swept by
 * one timer ({@link Deadlines}), not a timer per request.
 */
import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import type { GatewayConfig } from '../shared/config.ts';
import type { KeyEntry } from '../shared/controlplane.ts';
import { listModels } from '../shared/models.ts';
import { isProviderName, type ProviderName } from '../shared/providers.ts';
import type { LogRecord } from '../shared/record.ts';
import { bearerToken, hashApiKey } from '../shared/apikey.ts';
import { lingerAfterAnswer } from '../shared/linger.ts';
import type { ControlPlaneClient } from './controlplane.ts';
import { badRequest, GatewayError, sendError } from './errors.ts';
import { adapterFor } from './providers/index.ts';
import type { Endpoint, ProviderAdapter, ProviderCall, UpstreamRequest } from './providers/types.ts';
import { createRateLimiter, rateLimitHeaders, type RateLimiter } from './ratelimit/index.ts';
import { ResponseRecorder } from './response-recorder.ts';
import { isRetryable, RouterRuntime } from './router.ts';
import { applyPrompt, type AppliedPrompt } from './prompts.ts';
import { applyTokenLimit, parseTokenLimitHandler, type TokenLimitResult } from './tokenlimit/index.ts';
import { observeRequest, type Metrics } from './metrics.ts';
import { Deadlines, sweepIntervalMs } from './deadlines.ts';
import { scanJson, spliceModel } from './json-scan.ts';
import { Agent } from './upstream-agent.ts';

/** Everything one request carries through the stages. Times are `performance.now()` ms. */
export interface RequestContext {
  id: string;
  req: IncomingMessage;
  res: ServerResponse;
  startMs: number;
  createdAt: number;
  path: string;
  endpoint: Endpoint;
  routerName: string | null;
  key: KeyEntry | null;
  keyHash: string | null;
  /** Rate-limit response headers of the admitted request (added to its response), or null. */
  rateLimitHeaders: Record<string, string> | null;
  /** The body bytes as received. */
  rawBody: Buffer | null;
  /** The body as received, decoded, when it is exactly {@link clientBody} in JSON (logged as it is); else null. */
  clientText: string | null;
  /** Byte span `[modelStart, modelEnd)` of the top-level `"model"` string in {@link rawBody} as JSON.parse reads it; -1 when unknown. */
  modelStart: number;
  modelEnd: number;
  /** Body pieces while reading; null otherwise. */
  bodyChunks: Buffer[] | null;
  /** Bytes of body received so far. */
  bodySize: number;
  body: ChatCompletionRequest | null;
  /** The body as the client sent it (logged); stages rewrite copies. */
  clientBody: ChatCompletionRequest | null;
  requestModel: string | null;
  provider: ProviderName | null;
  model: string | null;
  adapter: ProviderAdapter | null;
  call: ProviderCall | null;
  upstream: UpstreamRequest | null;
  /** The current attempt's exchange with the provider (set by `forward` with the phase `upstream`). */
  exchange: UpstreamAttempt | null;
  /** What {@link deadlineMs} is waiting for: the client's body, the provider, or nothing. */
  phase: 'body' | 'upstream' | 'none';
  /** When the current wait times out (`performance.now()` ms; Infinity = no wait). Swept by {@link Deadlines}. */
  deadlineMs: number;
  /** The context's slot in {@link Deadlines} (-1 when not tracked); written only by it. */
  deadlineSlot: number;
  /** The router's run-time state (balancer, health, retries) on /router/<name>/…; null on /ai. */
  router: RouterRuntime | null;
  /** Providers tried so far (router retries go elsewhere when they can). */
  tried: Set<ProviderName>;
  /** Start of the current attempt (ms, performance.now()). */
  attemptStartMs: number;
  /** Attempts sent upstream so far (1 after the first). */
  attemptCount: number;
  /** The client named the provider (`<provider>/<model>` on a router): retries stay with it. */
  pinned: boolean;
  prompt: AppliedPrompt | null;
  tokenLimit: TokenLimitResult | null;
  recorder: ResponseRecorder | null;
  responseAtMs: number | null;
  firstByteMs: number | null;
  status: number;
  error: string | null;
  timedOut: boolean;
  finished: boolean;
  attempts: LogRecord['attempts'];
}

/** Dependencies of the gateway, created once by main (or a test) and passed in. */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  /** The control-plane link; required unless `svc.features` is `none`. */
  controlPlane: ControlPlaneClient | null;
  metrics: Metrics | null;
  rateLimiter?: RateLimiter | null;
}

/** A running gateway: its HTTP server and a graceful stop. */
export interface Gateway {
  server: http.Server;
  /** Stops accepting, waits (bounded) for in-flight requests, flushes queued records. */
  close(): Promise<void>;
  rateLimiter: RateLimiter | null;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']);
const CTX = Symbol('svc.ctx');
type WithCtx = IncomingMessage & { [CTX]?: RequestContext };
type WithCtxRes = { [CTX]?: RequestContext };

/**
 * Parses `Svc-Property-<Name>` headers into `{name: value}` (names lower-cased; repeated headers
 * joined with ", "), from `rawHeaders` so repeated headers stay separate.
 */
function properties(req: IncomingMessage): Record<string, string> {
  // No prototype: a property named "__proto__" or "constructor" is just a name.
  const out: Record<string, string> = Object.create(null);
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (!k.startsWith('svc-property-') || k.length === 'svc-property-'.length) continue;
    const name = k.slice('svc-property-'.length);
    out[name] = Object.hasOwn(out, name) ? `${out[name]}, ${raw[i + 1]}` : raw[i + 1]!;
  }
  return out;
}

/** The first value of a header as the client sent it (from `rawHeaders`; see {@link properties}). */
function clientHeader(req: IncomingMessage, name: string): string | null {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1]!;
  return null;
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

/**
 * Creates the gateway server (not yet listening).
 * @throws {Error} when auth/observability is on and no control-plane client is given.
 */
export function createGateway(deps: GatewayDeps): Gateway {
  const { config, logger, controlPlane, metrics } = deps;
  const authOn = config.features !== 'none';
  const observe = config.features === 'observability';
  if (authOn && !controlPlane) throw new Error('svc.features requires a control-plane link (SVC_CONTROL_PLANE_API_KEY)');
  const rateLimiter =
    deps.rateLimiter !== undefined
      ? deps.rateLimiter
      : createRateLimiter(config, { logger, onStoreError: () => metrics?.rateLimitStoreErrors.inc() });

  // One keep-alive pool per provider origin, connections unbounded. undici's own header and body
  // timeouts are off: the provider's silence is a deadline swept with the others (server.upstream-timeout).
  const upstreamAgent = new Agent({ connections: null, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });

  const routers = new Map<string, RouterRuntime>();
  for (const r of Object.values(config.routers)) routers.set(r.name, new RouterRuntime(r, config.providers));
  const modelsBody = JSON.stringify({
    object: 'list',
    data: listModels()
      .filter((m) => adapterFor(m.provider) !== undefined)
      .map((m) => ({ id: `${m.provider}/${m.model}`, object: 'model', created: 0, owned_by: m.provider })),
  });

  let inFlight = 0;
  let closing = false;
  const idle: Array<() => void> = [];

  // Node enforces headersTimeout on a timer of `connectionsCheckingInterval` (30 s by default): check
  // often enough that a slow-headers client is cut close to the configured timeout.
  const server = http.createServer({ headersTimeout: config.server.headersTimeoutMs, requestTimeout: 0, keepAliveTimeout: 65_000, connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(config.server.headersTimeoutMs / 4))) });
  server.on('request', handle);
  const deadlines = new Deadlines<RequestContext>(sweepIntervalMs(config.server.headersTimeoutMs, config.server.upstreamTimeoutMs), onDeadline);
  server.on('clientError', (err, socket) => {
    const code = (err as { code?: string }).code;
    // A response already on its way on this socket cannot be followed by an error response.
    const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!socket.writable || code === 'ECONNRESET' || current?.headersSent) return socket.destroy();
    // The code only: `err.rawPacket` holds the client's bytes (keys, bodies) and is never logged.
    logger.debug({ code }, 'malformed HTTP request');
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({ error: { message: `malformed HTTP request (${code ?? 'parse error'})`, type: 'invalid_request_error', param: null, code: 'bad_request' } });
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });

  /**
   * A request's way through the stages. Every stage is synchronous except where the network is
   * awaited (a Redis rate-limit check, the request body, a cold prompt, a signing provider), and
   * those continue through shared handlers that find the context on `req`/`res` under {@link CTX}:
   * no promise chain and no closure per request on the common path.
   */
  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method === 'GET') return handleGet(path, res);

    inFlight++;
    const ctx: RequestContext = {
      id: randomUUID(),
      req,
      res,
      startMs: performance.now(),
      createdAt: Date.now(),
      path,
      endpoint: 'chat',
      routerName: null,
      key: null,
      keyHash: null,
      rateLimitHeaders: null,
      rawBody: null,
      clientText: null,
      modelStart: -1,
      modelEnd: -1,
      bodyChunks: null,
      bodySize: 0,
      body: null,
      clientBody: null,
      requestModel: null,
      provider: null,
      model: null,
      adapter: null,
      call: null,
      upstream: null,
      exchange: null,
      phase: 'none',
      deadlineMs: Infinity,
      deadlineSlot: -1,
      router: null,
      tried: new Set(),
      attemptStartMs: 0,
      attemptCount: 0,
      pinned: false,
      prompt: null,
      tokenLimit: null,
      recorder: null,
      responseAtMs: null,
      firstByteMs: null,
      status: 0,
      error: null,
      timedOut: false,
      finished: false,
      attempts: [],
    };
    (req as WithCtx)[CTX] = ctx;
    (res as WithCtxRes)[CTX] = ctx;
    res.once('close', onResponseClose);
    deadlines.track(ctx);
    try {
      route(ctx);
      if (authOn) authenticate(ctx);
      if (rateLimiter) {
        const pending = rateLimit(ctx);
        if (pending) {
          continueAfter(ctx, pending, readBody);
          return;
        }
      }
      readBody(ctx);
    } catch (err) {
      fail(ctx, err);
    }
  }

  /** The stages after the body: parse, resolve prompt, then {@link afterPrompt}. */
  function afterBody(ctx: RequestContext, raw: Buffer): void {
    try {
      parse(ctx, raw);
      if (ctx.body!.prompt_id !== undefined) {
        continueAfter(ctx, resolvePrompt(ctx), afterPrompt);
        return;
      }
      afterPrompt(ctx);
    } catch (err) {
      fail(ctx, err);
    }
  }

  /** token-limit → choose provider → map → forward. */
  function afterPrompt(ctx: RequestContext): void {
    try {
      tokenLimit(ctx);
      chooseProvider(ctx);
      const pending = map(ctx);
      if (pending) continueAfter(ctx, pending, forward);
      else forward(ctx);
    } catch (err) {
      fail(ctx, err);
    }
  }

  /**
   * Runs `next(ctx)` once `pending` settles; a rejection, or an error `next` throws, is answered by
   * {@link fail} (never an unhandled rejection).
   */
  function continueAfter(ctx: RequestContext, pending: Promise<unknown>, next: (ctx: RequestContext) => void): void {
    pending.then(() => next(ctx)).catch((err: unknown) => fail(ctx, err));
  }

  /**
   * Reads the body (at most `server.max-body-size` bytes, each next piece within
   * `server.headers-timeout`), then continues with {@link afterBody}.
   * @throws {GatewayError} 413 when the declared length is over the limit (nothing is read).
   */
  function readBody(ctx: RequestContext): void {
    const req = ctx.req;
    const limit = config.server.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (declared > limit) throw new GatewayError(413, `request body of ${declared} bytes exceeds the limit of ${limit} bytes`, 'invalid_request_error', 'request_too_large');
    if (req.complete && req.readableLength === 0 && !req.readable) return afterBody(ctx, Buffer.alloc(0));
    ctx.bodyChunks = [];
    ctx.phase = 'body';
    ctx.deadlineMs = performance.now() + config.server.headersTimeoutMs;
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
  }

  function onBodyData(this: IncomingMessage, chunk: Buffer): void {
    const ctx = (this as WithCtx)[CTX]!;
    if (ctx.phase !== 'body') return;
    ctx.bodySize += chunk.length;
    if (ctx.bodySize > config.server.maxBodyBytes) {
      return stopBody(ctx, new GatewayError(413, `request body exceeds the limit of ${config.server.maxBodyBytes} bytes`, 'invalid_request_error', 'request_too_large'));
    }
    ctx.bodyChunks!.push(chunk);
    ctx.deadlineMs = performance.now() + config.server.headersTimeoutMs;
  }

  function onBodyEnd(this: IncomingMessage): void {
    const ctx = (this as WithCtx)[CTX]!;
    if (ctx.phase !== 'body') return;
    this.off('data', onBodyData);
    this.off('end', onBodyEnd);
    ctx.phase = 'none';
    ctx.deadlineMs = Infinity;
    const chunks = ctx.bodyChunks!;
    ctx.bodyChunks = null;
    afterBody(ctx, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, ctx.bodySize));
  }

  /** Abandons reading the body (413 or a stall) and answers `err`. */
  function stopBody(ctx: RequestContext, err: GatewayError): void {
    ctx.phase = 'none';
    ctx.deadlineMs = Infinity;
    ctx.bodyChunks = null;
    ctx.req.off('data', onBodyData);
    ctx.req.off('end', onBodyEnd);
    ctx.req.pause();
    fail(ctx, err);
  }

  /** A deadline passed: the body stalled (408) or the provider went quiet (504, or an SSE error mid-stream). */
  function onDeadline(ctx: RequestContext): void {
    ctx.deadlineMs = Infinity;
    if (ctx.phase === 'body') {
      stopBody(ctx, new GatewayError(408, `the request body stalled: nothing arrived for ${config.server.headersTimeoutMs} ms`, 'invalid_request_error', 'request_timeout'));
    } else if (ctx.phase === 'upstream') {
      ctx.timedOut = true;
      ctx.exchange!.abort(new Error('upstream timeout'));
    }
  }

  function handleGet(path: string, res: ServerResponse): void {
    if (path === '/health') {
      const body = JSON.stringify({
        status: 'ok',
        features: config.features,
        controlPlane: controlPlane?.health() ?? null,
        logQueue: controlPlane?.queue.getStats() ?? null,
        routers: Object.fromEntries([...routers].map(([name, r]) => [name, r.healthView()])),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (path === '/ai/models' || path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(modelsBody) });
      res.end(modelsBody);
      return;
    }
    if (path === '/metrics' && metrics) {
      void metrics.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    sendError(res, new GatewayError(path.endsWith('/chat/completions') ? 405 : 404, `no route for GET ${path}`, 'invalid_request_error', 'not_found'));
  }

  /** route: which endpoint and router the path names. */
  function route(ctx: RequestContext): void {
    const p = ctx.path;
    if (p === '/ai/chat/completions' || p === '/v1/chat/completions') return;
    if (p === '/ai/embeddings' || p === '/v1/embeddings') {
      ctx.endpoint = 'embeddings';
      return;
    }
    if (p.startsWith('/router/')) {
      const rest = p.slice('/router/'.length);
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      const tail = slash < 0 ? '' : rest.slice(slash);
      if (tail === '/chat/completions' || tail === '/embeddings') {
        const router = config.routers[decodeURIComponent(name)];
        if (!router) throw new GatewayError(404, `unknown router ${JSON.stringify(name)}`, 'invalid_request_error', 'router_not_found');
        ctx.routerName = router.name;
        ctx.endpoint = tail === '/embeddings' ? 'embeddings' : 'chat';
        return;
      }
    }
    throw new GatewayError(404, `no route for ${ctx.req.method} ${p}`, 'invalid_request_error', 'not_found');
  }

  /** authenticate: the Bearer key's SHA-256 looked up in the locally held key set. */
  function authenticate(ctx: RequestContext): void {
    // Before the first key snapshot nothing can be authenticated: never admit an unknown key.
    if (!controlPlane!.ready) throw new GatewayError(503, 'auth data not ready', 'server_error', 'auth_not_ready', null, { 'retry-after': '1' });
    const key = bearerToken(ctx.req.headers.authorization);
    if (!key) throw new GatewayError(401, 'missing API key: send "Authorization: Bearer <API key>"', 'invalid_request_error', 'invalid_api_key');
    const hash = hashApiKey(key);
    const entry = controlPlane!.lookup(hash);
    if (!entry) throw new GatewayError(401, 'invalid API key', 'invalid_request_error', 'invalid_api_key');
    ctx.key = entry;
    ctx.keyHash = hash;
  }

  /** rate-limit: GCRA per key (and user), global then router; sync for in-memory stores. */
  function rateLimit(ctx: RequestContext): Promise<void> | void {
    const decision = rateLimiter!.check({ apiKeyHash: ctx.keyHash, userId: header(ctx.req, 'svc-user-id'), router: ctx.routerName });
    if (decision instanceof Promise) return decision.then((d) => applyDecision(ctx, d));
    applyDecision(ctx, decision);
  }

  function applyDecision(ctx: RequestContext, d: ReturnType<RateLimiter['check']> extends infer R ? Awaited<R> : never): void {
    const headers = rateLimitHeaders(d);
    if (!d.allowed) {
      metrics?.rateLimitDenials.inc({ policy: d.policy });
      if (d.storeUnavailable) throw new GatewayError(503, 'rate-limit store unavailable', 'server_error', 'rate_limit_store_unavailable', null, headers);
      throw new GatewayError(429, `rate limit exceeded (${d.policy}); retry after ${headers['retry-after'] ?? 'a while'} s`, 'rate_limit_exceeded', 'rate_limit_exceeded', null, headers);
    }
    ctx.rateLimitHeaders = headers;
  }

  /**
   * parse: read the body (bounded in size and in idle time), check it is UTF-8 JSON nested at most
   * {@link MAX_JSON_DEPTH} deep, and check the members every endpoint needs.
   */
  function parse(ctx: RequestContext, raw: Buffer): void {
    if (!isUtf8(raw)) throw badRequest('the request body is not valid UTF-8', null, 'invalid_encoding');
    const scan = scanJson(raw, MAX_JSON_DEPTH);
    if (scan.tooDeep) throw badRequest(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, null, 'too_deep');
    ctx.rawBody = raw;
    const text = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw badRequest(`malformed JSON body: ${(err as Error).message}`, null, 'invalid_json');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object', null, 'invalid_body');
    const b = body as ChatCompletionRequest;
    // The scan's span is used only when it holds exactly what JSON.parse read (no escapes, no surprises).
    if (scan.modelStart >= 0 && typeof b.model === 'string' && raw.toString('utf8', scan.modelStart, scan.modelEnd) === JSON.stringify(b.model)) {
      ctx.modelStart = scan.modelStart;
      ctx.modelEnd = scan.modelEnd;
    }
    const override = header(ctx.req, 'svc-model-override');
    if (override) b.model = override;
    else if (observe) ctx.clientText = text;
    if (b.prompt_id === undefined) validateBody(ctx, b);
    else {
      if (typeof b.prompt_id !== 'string' || b.prompt_id.length === 0) throw badRequest('"prompt_id" must be a non-empty string', 'prompt_id', 'invalid_type');
      for (const k of ['version_id', 'environment'] as const) {
        if (b[k] !== undefined && b[k] !== null && typeof b[k] !== 'string') throw badRequest(`"${k}" must be a string`, k, 'invalid_type');
      }
      if (b.inputs !== undefined && b.inputs !== null && !isObject(b.inputs)) throw badRequest('"inputs" must be an object', 'inputs', 'invalid_type');
    }
    ctx.body = b;
    ctx.clientBody = b;
    ctx.requestModel = typeof b.model === 'string' ? b.model : null;
  }

  /**
   * Checks the types of the members the gateway or a provider mapping reads, so a mistyped body is
   * a 400 here rather than an error (or a 500) further on. Unknown members pass through as sent.
   */
  function validateBody(ctx: RequestContext, b: ChatCompletionRequest): void {
    if (typeof b.model !== 'string' || b.model.length === 0) throw badRequest('missing required member "model" (a string such as "openai/gpt-4o-mini")', 'model', 'missing_model');
    const wrongType = (member: string, what: string) => badRequest(`"${member}" must be ${what}`, member, 'invalid_type');
    const absent = (v: unknown) => v === undefined || v === null;
    for (const k of NUMBER_MEMBERS) {
      const v = b[k];
      if (!absent(v) && (typeof v !== 'number' || !Number.isFinite(v))) throw wrongType(k, 'a number');
    }
    for (const k of BOOLEAN_MEMBERS) if (!absent(b[k]) && typeof b[k] !== 'boolean') throw wrongType(k, 'a boolean');
    if (!absent(b.user) && typeof b.user !== 'string') throw wrongType('user', 'a string');
    if (ctx.endpoint === 'chat') {
      if (!Array.isArray(b.messages)) throw badRequest('missing required member "messages" (an array of chat messages)', 'messages', 'missing_messages');
      for (let i = 0; i < b.messages.length; i++) {
        const m = b.messages[i] as unknown as Record<string, unknown> | null;
        if (!isObject(m) || typeof m.role !== 'string') throw badRequest(`messages[${i}] must be an object with a string "role"`, `messages[${i}]`, 'invalid_message');
        const c = m.content;
        if (!absent(c) && typeof c !== 'string') {
          if (!Array.isArray(c)) throw badRequest(`messages[${i}].content must be a string or an array of content parts`, `messages[${i}].content`, 'invalid_message');
          for (let j = 0; j < c.length; j++) {
            const part = c[j] as unknown;
            if (!isObject(part) || typeof part.type !== 'string') throw badRequest(`messages[${i}].content[${j}] must be an object with a string "type"`, `messages[${i}].content[${j}]`, 'invalid_message');
            if (part.type === 'text' && typeof part.text !== 'string') throw badRequest(`messages[${i}].content[${j}].text must be a string`, `messages[${i}].content[${j}].text`, 'invalid_message');
          }
        }
        if (!absent(m.name) && typeof m.name !== 'string') throw badRequest(`messages[${i}].name must be a string`, `messages[${i}].name`, 'invalid_message');
        if (!absent(m.tool_call_id) && typeof m.tool_call_id !== 'string') throw badRequest(`messages[${i}].tool_call_id must be a string`, `messages[${i}].tool_call_id`, 'invalid_message');
        if (!absent(m.tool_calls)) {
          if (!Array.isArray(m.tool_calls)) throw badRequest(`messages[${i}].tool_calls must be an array`, `messages[${i}].tool_calls`, 'invalid_message');
          for (let j = 0; j < m.tool_calls.length; j++) {
            const tc = m.tool_calls[j] as unknown;
            const fn = isObject(tc) ? tc.function : undefined;
            if (!isObject(tc) || !isObject(fn) || typeof fn.name !== 'string' || (!absent(fn.arguments) && typeof fn.arguments !== 'string')) {
              throw badRequest(`messages[${i}].tool_calls[${j}] must be {"id", "type": "function", "function": {"name": string, "arguments": string}}`, `messages[${i}].tool_calls[${j}]`, 'invalid_message');
            }
            if (!absent(tc.id) && typeof tc.id !== 'string') throw badRequest(`messages[${i}].tool_calls[${j}].id must be a string`, `messages[${i}].tool_calls[${j}].id`, 'invalid_message');
          }
        }
      }
      if (!absent(b.stream_options) && !isObject(b.stream_options)) throw wrongType('stream_options', 'an object');
      if (!absent(b.response_format) && !isObject(b.response_format)) throw wrongType('response_format', 'an object');
      if (!absent(b.stop) && typeof b.stop !== 'string' && !(Array.isArray(b.stop) && b.stop.every((x) => typeof x === 'string'))) throw wrongType('stop', 'a string or an array of strings');
      if (!absent(b.tool_choice) && typeof b.tool_choice !== 'string' && !isObject(b.tool_choice)) throw wrongType('tool_choice', 'a string or an object');
      if (!absent(b.tools)) {
        if (!Array.isArray(b.tools)) throw wrongType('tools', 'an array of tools');
        for (let j = 0; j < b.tools.length; j++) {
          const t = b.tools[j] as unknown;
          const fn = isObject(t) ? t.function : undefined;
          if (!isObject(t) || (!absent(t.type) && typeof t.type !== 'string') || (!absent(fn) && !(isObject(fn) && typeof fn.name === 'string'))) {
            throw badRequest(`tools[${j}] must be {"type": "function", "function": {"name": string, ...}}`, `tools[${j}]`, 'invalid_type');
          }
          if (isObject(fn) && !absent(fn.parameters) && !isObject(fn.parameters)) throw badRequest(`tools[${j}].function.parameters must be an object`, `tools[${j}].function.parameters`, 'invalid_type');
        }
      }
    } else {
      const input = b.input;
      if (input === undefined) throw badRequest('missing required member "input"', 'input', 'missing_input');
      const ok =
        typeof input === 'string' ||
        (Array.isArray(input) && input.every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isInteger(x)) || (Array.isArray(x) && x.every((n) => typeof n === 'number' && Number.isInteger(n)))));
      if (!ok) throw wrongType('input', 'a string, an array of strings, or token arrays');
    }
  }

  /** resolve prompt: a managed prompt's body (cached from admin) merged with the request. */
  async function resolvePrompt(ctx: RequestContext): Promise<void> {
    if (!controlPlane) throw badRequest('managed prompts need svc.features auth or observability', 'prompt_id');
    ctx.prompt = await applyPrompt(ctx.body!, controlPlane);
    ctx.body = ctx.prompt.body;
    validateBody(ctx, ctx.body);
    ctx.requestModel = ctx.body.model;
  }

  /** token-limit: the handler named by `Svc-Token-Limit-Exception-Handler`, if any. */
  function tokenLimit(ctx: RequestContext): void {
    const handler = parseTokenLimitHandler(header(ctx.req, 'svc-token-limit-exception-handler') ?? undefined);
    if (!handler || ctx.endpoint !== 'chat') return;
    const result = applyTokenLimit(handler, ctx.body!, { resolve: (m: string) => resolveTarget(ctx, m) });
    ctx.tokenLimit = result;
    ctx.body = result.body;
    if (result.changed || handler === 'fallback') {
      const model = result.provider && !ctx.routerName ? `${result.provider}/${result.model}` : result.model;
      ctx.body = { ...result.body, model };
    }
  }

  /** Splits `<provider>/<model>` for /ai, or resolves a router's model name. */
  function resolveTarget(ctx: RequestContext, model: string): { provider: string; model: string } {
    const slash = model.indexOf('/');
    const prefix = slash > 0 ? model.slice(0, slash) : '';
    if (ctx.routerName) {
      if (prefix && isProviderName(prefix)) return { provider: prefix, model: model.slice(slash + 1) };
      const router = config.routers[ctx.routerName]!;
      return { provider: router.chat.providers[0]!.provider, model };
    }
    if (!prefix) throw badRequest(`model ${JSON.stringify(model)} has no provider prefix; write it as "<provider>/<model>", e.g. "openai/gpt-4o-mini"`, 'model', 'missing_provider');
    return { provider: prefix, model: model.slice(slash + 1) };
  }

  /** choose provider: /ai by the model's prefix; routers by their load-balance strategy. */
  function chooseProvider(ctx: RequestContext): void {
    const model = ctx.body!.model;
    const slash = model.indexOf('/');
    const prefix = slash > 0 ? model.slice(0, slash) : '';
    if (!ctx.routerName) {
      if (!prefix) throw badRequest(`model ${JSON.stringify(model)} has no provider prefix; write it as "<provider>/<model>", e.g. "openai/gpt-4o-mini"`, 'model', 'missing_provider');
      if (!isProviderName(prefix) || !adapterFor(prefix)) throw badRequest(`unknown provider ${JSON.stringify(prefix)} in model ${JSON.stringify(model)}`, 'model', 'unknown_provider');
      ctx.provider = prefix;
      ctx.model = model.slice(slash + 1);
    } else {
      const runtime = routers.get(ctx.routerName)!;
      ctx.router = runtime;
      const members = runtime.members(ctx.endpoint);
      if (prefix && isProviderName(prefix)) {
        if (!members.includes(prefix)) throw badRequest(`provider ${JSON.stringify(prefix)} is not part of router ${JSON.stringify(ctx.routerName)} (providers: ${members.join(', ')})`, 'model', 'provider_not_in_router');
        ctx.provider = prefix;
        ctx.model = model.slice(slash + 1);
        ctx.pinned = true;
      } else {
        const choice = runtime.choose(ctx.endpoint, model, ctx.tried)!;
        ctx.provider = choice.provider;
        ctx.model = choice.model;
      }
    }
    const adapter = adapterFor(ctx.provider)!;
    if (!adapter.endpoints.includes(ctx.endpoint)) throw badRequest(`provider ${ctx.provider} does not offer ${ctx.endpoint}`, 'model', 'unsupported_endpoint');
    ctx.adapter = adapter;
  }

  /** map: the provider's own request (URL, headers with its key, body). */
  function map(ctx: RequestContext): Promise<void> | void {
    const unchanged = ctx.body === ctx.clientBody;
    const body = unchanged ? { ...ctx.body! } : ctx.body!;
    body.model = ctx.model!;
    if (ctx.prompt) stripPromptMembers(body);
    const call: ProviderCall = { config: config.providers[ctx.provider!], body, stream: body.stream === true, requestId: ctx.id };
    // Only `model` differs from what the client sent: its bytes with the model spliced in are the body.
    if (unchanged && ctx.modelStart >= 0) call.rawBody = spliceModel(ctx.rawBody!, ctx.modelStart, ctx.modelEnd, ctx.model!);
    ctx.call = call;
    const pending = ctx.adapter!.buildRequest(call, ctx.endpoint);
    if (pending instanceof Promise) return pending.then((upstream) => setUpstream(ctx, upstream));
    setUpstream(ctx, pending);
  }

  function setUpstream(ctx: RequestContext, upstream: UpstreamRequest): void {
    // The body is sent in one piece: say its length rather than fall back to chunked encoding.
    if (upstream.headers['content-length'] === undefined) upstream.headers['content-length'] = String(upstream.body.length);
    ctx.upstream = upstream;
  }

  /**
   * forward: send the provider's request (its URL, method and headers exactly: the client's
   * Authorization and Svc-* headers never leave) and stream the answer back.
   */
  function forward(ctx: RequestContext): void {
    const up = ctx.upstream!;
    ctx.router?.latency.start(ctx.provider!);
    ctx.attemptStartMs = performance.now();
    ctx.timedOut = false;
    ctx.attemptCount++;
    ctx.tried.add(ctx.provider!);
    const exchange = new UpstreamExchange(ctx);
    ctx.exchange = exchange;
    ctx.phase = 'upstream';
    ctx.deadlineMs = ctx.attemptStartMs + config.server.upstreamTimeoutMs;
    const target = dispatchTarget(up.url);
    // undici over its keep-alive pools: the provider's URL, method and headers exactly, the body in
    // one write. (node:http's client measured ~16 µs of CPU more per request, http-proxy-3 ~45 µs
    // more than that; bench/README.md.) A request undici rejects outright (a bad header) reaches
    // `onResponseError` before `dispatch` returns.
    upstreamAgent.dispatch({ origin: target.origin, path: target.path, method: up.method, headers: up.headers, body: up.body }, exchange);
  }

  /**
   * One attempt's exchange with the provider, as an undici dispatch handler
   * (https://github.com/nodejs/undici/blob/main/docs/docs/api/Dispatcher.md#dispatcherdispatchoptions-handler):
   * the response's status and headers go to {@link onUpstreamResponse}, which chooses where the body
   * goes ({@link Sink}); errors go to {@link upstreamError} before the response and to
   * {@link onMidStreamError} during it. Only the request's current attempt speaks for it.
   */
  class UpstreamExchange implements UpstreamAttempt, Dispatcher.DispatchHandler {
    readonly ctx: RequestContext;
    controller: Dispatcher.DispatchController | null = null;
    /** Set by {@link abort} before undici started the request: it is aborted as soon as it starts. */
    abortReason: Error | null = null;
    /** The response's status and headers arrived. */
    responded = false;
    sink: Sink = Sink.Discard;
    /** {@link Sink.Collect}: the pieces so far, their size (bytes), and what gets the whole body. */
    chunks: Buffer[] | null = null;
    size = 0;
    onCollected: ((body: Buffer) => void) | null = null;
    /** {@link Sink.Mapper}: the provider's stream mapper. */
    mapper: Transform | null = null;

    constructor(ctx: RequestContext) {
      this.ctx = ctx;
    }

    abort(reason: Error): void {
      if (this.controller) this.controller.abort(reason);
      else this.abortReason = reason;
    }

    onRequestStart(controller: Dispatcher.DispatchController): void {
      this.controller = controller;
      if (this.abortReason) controller.abort(this.abortReason);
    }

    onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: UpstreamHeaders): void {
      this.responded = true;
      if (this.ctx.exchange !== this || this.ctx.finished) return controller.abort(new Error('superseded'));
      onUpstreamResponse(this, statusCode, headers);
    }

    onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
      const ctx = this.ctx;
      const now = performance.now();
      // The provider sent a piece of its answer: its silence timeout starts again.
      if (ctx.phase === 'upstream') ctx.deadlineMs = now + config.server.upstreamTimeoutMs;
      switch (this.sink) {
        case Sink.Client: {
          if (ctx.firstByteMs === null) ctx.firstByteMs = now;
          ctx.recorder?.push(chunk);
          if (!ctx.res.write(chunk)) {
            controller.pause();
            ctx.res.once('drain', () => controller.resume());
          }
          return;
        }
        case Sink.Mapper: {
          const mapper = this.mapper!;
          if (mapper.destroyed) return;
          if (!mapper.write(chunk)) {
            controller.pause();
            mapper.once('drain', () => controller.resume());
          }
          return;
        }
        case Sink.Collect:
          this.size += chunk.length;
          if (this.size <= config.server.maxBodyBytes) this.chunks!.push(chunk);
          return;
        default:
      }
    }

    onResponseEnd(): void {
      const ctx = this.ctx;
      if (ctx.exchange === this && ctx.phase === 'upstream') {
        ctx.phase = 'none';
        ctx.deadlineMs = Infinity;
      }
      switch (this.sink) {
        case Sink.Client:
          ctx.res.end();
          return;
        case Sink.Mapper:
          if (!this.mapper!.destroyed) this.mapper!.end();
          return;
        case Sink.Collect: {
          const chunks = this.chunks!;
          this.chunks = null;
          this.onCollected!(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
          return;
        }
        default:
      }
    }

    onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
      const ctx = this.ctx;
      // A discarded answer (a retry follows) or an earlier attempt no longer speaks for the request.
      if (ctx.exchange !== this || (this.responded && this.sink === Sink.Discard)) return;
      if (this.responded) onMidStreamError(ctx);
      else upstreamError(ctx, err);
    }
  }

  function onResponseClose(this: ServerResponse): void {
    const ctx = (this as WithCtxRes)[CTX]!;
    deadlines.untrack(ctx);
    finish(ctx);
    // The client left before the answer was complete: stop the provider's work too.
    if (!this.writableFinished && ctx.exchange) ctx.exchange.abort(new Error('client closed the connection'));
    if (--inFlight === 0) for (const f of idle.splice(0)) f();
  }

  /**
   * Router retries: after a retryable outcome (connection error or timeout = status 0, 429, 5xx)
   * before any byte reached the client, waits the policy's backoff and sends the request again — to
   * the next-best provider when the router has another. Records the outcome in the router's health.
   * @returns true when a retry was scheduled (the caller must not answer the client).
   */
  function retryIfAllowed(ctx: RequestContext, status: number, retryAfterMs: number | null, error: string | null): boolean {
    const runtime = ctx.router;
    if (!runtime) return false;
    const latency = performance.now() - ctx.attemptStartMs;
    runtime.record(ctx.provider!, status, retryAfterMs);
    if (!isRetryable(status) || ctx.res.headersSent || ctx.res.destroyed) return false;
    const delay = runtime.retryDelayMs(ctx.attemptCount);
    if (delay === null) return false;
    ctx.attempts.push({ provider: ctx.provider!, status, latencyMs: latency, error });
    runtime.latency.finish(ctx.provider!, status === 0 ? null : latency);
    metrics?.requests.inc({ route: 'router:retry', provider: ctx.provider!, status: String(status) });
    ctx.phase = 'none';
    ctx.deadlineMs = Infinity;
    setTimeout(() => {
      if (ctx.finished || ctx.res.destroyed) return;
      try {
        if (!ctx.pinned) chooseProvider(ctx);
        const pending = map(ctx);
        if (pending) continueAfter(ctx, pending, forward);
        else forward(ctx);
      } catch (err) {
        fail(ctx, err);
      }
    }, delay);
    return true;
  }

  /** The provider's status and headers arrived: retry, or answer the client and choose where the body goes. */
  function onUpstreamResponse(exchange: UpstreamExchange, status: number, upstreamHeaders: UpstreamHeaders): void {
    const ctx = exchange.ctx;
    const res = ctx.res;
    ctx.responseAtMs = performance.now();
    // From here the timeout is the provider's silence between pieces of the answer.
    ctx.deadlineMs = ctx.responseAtMs + config.server.upstreamTimeoutMs;
    const retryAfter = Number(upstreamHeaders['retry-after']);
    if (retryIfAllowed(ctx, status, Number.isFinite(retryAfter) ? retryAfter * 1000 : null, null)) {
      // The answer is read and dropped, so the connection can be reused.
      exchange.sink = Sink.Discard;
      ctx.responseAtMs = null;
      return;
    }
    ctx.status = status;
    const attemptMs = ctx.responseAtMs - ctx.attemptStartMs;
    ctx.attempts.push({ provider: ctx.provider!, status, latencyMs: attemptMs });
    ctx.router?.latency.finish(ctx.provider!, attemptMs);
    const adapter = ctx.adapter!;
    const ok = status >= 200 && status < 300;
    const ct = upstreamHeaders['content-type'];
    const contentType = typeof ct === 'string' ? ct : ct === undefined ? '' : ct.join(', ');
    const isStream = ok && (contentType.includes('event-stream') || contentType.includes('eventstream'));
    if (observe) ctx.recorder = new ResponseRecorder(isStream, config.logQueue.maxBodyBytes);

    const headers: Record<string, string | string[]> = {};
    for (const k in upstreamHeaders) {
      if (!HOP_BY_HOP.has(k)) headers[k] = upstreamHeaders[k]!;
    }
    headers['svc-id'] = ctx.id;
    headers['svc-provider'] = ctx.provider!;
    const rl = ctx.rateLimitHeaders;
    if (rl) for (const k in rl) headers[k] = rl[k]!;

    if (adapter.passthrough || (!ok && !adapter.mapError)) {
      const length = upstreamHeaders['content-length'];
      if (length !== undefined && !isStream) headers['content-length'] = length;
      res.writeHead(status, headers);
      exchange.sink = Sink.Client;
      return;
    }
    if (!ok) {
      collect(exchange, (buf) => {
        const mapped = JSON.stringify(adapter.mapError!(status, buf, upstreamHeaders));
        ctx.recorder?.push(Buffer.from(mapped));
        sendJson(ctx, res, status, headers, mapped);
      });
      return;
    }
    if (isStream) {
      const mapper = adapter.createStreamMapper!(ctx.call!);
      headers['content-type'] = 'text/event-stream; charset=utf-8';
      headers['cache-control'] = 'no-cache';
      delete headers['content-encoding'];
      res.writeHead(status, headers);
      const recorder = ctx.recorder;
      mapper.on('data', (chunk: Buffer) => {
        if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
        recorder?.push(chunk);
        if (!res.write(chunk)) {
          mapper.pause();
          res.once('drain', () => mapper.resume());
        }
      });
      mapper.on('end', () => res.end());
      mapper.on('error', (err) => {
        ctx.error = err.message;
        res.end();
      });
      exchange.mapper = mapper;
      exchange.sink = Sink.Mapper;
      return;
    }
    collect(exchange, (buf) => {
      let text: string;
      try {
        const mapped = adapter.mapResponse!(buf, ctx.call!, ctx.endpoint);
        ctx.status = mapped.status;
        text = JSON.stringify(mapped.body);
      } catch (err) {
        ctx.status = 502;
        text = JSON.stringify(new GatewayError(502, `could not read the provider's response: ${(err as Error).message}`, 'server_error', 'bad_upstream_response').toBody());
      }
      ctx.recorder?.push(Buffer.from(text));
      sendJson(ctx, res, ctx.status, headers, text);
    });
  }

  function sendJson(ctx: RequestContext, res: ServerResponse, status: number, headers: Record<string, string | string[]>, text: string): void {
    if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(text));
    delete headers['content-encoding'];
    res.writeHead(status, headers);
    res.end(text);
  }

  /** Collects a (non-streamed) provider answer; pieces past `server.max-body-size` bytes are dropped. */
  function collect(exchange: UpstreamExchange, done: (body: Buffer) => void): void {
    exchange.chunks = [];
    exchange.onCollected = done;
    exchange.sink = Sink.Collect;
  }

  /** The upstream connection failed mid-response: end the stream with an SSE error event. */
  function onMidStreamError(ctx: RequestContext): void {
    const res = ctx.res;
    if (ctx.finished || res.writableEnded) return;
    ctx.error = ctx.timedOut ? 'provider timed out mid-response' : 'provider connection lost mid-response';
    if (res.headersSent) {
      const event = `data: ${JSON.stringify(new GatewayError(502, ctx.error, 'server_error', 'upstream_disconnected').toBody())}\n\n`;
      ctx.recorder?.push(Buffer.from(event));
      res.end(event);
    } else {
      // The answer was being collected for mapping: nothing reached the client yet.
      fail(ctx, ctx.timedOut
        ? new GatewayError(504, `provider ${ctx.provider} went silent for ${config.server.upstreamTimeoutMs} ms mid-response`, 'server_error', 'upstream_timeout')
        : new GatewayError(502, `provider ${ctx.provider} closed the connection mid-response`, 'server_error', 'upstream_disconnected'));
    }
  }

  /** The upstream request failed before a response: 502, or 504 on timeout. */
  function upstreamError(ctx: RequestContext, err: Error): void {
    if (ctx.finished) return;
    ctx.phase = 'none';
    ctx.deadlineMs = Infinity;
    if (!ctx.res.headersSent && retryIfAllowed(ctx, 0, null, upstreamErrorCode(err))) return;
    if (ctx.res.headersSent) return onMidStreamError(ctx);
    if (ctx.res.destroyed) return; // the client went away; finish() records it
    const latency = performance.now() - ctx.startMs;
    const status = ctx.timedOut ? 504 : 502;
    ctx.attempts.push({ provider: ctx.provider!, status: 0, latencyMs: latency, error: upstreamErrorCode(err) });
    ctx.router?.latency.finish(ctx.provider!, ctx.timedOut ? latency : null);
    const e = ctx.timedOut
      ? new GatewayError(504, `provider ${ctx.provider} did not answer within ${config.server.upstreamTimeoutMs} ms`, 'server_error', 'upstream_timeout')
      : new GatewayError(502, `provider ${ctx.provider} is unreachable (${upstreamErrorCode(err)})`, 'server_error', 'upstream_unreachable');
    fail(ctx, e);
  }

  /** The `code` of the error each failed request was answered with (for the request log line). */
  const errorCodes = new WeakMap<RequestContext, string>();

  /**
   * Answers an error to the client (unless it already has a response) and makes sure the request
   * is counted, logged and (when it has a key and a parsed body) recorded once, by {@link finish}.
   */
  function fail(ctx: RequestContext, err: unknown): void {
    let e: GatewayError;
    if (err instanceof GatewayError) e = err;
    else {
      logger.error({ err, requestId: ctx.id }, 'unexpected error in the request path');
      e = new GatewayError(500, 'internal gateway error', 'server_error', 'internal_error');
    }
    ctx.status = e.status;
    ctx.error = e.message;
    errorCodes.set(ctx, e.code ?? e.type);
    const extra: Record<string, string> = { ...ctx.rateLimitHeaders, 'svc-id': ctx.id };
    if (ctx.provider) extra['svc-provider'] = ctx.provider;
    // An unread request body (413, early 4xx) must not be parsed as the next request. A stalled one
    // is abandoned with the connection; any other is read and discarded after the answer (bounded),
    // so the client sees the answer rather than a reset, and Node's parser finds the next request.
    const unread = !ctx.req.complete;
    if (unread && e.status === 408) extra.connection = 'close';
    else if (unread) lingerAfterAnswer(ctx.req);
    sendError(ctx.res, e, extra);
  }

  function routeLabel(ctx: RequestContext): string {
    return ctx.routerName ? `router:${ctx.endpoint}` : ctx.path;
  }

  /**
   * record: once the response is over (or the client left), count the request, log one line (ids,
   * route, status, timings — never bodies, keys or error texts) and, when it was authenticated and
   * its body parsed, queue its log record. Runs once per request.
   */
  function finish(ctx: RequestContext): void {
    if (ctx.finished) return;
    ctx.finished = true;
    const clientClosed = !ctx.res.writableFinished;
    if (clientClosed && ctx.router && ctx.responseAtMs === null) ctx.router.latency.finish(ctx.provider!, null);
    const endMs = performance.now();
    const status = clientClosed && ctx.status < 400 ? 499 : ctx.status;
    // Unknown paths share one label, so clients cannot grow the metric without bound.
    const route = ctx.routerName || KNOWN_PATHS.has(ctx.path) ? routeLabel(ctx) : 'unmatched';
    const provider = ctx.provider ?? 'none';
    if (metrics) observeRequest(metrics, route, provider, status, (endMs - ctx.startMs) / 1000, ctx.firstByteMs !== null ? (ctx.firstByteMs - ctx.startMs) / 1000 : null);
    // One access-log line per request: successes at debug (a line per request costs more than the
    // rest of the gateway's own work), client errors at info, upstream and gateway errors at warn.
    const level = status >= 500 ? 'warn' : status >= 400 ? 'info' : 'debug';
    if (logger.isLevelEnabled(level)) logger[level](
      {
        requestId: ctx.id,
        route,
        provider: ctx.provider,
        model: ctx.model,
        status,
        durationMs: Math.round(endMs - ctx.startMs),
        ttftMs: ctx.firstByteMs !== null ? Math.round(ctx.firstByteMs - ctx.startMs) : null,
        attempts: ctx.attempts.length,
        clientClosed,
        errorCode: errorCodes.get(ctx) ?? (ctx.error !== null ? 'upstream_error' : null),
        organizationId: ctx.key?.organizationId ?? null,
      },
      'request',
    );
    if (!observe || !ctx.key || !ctx.body || !controlPlane) return;
    const rec = ctx.recorder?.finish(ctx.status) ?? null;
    const record: LogRecord = {
      requestId: ctx.id,
      organizationId: ctx.key.organizationId,
      apiKeyId: ctx.key.keyId,
      createdAt: ctx.createdAt,
      responseCreatedAt: ctx.responseAtMs !== null ? ctx.createdAt + (ctx.responseAtMs - ctx.startMs) : null,
      path: ctx.path,
      targetUrl: ctx.upstream ? ctx.upstream.url.href : null,
      provider: ctx.provider ?? 'openai',
      requestModel: ctx.requestModel,
      modelSent: ctx.model,
      // As the client sent them (the provider got its own headers, never these).
      modelOverride: clientHeader(ctx.req, 'svc-model-override'),
      userId: clientHeader(ctx.req, 'svc-user-id'),
      properties: properties(ctx.req),
      status,
      streamed: ctx.body?.stream === true,
      delayMs: endMs - ctx.startMs,
      timeToFirstTokenMs: ctx.firstByteMs !== null ? ctx.firstByteMs - ctx.startMs : null,
      // Bodies received as JSON are appended as their text, not serialized again (see serializeRecord).
      requestBody: ctx.clientText !== null ? undefined : ctx.clientBody,
      responseBody: rec?.json ? undefined : (rec?.body ?? null),
      bodyTruncated: rec?.truncated ?? false,
      usage: (rec?.usage as LogRecord['usage']) ?? null,
      error: ctx.error ?? rec?.error ?? (clientClosed ? 'client closed the connection' : null),
      clientClosed,
      prompt: ctx.prompt
        ? { promptId: ctx.prompt.promptId, versionId: ctx.prompt.versionId, version: ctx.prompt.version, environment: ctx.prompt.environment, inputs: ctx.prompt.inputs }
        : null,
      tokenLimit: ctx.tokenLimit
        ? {
            handler: ctx.tokenLimit.handler,
            tokensBefore: ctx.tokenLimit.tokensBefore,
            tokensAfter: ctx.tokenLimit.tokensAfter,
            allowedInput: ctx.tokenLimit.allowedInput,
            modelSent: ctx.tokenLimit.model,
            skipped: ctx.tokenLimit.skipped ?? null,
          }
        : null,
      attempts: ctx.attempts,
      endpoint: ctx.endpoint,
    };
    const raw: Array<[string, string]> = [];
    if (ctx.clientText !== null) raw.push(['requestBody', ctx.clientText]);
    if (rec?.json) raw.push(['responseBody', rec.json]);
    controlPlane.queue.push(record, raw);
  }

  return {
    server,
    rateLimiter,
    async close() {
      if (closing) return;
      closing = true;
      const drained = new Promise<void>((resolve) => {
        if (inFlight === 0) resolve();
        else idle.push(resolve);
      });
      server.close();
      server.closeIdleConnections();
      await Promise.race([drained, new Promise((r) => setTimeout(r, config.server.shutdownTimeoutMs).unref())]);
      server.closeAllConnections();
      deadlines.close();
      await upstreamAgent.destroy();
      await rateLimiter?.close();
    },
  };
}

/** The current attempt of a request's exchange with its provider: it can be called off. */
export interface UpstreamAttempt {
  /**
   * Stops the exchange (closing its connection if the request is in flight); a no-op once the
   * answer is complete. Called on a timeout and when the client leaves.
   */
  abort(reason: Error): void;
}

/** Where a provider's response body goes. */
const enum Sink {
  /** Read and dropped (a retry follows). */
  Discard,
  /** Written to the client as it arrives (passthrough, or an unmapped error). */
  Client,
  /** Written into the provider's stream mapper, whose OpenAI SSE goes to the client. */
  Mapper,
  /** Collected whole (up to `server.max-body-size` bytes) for mapping. */
  Collect,
}

/** Response headers as undici parses them: lower-case names, repeated headers as arrays. */
type UpstreamHeaders = Record<string, string | string[] | undefined>;

/**
 * `origin` and `path` of a provider URL for undici's dispatch, kept per URL object (an adapter may
 * return the same one for every request; {@link UpstreamRequest.url} is not changed once returned).
 */
const dispatchTargets = new WeakMap<URL, { origin: string; path: string }>();
function dispatchTarget(url: URL): { origin: string; path: string } {
  let t = dispatchTargets.get(url);
  if (t === undefined) {
    t = { origin: url.origin, path: url.pathname + url.search };
    dispatchTargets.set(url, t);
  }
  return t;
}

/** What an upstream error is logged and answered as: its code (`ECONNREFUSED`, `UND_ERR_SOCKET`) or else its message. */
function upstreamErrorCode(err: Error): string {
  return (err as { code?: string }).code ?? err.message;
}

/** Removes the gateway's prompt members before the body goes to a provider. */
function stripPromptMembers(body: ChatCompletionRequest): void {
  delete body.prompt_id;
  delete body.version_id;
  delete body.environment;
  delete body.inputs;
}

/** Paths of the /ai and /v1 routes (the metric's `route` label; anything else is `unmatched`). */
const KNOWN_PATHS = new Set(['/ai/chat/completions', '/v1/chat/completions', '/ai/embeddings', '/v1/embeddings']);
/** Deepest JSON nesting accepted in a request body (objects and arrays); deeper is a 400. */
const MAX_JSON_DEPTH = 128;
/** Members that, when present and not null, must be finite numbers. */
const NUMBER_MEMBERS = ['max_tokens', 'max_completion_tokens', 'n', 'temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed', 'top_logprobs', 'dimensions'] as const;
/** Members that, when present and not null, must be booleans. */
const BOOLEAN_MEMBERS = ['stream', 'logprobs', 'parallel_tool_calls', 'store'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
