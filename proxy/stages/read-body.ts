/**
 * Stage read-body: the request body, at most `server.max-body-size` bytes, each next piece within
 * `server.headers-timeout` (a deadline, not a timer). It waits on the request's `data`/`end`
 * events through shared handlers that find the context on `req`, and resumes the pipeline itself.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.ts';
import { contextOf, type RequestContext } from '../pipeline/context.ts';
import { fail } from '../pipeline/fail.ts';
import { resume, SUSPEND } from '../pipeline/pipeline.ts';

const EMPTY = Buffer.alloc(0);

function tooLarge(message: string): GatewayError {
  return new GatewayError(413, message, 'invalid_request_error', 'request_too_large');
}

/**
 * Sets `ctx.rawBody` once the body is in: at once when it is already complete (empty), else after
 * its `end` event (returns {@link SUSPEND}).
 * @throws {GatewayError} 413 `request_too_large` when the declared length is over the limit (nothing is read).
 */
export function readBody(ctx: RequestContext): void | typeof SUSPEND {
  const req = ctx.req;
  const server = ctx.gw.config.server;
  const declared = Number(req.headers['content-length']);
  if (declared > server.maxBodyBytes) throw tooLarge(`request body of ${declared} bytes exceeds the limit of ${server.maxBodyBytes} bytes`);
  if (req.complete && req.readableLength === 0 && !req.readable) {
    ctx.rawBody = EMPTY;
    return;
  }
  ctx.bodyChunks = [];
  ctx.phase = 'body';
  ctx.deadlineMs = performance.now() + server.headersTimeoutMs;
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  return SUSPEND;
}

function onBodyData(this: IncomingMessage, chunk: Buffer): void {
  const ctx = contextOf(this);
  if (ctx.phase !== 'body') return;
  const server = ctx.gw.config.server;
  ctx.bodySize += chunk.length;
  if (ctx.bodySize > server.maxBodyBytes) return stopBody(ctx, tooLarge(`request body exceeds the limit of ${server.maxBodyBytes} bytes`));
  ctx.bodyChunks!.push(chunk);
  ctx.deadlineMs = performance.now() + server.headersTimeoutMs;
}

function onBodyEnd(this: IncomingMessage): void {
  const ctx = contextOf(this);
  if (ctx.phase !== 'body') return;
  this.off('data', onBodyData);
  this.off('end', onBodyEnd);
  ctx.phase = 'none';
  ctx.deadlineMs = Infinity;
  const chunks = ctx.bodyChunks!;
  ctx.bodyChunks = null;
  ctx.rawBody = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, ctx.bodySize);
  resume(ctx);
}

/** Abandons reading the body (413, or a stall: 408) and answers `err`. */
export function stopBody(ctx: RequestContext, err: GatewayError): void {
  ctx.phase = 'none';
  ctx.deadlineMs = Infinity;
  ctx.bodyChunks = null;
  ctx.req.off('data', onBodyData);
  ctx.req.off('end', onBodyEnd);
  ctx.req.pause();
  fail(ctx, err);
}
