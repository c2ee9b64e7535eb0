/**
 * The request-log observer (`svc.features: observability`): records a copy of the response as it
 * reaches the client ({@link ResponseRecorder}) and, once the response is over, builds the
 * request's {@link LogRecord} and queues it for admin over the control plane. Authenticated requests
 * of the endpoint kinds that are logged (not count_tokens) are recorded once their body was read:
 * also those refused for it (proxy/stages/validate.ts: not UTF-8, too deep, malformed JSON, a member
 * or session header the kind refuses), so that every such answer's `Svc-Id` can be read back; a
 * refused body is logged as the bytes received, cut at `log-queue.max-body-bytes`. A request
 * answered before its body was read (no valid key, rate-limited, too large) is not. A record carries the request's session (`Svc-Session-Id`, else the client's
 * own: Claude Code's `x-claude-code-session-id`, Codex's `session_id`) with its `Svc-Session-Path`
 * and `Svc-Session-Name`, the members a translator removed, and the wire
 * format spoken, and the cache: whether the request asked for it, and the request a hit's answer came from.
 */
import type { LogRecord } from '../../shared/record.ts';
import { HEAD_MEMBERS, type LogRecordHead } from '../../shared/record-head.ts';
import type { LogQueue } from '../log-queue.ts';
import { logHeaders, MAX_SESSION_ID, MAX_SESSION_PATH, sessionHeaders } from '../pipeline/headers.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { redactAttemptText } from '../upstream/provider-secrets.ts';
import { ResponseRecorder, type RecordedResponse } from './response-recorder.ts';
import type { ResponseObserver } from './types.ts';

/**
 * The log record of a finished request (`rec`: what the recorder kept of the response, or null), as
 * its positional head (shared/record-head.ts: the values in `HEAD_MEMBERS` order, which the queue
 * serializes as a JSON array). Bodies the queue carries as their bytes (the client's JSON body as
 * received, a non-streamed 2xx answer) are left out here (`undefined`); see shared/record-batch.ts.
 * `recordFromHead` turns it into the {@link LogRecord} object.
 */
export function buildLogRecordHead(ctx: RequestContext, rec: RecordedResponse | null): LogRecordHead {
  const key = ctx.key!;
  const headers = logHeaders(ctx.req);
  const session = sessionOf(ctx, headers.clientSessionId);
  // One value per HEAD_MEMBERS entry, in its order (the type checks each position's type).
  return [
    ctx.id,
    key.organizationId,
    key.keyId,
    ctx.createdAt,
    ctx.responseAtMs !== null ? ctx.createdAt + (ctx.responseAtMs - ctx.startMs) : null,
    ctx.path,
    ctx.upstream ? ctx.upstream.url.href : null,
    ctx.provider,
    ctx.requestModel,
    ctx.model,
    // modelOverride, userId, properties: as the client sent them (the provider got its own headers, never these).
    headers.modelOverride,
    headers.userId,
    headers.properties,
    ctx.outcomeStatus,
    ctx.body?.stream === true,
    ctx.endMs - ctx.startMs,
    ctx.firstByteMs !== null ? ctx.firstByteMs - ctx.startMs : null,
    ctx.rawBodyLogged ? undefined : ctx.clientBody,
    rec?.raw ? undefined : (rec?.body ?? null),
    rec?.truncated ?? false,
    // A translated stream may withhold the usage from its client (TranslatorCall.withheldUsage), and a hit replays
    // such an answer (its usage stored with it): read only when the client's bytes had none. A client that left
    // before the end missed what the provider reported so far (TranslatorCall.usageSource), which it bills.
    ((rec?.usage ?? ctx.call?.withheldUsage ?? ctx.cache?.usage ?? (ctx.clientClosed ? ctx.call?.usageSource?.usageSoFar() : null)) as LogRecord['usage']) ?? null,
    ctx.error ?? rec?.error ?? (ctx.clientClosed ? 'client closed the connection' : null),
    ctx.clientClosed,
    ctx.prompt
      ? { promptId: ctx.prompt.promptId, versionId: ctx.prompt.versionId, version: ctx.prompt.version, environment: ctx.prompt.environment, inputs: ctx.prompt.inputs }
      : null,
    ctx.tokenLimit
      ? {
          handler: ctx.tokenLimit.handler,
          tokensBefore: ctx.tokenLimit.tokensBefore,
          tokensAfter: ctx.tokenLimit.tokensAfter,
          allowedInput: ctx.tokenLimit.allowedInput,
          modelSent: ctx.tokenLimit.model,
          skipped: ctx.tokenLimit.skipped ?? null,
        }
      : null,
    ctx.attempts,
    ctx.kind.name as LogRecord['endpoint'],
    session.sessionId,
    session.sessionPath,
    session.sessionName,
    ctx.call?.removed?.length ? ctx.call.removed : null,
    ctx.binding?.wireFormat ?? null,
    ctx.cache !== null,
    ctx.cache?.hitOf ?? null,
  ];
}

/**
 * The session members of a request's record: `Svc-Session-Id` (else the client's own session, see
 * {@link sessionIdOf}), `Svc-Session-Path` and `Svc-Session-Name` (checked by the validate stage;
 * cut to their limits here all the same). Requests sending none of the three cost three header lookups.
 * @param clientSessionId the client's own session header ({@link logHeaders}), when already read.
 */
export function sessionOf(ctx: RequestContext, clientSessionId?: string | null): Pick<LogRecord, 'sessionId' | 'sessionPath' | 'sessionName'> {
  const s = sessionHeaders(ctx.req);
  if (s === null) return { sessionId: sessionIdOf(ctx, clientSessionId), sessionPath: null, sessionName: null };
  return {
    sessionId: s.id ? s.id.slice(0, MAX_SESSION_ID) : sessionIdOf(ctx, clientSessionId),
    sessionPath: s.path ? s.path.slice(0, MAX_SESSION_PATH) : null,
    sessionName: s.name ? s.name.slice(0, MAX_SESSION_ID) : null,
  };
}

/**
 * The coding session a request belongs to, as its client names it: Claude Code's
 * `x-claude-code-session-id` header; Codex's `session_id` (or `session-id`) header, else the
 * `client_metadata.session_id` of its Responses body (Codex 0.169 sends both, the same id; its
 * `x-codex-turn-metadata` repeats it). Null when the client names none.
 * @param clientSessionId those headers as {@link logHeaders} read them; undefined: read here.
 */
export function sessionIdOf(ctx: RequestContext, clientSessionId?: string | null): string | null {
  const header = clientSessionId !== undefined ? clientSessionId : logHeaders(ctx.req).clientSessionId;
  if (header !== null) return header;
  const metadata = (ctx.clientBody as { client_metadata?: unknown } | null)?.client_metadata;
  const id = metadata && typeof metadata === 'object' ? (metadata as { session_id?: unknown }).session_id : undefined;
  return typeof id === 'string' ? id : null;
}

/**
 * `rec` of a stream that carried an error event, its error and body less the attempt's credentials
 * (../upstream/provider-secrets.ts `redactAttemptText`). A passed-through 2xx stream reaches the client as the
 * provider sent it, unscanned (a successful stream pays nothing for redaction), so an error event repeating the
 * key is redacted here, for the log only, once the response is over. A mapped stream's error event was redacted
 * by its translator already; redacting again finds nothing.
 */
function redactedStreamError(ctx: RequestContext, rec: RecordedResponse): RecordedResponse {
  const redact = (text: string): string => redactAttemptText(text, ctx.call, ctx.upstream);
  let body = rec.body;
  if (body !== null && body !== undefined) {
    const text = JSON.stringify(body);
    const out = redact(text);
    if (out !== text) {
      try {
        body = JSON.parse(out);
      } catch {
        // A credential that matched across JSON's syntax (one holding a quote): kept as text.
        body = { raw: out };
      }
    }
  }
  return { ...rec, error: rec.error === null ? null : redact(rec.error), body };
}

/** Position of `bodyTruncated` in a positional head. */
const BODY_TRUNCATED = HEAD_MEMBERS.indexOf('bodyTruncated');

/**
 * Queues the record of a request whose body was read but refused (validate's 400, so `ctx.body` is
 * null): its status and the gateway's error, and the body as the bytes received (admin keeps JSON as
 * it is and anything else as `{raw: text}`), cut at `log-queue.max-body-bytes` (then `bodyTruncated`).
 * No provider was chosen (admin shows it as `SVC`) and no answer body is recorded (the error stands for it).
 */
function queueRefused(ctx: RequestContext, queue: LogQueue): void {
  const raw = ctx.rawBody!;
  const cap = ctx.gw.config.logQueue.maxBodyBytes;
  const head = buildLogRecordHead(ctx, null);
  if (raw.length <= cap) return queue.push(head, raw, null);
  (head as unknown[])[BODY_TRUNCATED] = true;
  queue.push(head, raw.subarray(0, cap), null);
}

/** Records responses and queues a log record per request (compose it only with observability on). */
export const logRecordObserver: ResponseObserver = {
  name: 'log-record',
  onResponseStart(ctx, streamed) {
    if (ctx.kind.logged) ctx.recorder = new ResponseRecorder(streamed, ctx.gw.config.logQueue.maxBodyBytes, ctx.kind);
  },
  onChunk(ctx, chunk) {
    ctx.recorder?.push(chunk);
  },
  onFinish(ctx) {
    const controlPlane = ctx.gw.controlPlane;
    if (!ctx.key || !controlPlane || !ctx.kind.logged) return;
    if (!ctx.body) {
      // Refused before its body was accepted (no cost on an accepted request: the test it made before).
      if (ctx.rawBody !== null && ctx.status >= 400) queueRefused(ctx, controlPlane.queue);
      return;
    }
    const recorder = ctx.recorder;
    let rec = recorder?.finish(ctx.status, ctx.clientClosed) ?? null;
    if (rec !== null && recorder!.hadStreamError) rec = redactedStreamError(ctx, rec);
    controlPlane.queue.push(buildLogRecordHead(ctx, rec), ctx.rawBodyLogged ? ctx.rawBody : null, rec?.raw ?? null);
  },
};
