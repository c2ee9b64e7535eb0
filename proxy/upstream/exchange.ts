/**
 * One attempt's exchange with the provider, as an undici dispatch handler
 * (https://github.com/nodejs/undici/blob/main/docs/docs/api/Dispatcher.md#dispatcherdispatchoptions-handler):
 * one object per attempt and no closure. The response's status and headers go to
 * {@link onUpstreamResponse}, which chooses where the body goes (a {@link Sink}); errors go to
 * {@link upstreamError} before the response and to {@link onMidStreamError} during it. Only the
 * request's current attempt speaks for it.
 */
import type { Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import { responseChunk } from '../observers/dispatch.ts';
import type { RequestContext, UpstreamAttempt } from '../pipeline/context.ts';
import { onMidStreamError, upstreamError } from './failure.ts';
import { onUpstreamResponse } from './response.ts';

/** Response headers as undici parses them: lower-case names, repeated headers as arrays. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** Where a provider's response body goes. */
const enum Sink {
  /** Read and dropped (a retry follows). */
  Discard,
  /** Written to the client as it arrives (passthrough, or an unmapped error). */
  Client,
  /** Written into the provider's stream mapper, whose output goes to the client. */
  Mapper,
  /** Collected whole (up to `server.max-body-size` bytes) for mapping. */
  Collect,
}

/** The undici handler of one attempt. */
export class UpstreamExchange implements UpstreamAttempt, Dispatcher.DispatchHandler {
  readonly ctx: RequestContext;
  controller: Dispatcher.DispatchController | null = null;
  /** Set by {@link abort} before undici started the request: it is aborted as soon as it starts. */
  abortReason: Error | null = null;
  /** The response's status and headers arrived. */
  responded = false;
  private sink: Sink = Sink.Discard;
  /** {@link Sink.Collect}: the pieces so far, their size (bytes), and what gets the whole body. */
  private chunks: Buffer[] | null = null;
  private size = 0;
  private onCollected: ((body: Buffer) => void) | null = null;
  /** {@link Sink.Mapper}: the provider's stream mapper. */
  private mapper: Transform | null = null;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** The body goes to the client as it arrives. */
  toClient(): void {
    this.sink = Sink.Client;
  }

  /** The body goes through `mapper` (whose output the caller sends on). */
  toMapper(mapper: Transform): void {
    this.mapper = mapper;
    this.sink = Sink.Mapper;
  }

  /** The body is collected (pieces past `server.max-body-size` bytes dropped) and handed to `done` whole. */
  collect(done: (body: Buffer) => void): void {
    this.chunks = [];
    this.onCollected = done;
    this.sink = Sink.Collect;
  }

  /** The body is read and dropped, so the connection can be reused (a retry follows). */
  discard(): void {
    this.sink = Sink.Discard;
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
    if (ctx.phase === 'upstream') ctx.deadlineMs = now + ctx.gw.config.server.upstreamTimeoutMs;
    switch (this.sink) {
      case Sink.Client: {
        if (ctx.firstByteMs === null) ctx.firstByteMs = now;
        responseChunk(ctx, chunk);
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
        if (this.size <= ctx.gw.config.server.maxBodyBytes) this.chunks!.push(chunk);
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
