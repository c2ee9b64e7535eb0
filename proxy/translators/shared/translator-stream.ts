/**
 * The bases of the stream translators: a Transform that collects the events it writes while one piece of input is
 * read and pushes them as one string after it (`out`, {@link TranslatorStream.drain}), with the state every
 * translator keeps (open until the source's end or an error, after which input is ignored and, after an error, the
 * output has ended); and, for sources that
 * are server-sent events, the UTF-8 decoding and event splitting (eventsource-parser) around an `onEvent` per event,
 * bounded: an event longer than {@link MAX_STREAM_EVENT_CHARS} fails the translation (see {@link SseTranslatorStream}).
 * One instance per response; per piece of input it costs one decode, one parser feed and at most one push.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html (event stream format).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { createParser, ParseError, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { GatewayError } from '../../errors.ts';

/**
 * The longest server-sent event the gateway parses or holds (characters of its unfinished line and data, as
 * eventsource-parser counts them; a UTF-16 string, so at most twice as many bytes held), and the longest line of a
 * passed-through stream it holds (bytes, ../../upstream/sse-boundary.ts): 16 Mi. No API's stream event comes near it
 * (a Responses `response.completed` carrying the whole output, images included, is a few MB), so an event past it is
 * a broken or hostile provider; without a bound its parser would buffer it for as long as bytes keep coming (no
 * timeout applies then), until the process ran out of heap. Per stream: one stream then holds at most a few times
 * this (the exchange's line, the recorder's and the translator's parsers).
 */
export const MAX_STREAM_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * The error a stream translator fails with when one event of the provider outgrew {@link MAX_STREAM_EVENT_CHARS}:
 * 502 `upstream_response_too_large`. ../../upstream/exchange.ts `mapperFailed` answers it as the client's error event
 * and stops the provider.
 */
export function streamEventTooLarge(): GatewayError {
  return new GatewayError(
    502,
    `the provider sent a stream event longer than ${MAX_STREAM_EVENT_CHARS} characters, the most the gateway reads of one event`,
    'server_error',
    'upstream_response_too_large',
  );
}

/** A stream translator's output buffer and state (see the module comment). */
export abstract class TranslatorStream extends Transform {
  /** `open` until the translator completed (`done`) or ended the output with an error (`failed`). */
  protected state: 'open' | 'done' | 'failed' = 'open';
  /** Output written since the last push. */
  protected out = '';

  /**
   * Pushes the output collected since the last push, when there is any. A translator that failed has written its
   * last event: its output ends here, though the provider may still be sending (the reader of the output stops
   * the provider when the output ends before the input, ../../upstream/mapped.ts); later input is ignored.
   */
  drain(): void {
    if (this.out) {
      this.push(this.out);
      this.out = '';
    }
    if (this.state === 'failed' && !this.readableEnded) this.push(null);
  }
}

/**
 * A stream translator whose source is server-sent events: each piece of input is decoded (UTF-8, split characters
 * held over) and parsed while the translator is open, each whole event handed to {@link SseTranslatorStream.onEvent};
 * at the end of input the last event is parsed, and {@link SseTranslatorStream.onEnd} runs when the translator is
 * still open then (to complete, or fail as truncated). An event that outgrows {@link MAX_STREAM_EVENT_CHARS} before it
 * ends (the parser's `maxBufferSize`: it then drops what it held) fails the translator: the events translated so far
 * are pushed, then the stream errors with {@link streamEventTooLarge}, and later input is ignored.
 */
export abstract class SseTranslatorStream extends TranslatorStream {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  /** An event outgrew the bound (set by the parser's `onError`, during a feed). */
  private oversized = false;

  constructor() {
    super();
    // One callback for events and parse errors: no second closure per response.
    const parsed = (item: EventSourceMessage | ParseError): void => {
      if (!(item instanceof ParseError)) this.onEvent(item);
      else if (item.type === 'max-buffer-size-exceeded') this.overflowed();
    };
    this.parser = createParser({ onEvent: parsed, onError: parsed, maxBufferSize: MAX_STREAM_EVENT_CHARS });
  }

  /** The parser dropped an event past the bound (it is terminated now): the translator takes no more input. */
  private overflowed(): void {
    this.oversized = true;
    this.state = 'failed';
  }

  /**
   * Pushes what was translated before the oversized event (with what {@link onFailing} writes), then errors the
   * stream (see the class comment).
   */
  private failOversized(callback: TransformCallback): void {
    this.onFailing();
    if (this.out) {
      this.push(this.out);
      this.out = '';
    }
    callback(streamEventTooLarge());
  }

  /**
   * The translation is failing (an event past the bound, whose error event ../../upstream/exchange.ts writes): a
   * translator writes here output it held for later, so it reaches the client before the error. Nothing by default.
   */
  protected onFailing(): void {}

  /** One server-sent event of the source. */
  protected abstract onEvent(event: EventSourceMessage): void;

  /** The source ended and the translator is still open. */
  protected abstract onEnd(): void;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.state === 'open') {
      this.parser.feed(this.decoder.decode(chunk, { stream: true }));
      if (this.oversized) return this.failOversized(callback);
    }
    this.drain();
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.state === 'open') {
      this.parser.feed(this.decoder.decode());
      if (this.oversized) return this.failOversized(callback);
      this.parser.reset({ consume: true });
    }
    if (this.state === 'open') this.onEnd();
    this.drain();
    callback();
  }
}
