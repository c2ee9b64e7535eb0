/**
 * The bases of the stream translators: a Transform that collects the events it writes while one piece of input is
 * read and pushes them as one string after it (`out`, {@link TranslatorStream.drain}), with the state every
 * translator keeps (open until the source's end or an error, after which input is ignored and, after an error, the
 * output has ended); and, for sources that
 * are server-sent events, the UTF-8 decoding and event splitting (eventsource-parser) around an `onEvent` per event.
 * One instance per response; per piece of input it costs one decode, one parser feed and at most one push.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html (event stream format).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

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
 * still open then (to complete, or fail as truncated).
 */
export abstract class SseTranslatorStream extends TranslatorStream {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;

  constructor() {
    super();
    this.parser = createParser({ onEvent: (event) => this.onEvent(event) });
  }

  /** One server-sent event of the source. */
  protected abstract onEvent(event: EventSourceMessage): void;

  /** The source ended and the translator is still open. */
  protected abstract onEnd(): void;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.state === 'open') this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    this.drain();
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.state === 'open') {
      this.parser.feed(this.decoder.decode());
      this.parser.reset({ consume: true });
    }
    if (this.state === 'open') this.onEnd();
    this.drain();
    callback();
  }
}
