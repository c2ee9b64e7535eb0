/**
 * Answers mapped through the request's provider binding (`ctx.binding`: providers that do not
 * speak the client's format, and provider errors a transport maps): an error body in the client's
 * error shape, a stream through the binding's stream mapper, a JSON body through `mapResponse`.
 * Every byte sent is shown to the response observers.
 */
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.ts';
import { observesChunks, responseChunk } from '../observers/dispatch.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { UpstreamExchange } from './exchange.ts';
import { redactErrorBody } from './provider-secrets.ts';

type Headers = Record<string, string | string[]>;

/**
 * A provider error: collected, the attempt's credentials `secret` and `other` (either null; see
 * ./provider-secrets.ts) redacted from its bytes before the transport reads them, so no message
 * mapped from it carries them, whatever they look like, then mapped by the binding's `mapError`
 * (status kept) and sent as JSON.
 */
export function answerMappedError(exchange: UpstreamExchange, status: number, headers: Headers, upstreamHeaders: Headers, secret: string | null, other: string | null): void {
  const ctx = exchange.ctx;
  exchange.collect((buf) => {
    const mapped = JSON.stringify(ctx.binding!.mapError(status, redactErrorBody(buf, secret, other, ctx.call?.config), upstreamHeaders));
    if (observesChunks(ctx)) responseChunk(ctx, Buffer.from(mapped));
    sendJson(ctx, ctx.res, status, headers, mapped);
  });
}

/**
 * A 2xx stream: the provider's bytes go through the binding's stream mapper, its output to the client.
 * The exchange is the mapper's redactor (`call.redactor`): a mapper that fails with the provider's
 * error text asks it to take the attempt's credentials out (./provider-secrets.ts).
 */
export function answerMappedStream(exchange: UpstreamExchange, status: number, headers: Headers): void {
  const ctx = exchange.ctx;
  const res = ctx.res;
  const call = ctx.call!;
  call.redactor = exchange;
  const mapper = ctx.binding!.createStreamMapper(call);
  headers['content-type'] = ctx.kind.framing?.contentType ?? 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  delete headers['content-encoding'];
  res.writeHead(status, headers);
  mapper.on('data', (chunk: Buffer) => {
    if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
    responseChunk(ctx, chunk);
    if (!res.write(chunk)) {
      mapper.pause();
      res.once('drain', () => mapper.resume());
    }
  });
  mapper.on('end', () => {
    // The mapper ended its output before the provider's answer ended (a translation that failed mid-stream): the
    // rest of the answer would reach no one, so the provider is stopped rather than read to its end.
    if (!mapper.writableEnded) exchange.mapperFailed();
    res.end();
  });
  mapper.on('error', (err) => {
    ctx.error = err.message;
    // Ending the answer normally would not make finish abort the provider: stop it here.
    exchange.mapperFailed();
    res.end();
  });
  exchange.toMapper(mapper);
}

/**
 * A 2xx JSON body: collected, mapped by the binding's `mapResponse` with the provider's headers (`headers`, the
 * client's copy of them; a 502 when it cannot be read), sent.
 */
export function answerMappedBody(exchange: UpstreamExchange, headers: Headers): void {
  const ctx = exchange.ctx;
  exchange.collect((buf) => {
    let text: string;
    try {
      const mapped = ctx.binding!.mapResponse(buf, ctx.call!, headers);
      ctx.status = mapped.status;
      text = JSON.stringify(mapped.body);
    } catch (err) {
      ctx.status = 502;
      text = JSON.stringify(ctx.kind.errorBody(new GatewayError(502, `could not read the provider's response: ${(err as Error).message}`, 'server_error', 'bad_upstream_response')));
    }
    if (observesChunks(ctx)) responseChunk(ctx, Buffer.from(text));
    sendJson(ctx, ctx.res, ctx.status, headers, text);
  });
}

/** Sends a whole JSON answer (its length said, no content encoding). */
function sendJson(ctx: RequestContext, res: ServerResponse, status: number, headers: Headers, text: string): void {
  if (ctx.firstByteMs === null) ctx.firstByteMs = performance.now();
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(Buffer.byteLength(text));
  delete headers['content-encoding'];
  res.writeHead(status, headers);
  res.end(text);
}
