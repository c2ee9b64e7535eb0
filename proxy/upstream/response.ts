/**
 * The provider's status and headers arrived: retry (routers), or answer the client and choose where
 * the body goes. Passthrough answers (a provider already speaking the client's format, or an error
 * its transport does not map) go to the client byte for byte; the others are mapped through the
 * request's provider binding (./mapped.ts).
 */
import { observesChunks, responseChunk, responseStarted } from '../observers/dispatch.ts';
import { retryAfterMs } from '../balancer/retry-after.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { connectionNominated, withoutHeaderNames } from '../pipeline/headers.ts';
import { settleBalancer } from './balancer.ts';
import { codingOf, createDecoder } from './content-decoding.ts';
import { answerUndecodable } from './failure.ts';
import { headerNameToString } from '../upstream-agent.ts';
import type { UpstreamExchange } from './exchange.ts';
import { answerMappedBody, answerMappedError, answerMappedStream } from './mapped.ts';
import { clientSecret, configuredSecret, redactErrorBody, redactHeaderValue, secondSecret } from './provider-secrets.ts';
import { removedMembersHeader } from './removed-members.ts';
import { retryIfAllowed } from './retry.ts';

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) and the length, which the gateway sets itself: never copied to
 * the client, nor the headers the provider's `Connection` names.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']);

/**
 * What the proxy reads of a provider's raw headers, in one pass: the client's header list (the
 * provider's headers less hop-by-hop ones, names lower-cased, flat: name, value, name, value …,
 * the gateway's credentials redacted from the values: ./provider-secrets.ts) and the four it acts on.
 */
interface ProviderHead {
  list: string[];
  contentType: string;
  contentLength: string | undefined;
  retryAfter: string | undefined;
  /** `content-encoding` as sent (repeats joined with ", "); read by ./content-decoding.ts `codingOf`. */
  contentEncoding: string | undefined;
}

/**
 * Reads `raw` (undici's name, value … list of Buffers; values decoded as latin1, as undici does);
 * `secret` and `other`: the attempt's credentials to redact (./provider-secrets.ts), `other` null
 * when `secret` is.
 */
function readHead(raw: Buffer[], secret: string | null, other: string | null): ProviderHead {
  // A value shorter than every secret cannot hold one: most values (provider keys are 40-170
  // characters) cost this one comparison, and no search.
  const shortest = secret === null ? Infinity : other === null || other.length > secret.length ? secret.length : other.length;
  let list: string[] = [];
  let contentType = '';
  let contentLength: string | undefined;
  let retryAfter: string | undefined;
  let contentEncoding: string | undefined;
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = headerNameToString(raw[i]!);
    const value = raw[i + 1]!.toString('latin1');
    // The set first: the two hop-by-hop names read here are compared only when it matched, so an
    // ordinary header costs the lookup and three comparisons.
    if (HOP_BY_HOP.has(name)) {
      if (name === 'content-length') contentLength = value;
      else if (name === 'connection') connection = connection === undefined ? value : `${connection}, ${value}`;
      continue;
    }
    if (name === 'content-type') contentType = contentType === '' ? value : `${contentType}, ${value}`;
    else if (name === 'content-encoding') contentEncoding = contentEncoding === undefined ? value : `${contentEncoding}, ${value}`;
    else if (name === 'retry-after') retryAfter = value;
    list.push(name, value.length < shortest ? value : redactHeaderValue(value, secret, other));
  }
  // The Connection header may follow the headers it names, so they are taken out after the pass (rare).
  const nominated = connection === undefined ? null : connectionNominated(connection);
  if (nominated !== null) list = withoutHeaderNames(list, nominated);
  return { list, contentType, contentLength, retryAfter, contentEncoding };
}

/** Handles the response start of the current attempt (see the file's comment); `raw` as undici gives it. */
export function onUpstreamResponse(exchange: UpstreamExchange, status: number, raw: Buffer[]): void {
  const ctx = exchange.ctx;
  ctx.responseAtMs = performance.now();
  // From here the timeout is the provider's silence between pieces of the answer.
  ctx.deadlineMs = ctx.responseAtMs + ctx.gw.config.server.upstreamTimeoutMs;
  // The secrets to redact: the provider's key (its searched form worked out at load) and, only when the
  // client brought its own, the credential sent (./provider-secrets.ts).
  const call = ctx.call;
  const sent = clientSecret(call, ctx.upstream);
  const key = configuredSecret(call?.config);
  const secret = sent ?? key;
  const other = secondSecret(sent, key);
  const head = readHead(raw, secret, other);
  const router = ctx.router;
  // Read only when a router keeps the provider's health (its cool-down caps the ejection).
  const retryAfter = router === null || head.retryAfter === undefined ? null : retryAfterMs(head.retryAfter, Date.now(), router.config.health.coolDownMs);
  if (retryIfAllowed(ctx, status, retryAfter, null)) {
    exchange.discard();
    ctx.responseAtMs = null;
    return;
  }
  ctx.status = status;
  const attemptMs = ctx.responseAtMs - ctx.attemptStartMs;
  ctx.attempts.push({ provider: ctx.provider!, status, latencyMs: attemptMs });
  // A 5xx or 429 answered at once is not a fast provider: it takes a penalty (./balancer.ts).
  settleBalancer(ctx, status, attemptMs);
  const binding = ctx.binding!;
  const ok = status >= 200 && status < 300;
  // A binding whose translator never streams reads even a stream-typed answer as one body.
  const isStream = ok && binding.streams && (head.contentType.includes('event-stream') || head.contentType.includes('eventstream'));
  const coding = head.contentEncoding === undefined ? null : codingOf(head.contentEncoding);
  // Errors go through the transport's mapError even when its answers pass through (Azure).
  if (ok && binding.passthrough) {
    responseStarted(ctx, isStream);
    // The client gets the provider's bytes as encoded; the observers that read them decode their copy
    // (../observers/response-recorder.ts, response-capture.ts).
    if (coding !== null) {
      ctx.recorder?.decodeAs(coding);
      ctx.responseCapture?.decodeAs(coding);
    }
    // An event stream is sent on event by event (./sse-boundary.ts), unless encoded: its bytes are then not the events'.
    return passThrough(exchange, status, head, isStream, isStream && coding === null && head.contentType.includes('event-stream'));
  }
  // The gateway reads every other answer: one it cannot decode is refused before any head is written.
  const decoder = coding === null ? null : createDecoder(coding);
  if (coding !== null && decoder === null) return exchange.refuse(answerUndecodable(ctx, coding, null));
  responseStarted(ctx, isStream);
  if (!ok && !binding.mapsErrors) passThroughError(exchange, status, head, secret, other);
  else if (!ok) {
    // The provider's headers as mapError reads them (Bedrock copies x-amzn-ErrorType into the code): the
    // redacted list, taken before the gateway's headers are appended to it.
    const upstreamHeaders = headersObject(head.list);
    answerMappedError(exchange, status, headersObject(addGatewayHeaders(ctx, head.list)), upstreamHeaders, secret, other);
  } else {
    const headers = headersObject(addGatewayHeaders(ctx, head.list));
    if (isStream) answerMappedStream(exchange, status, headers);
    else answerMappedBody(exchange, headers);
  }
  if (decoder !== null) exchange.decodeWith(decoder, coding!);
}

/**
 * Appends the gateway's headers to the client's list: `Svc-Id`, `Svc-Provider`, `Svc-Cache: MISS` when
 * the request asked for the cache (a hit never gets here), `Svc-Removed-Members`
 * when a translator removed request members (./removed-members.ts), and the admitted request's
 * rate-limit headers, which replace the provider's headers of the same names ({@link withoutOwnNames}).
 */
function addGatewayHeaders(ctx: RequestContext, list: string[]): string[] {
  const rl = ctx.rateLimitHeaders;
  // `{}` (no bucket: policy none, fail-open) replaces nothing, so the provider's headers are not walked.
  if (rl !== null && rl['x-ratelimit-limit'] !== undefined) withoutOwnNames(list, rl);
  list.push('svc-id', ctx.id, 'svc-provider', ctx.provider!);
  if (ctx.cache !== null) list.push('svc-cache', 'MISS');
  const removed = removedMembersHeader(ctx.call?.removed);
  if (removed !== null) list.push('svc-removed-members', removed);
  if (rl !== null) for (const k in rl) list.push(k, rl[k]!);
  return list;
}

/**
 * Takes out of `list` (flat, names lower-case), in place, the provider's headers named as one of the
 * gateway's rate-limit headers `own` (../ratelimit/index.ts `rateLimitHeaders`: `x-ratelimit-limit`,
 * `-remaining`, `-reset`, `ratelimit`, `ratelimit-policy`). Providers such as OpenRouter and Together
 * send `X-RateLimit-*` of their own, and a client reading both got them joined (Node's fetch:
 * `"77, 100000"`); the gateway's value is the one that applies to the client. Other names (OpenAI's
 * `x-ratelimit-limit-requests`) stay. Runs only when the gateway's limiter kept headers for the
 * request: an own-key lookup per provider header, no allocation.
 */
function withoutOwnNames(list: string[], own: Readonly<Record<string, string>>): void {
  let kept = 0;
  for (let i = 0; i + 1 < list.length; i += 2) {
    if (Object.hasOwn(own, list[i]!)) continue;
    list[kept++] = list[i]!;
    list[kept++] = list[i + 1]!;
  }
  list.length = kept;
}

/** A flat header list as an object (a repeated name's values in an array), for the mapped answers that edit it. */
function headersObject(list: string[]): Record<string, string | string[]> {
  // No prototype: a provider's header named "constructor" or "__proto__" is a name like any other.
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i < list.length; i += 2) {
    const name = list[i]!;
    const had = headers[name];
    headers[name] = had === undefined ? list[i + 1]! : Array.isArray(had) ? [...had, list[i + 1]!] : [had, list[i + 1]!];
  }
  return headers;
}

/**
 * The provider's answer goes to the client as it is (its length kept unless streamed), headers as a flat list;
 * `sse`: a text/event-stream as sent, passed on up to its last whole line (./exchange.ts `toClient`).
 */
function passThrough(exchange: UpstreamExchange, status: number, head: ProviderHead, isStream: boolean, sse: boolean): void {
  const list = addGatewayHeaders(exchange.ctx, head.list);
  if (head.contentLength !== undefined && !isStream) list.push('content-length', head.contentLength);
  exchange.ctx.res.writeHead(status, list);
  exchange.toClient(isStream, sse);
}

/**
 * A provider's error the client gets as the provider wrote it (its transport does not map errors for
 * the client's dialect), less the gateway's credentials: read whole (./exchange.ts `collect`: bounded,
 * decoded when the provider encoded it), `secret` and `other` redacted (./provider-secrets.ts), then
 * sent with its own length. Errors only: a successful answer is passed on unread.
 */
function passThroughError(exchange: UpstreamExchange, status: number, head: ProviderHead, secret: string | null, other: string | null): void {
  const ctx = exchange.ctx;
  const list = addGatewayHeaders(ctx, head.list);
  exchange.collect((body) => {
    const sent = redactErrorBody(body, secret, other, ctx.call?.config);
    if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
    if (observesChunks(ctx)) responseChunk(ctx, sent);
    const headers = withoutHeaderNames(list, COLLECTED_ENCODING);
    if (status !== 304) headers.push('content-length', String(sent.length));
    ctx.res.writeHead(status, headers);
    ctx.res.end(sent);
  });
}

/** What a collected body no longer has: the provider's content coding (the exchange decoded it). */
const COLLECTED_ENCODING: ReadonlySet<string> = new Set(['content-encoding']);
