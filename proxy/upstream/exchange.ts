/**
 * One attempt's exchange with the provider, as an undici dispatch handler
 * (https://github.com/nodejs/undici/blob/main/docs/docs/api/Dispatcher.md#dispatcherdispatchoptions-handler):
 * one object per attempt and no closure. The response's status and raw headers go to
 * {@link onUpstreamResponse}, which chooses where the body goes (a {@link Sink}); errors go to
 * {@link upstreamError} before the response and to {@link onMidStreamError} during it. Only the
 * request's current attempt speaks for it.
 *
 * It implements undici's first handler interface (`onConnect`, `onHeaders`, `onData`, `onComplete`,
 * `onError`), which undici 7 still runs as it is, rather than the newer one (`onRequestStart` …),
 * which undici runs through a wrapper that makes two more objects per request and parses every
 * response header into an object the proxy then copies again. A passthrough answer's headers go
 * from undici's raw list to the client's with one pass (./response.ts); measured in bench/README.md
 * (Anthropic's answers carry 20 headers). test/upstream-exchange.test.ts pins how undici calls
 * these hooks, so a release that drops them fails the tests, not the proxy.
 */
import type { Transform } from 'node:stream';
import { GatewayError } from '../errors.ts';
import { responseChunk } from '../observers/dispatch.ts';
import type { RequestContext, UpstreamAttempt } from '../pipeline/context.ts';
import type { ProviderTextRedactor } from '../translators/types.ts';
import { answerTooLarge, answerTooSlow, answerUndecodable, clientStalled, eventTooLarge, onMidStreamError, upstreamError } from './failure.ts';
import { redactAttemptText } from './provider-secrets.ts';
import { onUpstreamResponse } from './response.ts';
import { MAX_STREAM_EVENT_CHARS } from '../translators/shared/translator-stream.ts';
import { cutPrefix, endOfWholeLines, withLastBytes } from './sse-boundary.ts';

/**
 * How many `upstream-timeout`s a collected answer's body may take from its headers to its end. Twice,
 * so a provider that goes silent is always caught first by its silence (`upstream-timeout` after its
 * last bytes: "went silent mid-response"), and the total only stops one still sending.
 */
const COLLECT_TIME_FACTOR = 2;

/** Where a provider's response body goes. */
const enum Sink {
  /** Read and dropped (a retry follows). */
  Discard,
  /** Written to the client as it arrives (passthrough, or an unmapped error). */
  Client,
  /** Written into the provider's stream mapper, whose output goes to the client. */
  Mapper,
  /**
   * Collected whole for mapping: at most `server.max-translated-response-size` bytes (past it the
   * answer is stopped and answered 502), complete within twice `upstream-timeout` of its headers (else 504).
   */
  Collect,
  /** Decoded (the provider's content-encoding) on its way to the mapper or the collected body. */
  Decoder,
}

/** The undici handler of one attempt (undici's first handler interface; see the file's comment). */
export class UpstreamExchange implements UpstreamAttempt, ProviderTextRedactor {
  readonly ctx: RequestContext;
  /** undici's abort of this request, once it started; null before. */
  private abortRequest: ((err: Error) => void) | null = null;
  /** undici's resume of a paused response body. */
  private resumeBody: (() => void) | null = null;
  /** Set by {@link abort} before undici started the request: it is aborted as soon as it starts. */
  abortReason: Error | null = null;
  /** The response's status and headers arrived. */
  responded = false;
  /** The client (or the mapper, or the decoder) is full: undici holds the body until {@link resume}. */
  private paused = false;
  /**
   * The pause waits on the client (its connection, or the mapper writing to it): the provider's
   * silence is not the provider's then, and the deadline measures the client's instead.
   */
  private heldByClient = false;
  /**
   * {@link heldByClient}: when the client's wait runs out (ms, `performance.now()` clock); 0 until a
   * pause sets it. The deadline fields start as the small integer 0, not Infinity (a double V8 would
   * box as a heap number in every exchange).
   */
  private stallDeadlineMs = 0;
  private sink: Sink = Sink.Discard;
  /** {@link Sink.Client}: the body is an event stream (a cut one can still end with an error event). */
  private streamed = false;
  /** {@link Sink.Client} of a text/event-stream: the bytes after its last whole line wait in {@link heldLine}. */
  private sse = false;
  /** The pieces of a line still arriving (SSE passthrough); null when the last bytes sent ended a line. */
  private heldLine: Buffer[] | null = null;
  private heldBytes = 0;
  /** The last three bytes sent to the client of an SSE passthrough (-1: none yet), for {@link errorEventPrefix}. */
  private lastBytes = -1;
  /** {@link Sink.Collect}: the pieces so far, their size (bytes), and what gets the whole body. */
  private chunks: Buffer[] | null = null;
  private size = 0;
  private onCollected: ((body: Buffer) => void) | null = null;
  /** {@link Sink.Collect}: most bytes kept (`server.max-translated-response-size`), and when the whole body is due (ms; 0: not collecting). */
  private collectLimit = 0;
  private collectDeadlineMs = 0;
  /** {@link Sink.Mapper}: the provider's stream mapper. */
  private mapper: Transform | null = null;
  /** {@link Sink.Decoder}: the zlib stream in front of the mapper or the collected body, and the coding it reads. */
  private decoder: Transform | null = null;
  private encoding = '';

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /**
   * The body goes to the client as it arrives; `streamed`: it is an event stream; `sse`: a text/event-stream,
   * sent on up to its last whole line (./sse-boundary.ts), the rest when that line ends or the answer does.
   */
  toClient(streamed: boolean, sse = false): void {
    this.streamed = streamed;
    this.sse = sse;
    this.sink = Sink.Client;
  }

  /** The body goes through `mapper` (whose output the caller sends on). */
  toMapper(mapper: Transform): void {
    this.mapper = mapper;
    this.sink = Sink.Mapper;
  }

  /**
   * The body is collected and handed to `done` whole. It is bounded in size
   * (`server.max-translated-response-size`) and in time ({@link COLLECT_TIME_FACTOR} ×
   * `upstream-timeout` from its headers): the client gets nothing until it is complete, so a
   * provider trickling bytes would hold it for as long as it trickles. Past either bound the
   * provider's answer is stopped and the client answered 502 `upstream_response_too_large` / 504
   * `upstream_timeout`.
   */
  collect(done: (body: Buffer) => void): void {
    const ctx = this.ctx;
    const server = ctx.gw.config.server;
    this.chunks = [];
    this.onCollected = done;
    this.sink = Sink.Collect;
    this.collectLimit = server.maxTranslatedResponseBytes;
    this.collectDeadlineMs = (ctx.responseAtMs ?? performance.now()) + COLLECT_TIME_FACTOR * server.upstreamTimeoutMs;
  }

  /**
   * A provider's text less this attempt's credentials (./provider-secrets.ts `redactAttemptText`): the
   * stream mapper's `call.redactor` (./mapped.ts), asked only when the mapper fails with the provider's
   * error text. The exchange serves as the redactor so that a mapped stream allocates nothing for it.
   */
  redactProviderText(text: string): string {
    const ctx = this.ctx;
    return redactAttemptText(text, ctx.call, ctx.upstream);
  }

  /** The body is read and dropped, so the connection can be reused (a retry follows). */
  discard(): void {
    this.sink = Sink.Discard;
  }

  /**
   * Stops the attempt (the client left, or its deadline passed; only abnormal ends call it). The
   * decoder and mapper are released here too: once undici called `onComplete` its abort does nothing
   * and `onError` never runs, so a mapper paused on a client that left would live until garbage collection.
   */
  abort(reason: Error): void {
    this.release();
    if (this.abortRequest) this.abortRequest(reason);
    else this.abortReason = reason;
  }

  /** Lets undici go on reading the body (a `drain` listener's target). */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    // The provider was held for the client: its silence counts from now, not from its last bytes.
    const ctx = this.ctx;
    if (this.heldByClient && ctx.phase === 'upstream' && ctx.exchange === this) ctx.deadlineMs = performance.now() + ctx.gw.config.server.upstreamTimeoutMs;
    this.resumeBody?.();
  }

  /** undici: the request is about to be sent; `abort` stops it. */
  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    if (this.abortReason) abort(this.abortReason);
  }

  /**
   * undici: the status and headers arrived (`rawHeaders`: name, value, name, value … as sent).
   * @returns false to hold the body until `resume` is called.
   */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.responded = true;
    this.resumeBody = resume;
    if (this.ctx.exchange !== this || this.ctx.finished) {
      this.abortRequest!(new Error('superseded'));
      return false;
    }
    onUpstreamResponse(this, statusCode, rawHeaders);
    return !this.paused;
  }

  /** undici: a piece of the body. @returns false to hold the rest until `resume` is called. */
  onData(chunk: Buffer): boolean {
    const ctx = this.ctx;
    const now = performance.now();
    // The provider sent a piece of its answer: its silence timeout starts again.
    if (ctx.phase === 'upstream') ctx.deadlineMs = now + ctx.gw.config.server.upstreamTimeoutMs;
    switch (this.sink) {
      case Sink.Client: {
        if (ctx.firstByteMs === null) ctx.firstByteMs = now;
        responseChunk(ctx, chunk);
        if (this.sse) this.sendLines(chunk);
        else if (!ctx.res.write(chunk)) this.pauseUntilDrain(ctx.res);
        break;
      }
      case Sink.Mapper: {
        const mapper = this.mapper!;
        if (mapper.destroyed) break;
        if (!mapper.write(chunk)) this.pauseUntilDrain(mapper);
        break;
      }
      case Sink.Collect:
        if (ctx.deadlineMs > this.collectDeadlineMs) ctx.deadlineMs = this.collectDeadlineMs;
        this.keep(chunk);
        break;
      case Sink.Decoder: {
        if (this.collectDeadlineMs !== 0 && ctx.deadlineMs > this.collectDeadlineMs) ctx.deadlineMs = this.collectDeadlineMs;
        const decoder = this.decoder!;
        // The mapper failed (it ended the client's answer): nothing reads the decoder's output any more.
        if (this.mapper !== null && this.mapper.destroyed) this.release();
        if (decoder.destroyed) break;
        if (!decoder.write(chunk)) this.pauseUntilDrain(decoder);
        break;
      }
      default:
    }
    return !this.paused;
  }

  /**
   * Holds the body until `target` drains (rare: a slow client, or the mapper or decoder behind it).
   * Unless the body is being collected, the wait is the client's: the provider is not read, so its
   * silence is not measured; the deadline becomes the client's (`server.send-timeout` from the
   * pause; {@link onError}) until {@link resume}.
   */
  private pauseUntilDrain(target: NodeJS.EventEmitter): void {
    const ctx = this.ctx;
    if (!this.paused) {
      this.paused = true;
      this.heldByClient = this.collectDeadlineMs === 0;
      this.stallDeadlineMs = performance.now() + ctx.gw.config.server.sendTimeoutMs;
      target.once('drain', () => this.resume());
    }
    // A piece undici delivered after the pause moved the deadline to the provider's: put the client's back.
    if (this.heldByClient && ctx.phase === 'upstream') ctx.deadlineMs = this.stallDeadlineMs;
  }

  /** {@link Sink.Collect}: keeps a piece of the body, or stops the answer once it outgrows the limit. */
  private keep(piece: Buffer): void {
    if (this.chunks === null) return;
    this.size += piece.length;
    if (this.size <= this.collectLimit) this.chunks.push(piece);
    else this.stopReading(answerTooLarge(this.ctx, this.collectLimit));
  }

  /** The collected body is complete: handed over whole. */
  private collected(): void {
    const chunks = this.chunks;
    if (chunks === null) return;
    this.chunks = null;
    this.onCollected!(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  }

  /**
   * Stops reading the provider's answer and answers `err` (an error event if the stream started,
   * else the error): what still arrives is dropped and undici's request aborted (its `onError` then
   * ignored). Also the graceful stop's, for a stream still running at its deadline (../server/shutdown.ts).
   */
  stopReading(err: GatewayError): void {
    if (this.sink === Sink.Discard || this.ctx.exchange !== this) return;
    this.sink = Sink.Discard;
    this.chunks = null;
    this.halt(err);
  }

  /** {@link stopReading} and {@link refuse}: the request's deadline cleared, the provider's answer aborted, `err` answered. */
  private halt(err: GatewayError): void {
    const ctx = this.ctx;
    if (ctx.phase === 'upstream') {
      ctx.phase = 'none';
      ctx.deadlineMs = Infinity;
    }
    this.release();
    this.abortRequest?.(new Error(err.message));
    onMidStreamError(ctx, true, err);
  }

  /**
   * The stream mapper failed (./mapped.ts ends the client's answer with it): the provider's answer is
   * no longer read and undici's request is aborted, so its tokens stop and a body paused on the
   * mapper or decoder (whose drain will never come) is not left paused once finish untracks its
   * deadline. The abort's `onError` is then ignored (the sink is discarded). A mapper that failed
   * with the gateway's own error (a provider's event past the translator's bound,
   * ../translators/shared/translator-stream.ts) has it answered as the client's error event first.
   */
  mapperFailed(): void {
    if (this.sink === Sink.Discard || this.ctx.exchange !== this) return;
    const cause = this.mapper?.errored;
    if (cause instanceof GatewayError) return this.stopReading(cause);
    this.sink = Sink.Discard;
    const ctx = this.ctx;
    if (ctx.phase === 'upstream') {
      ctx.phase = 'none';
      ctx.deadlineMs = Infinity;
    }
    this.release();
    this.abortRequest?.(new Error('the stream mapper failed'));
  }

  /**
   * The exchange ended abnormally ({@link halt}, {@link abort}, {@link onError}: the client left, the provider's
   * connection broke or went silent): the decoder and the mapper are destroyed at once, so the zlib
   * handle and what either buffered go now rather than at garbage collection, and a mapper waiting
   * for the rest of the stream is not left open. Two null checks when there are neither.
   */
  private release(): void {
    if (this.decoder !== null) this.decoder.destroy();
    if (this.mapper !== null) this.mapper.destroy();
  }

  /**
   * The answer is encoded (./content-decoding.ts): `decoder` (reading `encoding`) goes in front of the
   * mapper or the collected body ({@link toMapper} / {@link collect} chose which, just before). Bytes
   * that do not decode are answered 502 (an error event once the stream started). ./response.ts calls
   * it only for an answer the gateway reads; a coding it cannot read was refused before ({@link refuse}).
   */
  decodeWith(decoder: Transform, encoding: string): void {
    this.encoding = encoding;
    this.decoder = decoder;
    decoder.on('error', (err: Error) => this.stopReading(answerUndecodable(this.ctx, this.encoding, err.message)));
    if (this.sink === Sink.Mapper) decoder.pipe(this.mapper!);
    else {
      decoder.on('data', (piece: Buffer) => this.keep(piece));
      decoder.on('end', () => this.collected());
    }
    this.sink = Sink.Decoder;
  }

  /**
   * The answer cannot be taken, decided from its head before anything reached the client (a
   * content-encoding the gateway cannot read): the provider's answer is stopped and `err` answered
   * as the client's error, in its dialect.
   */
  refuse(err: GatewayError): void {
    this.sink = Sink.Discard;
    this.halt(err);
  }

  /** undici: the body ended. */
  onComplete(): void {
    const ctx = this.ctx;
    if (ctx.exchange === this && ctx.phase === 'upstream') {
      ctx.phase = 'none';
      ctx.deadlineMs = Infinity;
    }
    switch (this.sink) {
      case Sink.Client:
        // The provider ended in the middle of a line: its bytes still go on as they came.
        if (this.heldLine !== null) for (const piece of this.heldLine) ctx.res.write(piece);
        this.heldLine = null;
        ctx.res.end();
        return;
      case Sink.Mapper:
        if (!this.mapper!.destroyed) this.mapper!.end();
        return;
      case Sink.Collect:
        this.collected();
        return;
      case Sink.Decoder:
        // The decoder ends the mapper (pipe) or hands the collected body over once it has flushed.
        if (!this.decoder!.destroyed) this.decoder!.end();
        return;
      default:
    }
  }

  /**
   * Sends an SSE passthrough's `chunk` (after what waited of its first line) up to its last line end
   * (./sse-boundary.ts); the rest waits in {@link heldLine}. No copy: the waiting pieces and the chunk go as separate
   * writes in one corked batch. A line outgrowing {@link MAX_STREAM_EVENT_CHARS} bytes ends the answer (502
   * `upstream_response_too_large`, the provider stopped): an SSE client acts on nothing before it ends.
   */
  private sendLines(chunk: Buffer): void {
    const res = this.ctx.res;
    const end = endOfWholeLines(chunk);
    if (end === 0) return this.holdLine(chunk);
    const whole = end === chunk.length ? chunk : chunk.subarray(0, end);
    let flowing: boolean;
    const held = this.heldLine;
    if (held === null) flowing = res.write(whole);
    else {
      res.cork();
      for (const piece of held) res.write(piece);
      flowing = res.write(whole);
      res.uncork();
      this.heldLine = null;
      this.heldBytes = 0;
    }
    this.lastBytes = withLastBytes(this.lastBytes, chunk, end);
    if (end < chunk.length) this.holdLine(chunk.subarray(end));
    if (!flowing) this.pauseUntilDrain(res);
  }

  /** Keeps `piece` of a line still arriving (see {@link sendLines}), within the bound. */
  private holdLine(piece: Buffer): void {
    this.heldBytes += piece.length;
    if (this.heldBytes > MAX_STREAM_EVENT_CHARS) {
      this.heldLine = null;
      this.heldBytes = 0;
      return this.stopReading(eventTooLarge(this.ctx, MAX_STREAM_EVENT_CHARS));
    }
    if (this.heldLine === null) this.heldLine = [piece];
    else this.heldLine.push(piece);
  }

  /** {@link UpstreamAttempt.errorEventPrefix}: for an SSE passthrough, what closes the event its last lines began. */
  errorEventPrefix(): string {
    return this.sse ? cutPrefix(this.lastBytes) : '';
  }


  /** undici: the request failed (before the response, or during its body). */
  onError(err: Error): void {
    const ctx = this.ctx;
    this.release();
    // A discarded answer (a retry follows) or an earlier attempt no longer speaks for the request.
    if (ctx.exchange !== this || (this.responded && this.sink === Sink.Discard)) return;
    if (!this.responded) return upstreamError(ctx, err);
    // The deadline passed while the client held the provider's answer: the client stalled, not the provider.
    if (ctx.timedOut && this.paused && this.heldByClient) return clientStalled(ctx);
    // Only a stream can still be ended with an error event: a whole body passed on is cut instead.
    onMidStreamError(ctx, this.sink !== Sink.Client || this.streamed, ctx.timedOut && this.collectDeadlineMs !== 0 && performance.now() >= this.collectDeadlineMs ? answerTooSlow(ctx, COLLECT_TIME_FACTOR * ctx.gw.config.server.upstreamTimeoutMs) : null);
  }
}
