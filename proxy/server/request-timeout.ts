/**
 * `server.request-timeout` passed: Node's HTTP server reports it (`ERR_HTTP_REQUEST_TIMEOUT`, on the
 * server's `clientError`) for the request the connection is still receiving. On a pipelined
 * connection that is not the response at the head of the socket's queue (`socket._httpMessage`,
 * an earlier request that may be complete and waiting on its provider): the request being received
 * is the parser's current message, while it is incomplete.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors.ts';
import { CTX, type RequestContext } from '../pipeline/context.ts';
import { fail } from '../pipeline/fail.ts';
import { stopBody } from '../stages/read-body.ts';

/** What of Node's socket this reads: the HTTP parser and the message it is parsing (Node 20's `_http_server`). */
type ParsedSocket = Duplex & { parser?: { incoming?: IncomingMessage | null } | null };

/**
 * Answers a passed `server.request-timeout` on the request still arriving, when the gateway has a
 * context for it and nothing of its answer was written: 408 `request_timeout` in the endpoint
 * kind's error shape, `connection: close` (its body is unread). One whose body the read-body stage
 * is reading stops reading ({@link stopBody}); one whose pipeline waits on an earlier stage (the
 * body not yet read) is answered through `fail`, and the pipeline does not resume after an answer.
 * On a pipelined connection the answer queues behind the earlier requests' answers, which are
 * given as usual. Left to the caller (returns false): another error, slow headers (no complete
 * head, no context), a request without a context (the GET routes), an answer already begun, and a
 * request already at its provider (a `…/responses/{id}` call sent with a body: it is counted as the
 * gateway's 408, and the caller's raw answer closes the connection).
 * @returns true when answered here.
 */
export function answerRequestTimeout(err: Error, socket: Duplex): boolean {
  if ((err as { code?: string }).code !== 'ERR_HTTP_REQUEST_TIMEOUT') return false;
  // The parser keeps its last message after it completed: a complete one is waiting for its
  // answer, not arriving, so the timeout is the next request's headers (no context yet).
  const incoming = (socket as ParsedSocket).parser?.incoming;
  if (!incoming || incoming.complete) return false;
  const ctx = (incoming as { [CTX]?: RequestContext })[CTX];
  if (!ctx || ctx.finished || ctx.res.headersSent) return false;
  const e = new GatewayError(408, `the request did not arrive within server.request-timeout (${ctx.gw.config.server.requestTimeoutMs} ms)`, 'invalid_request_error', 'request_timeout');
  if (ctx.phase === 'body') {
    stopBody(ctx, e);
    return true;
  }
  if (ctx.phase === 'none') {
    fail(ctx, e);
    return true;
  }
  ctx.status = e.status;
  ctx.error = e.message;
  ctx.errorCode = e.code ?? null;
  ctx.cutOff = true;
  return false;
}
