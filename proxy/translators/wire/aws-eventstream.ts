/**
 * The AWS event-stream framing (`application/vnd.amazon.eventstream`) Bedrock streams in: binary frames of
 * `[total length u32][headers length u32][prelude CRC][headers][payload][message CRC]`, decoded by
 * `@smithy/eventstream-codec`. The codec (with `@smithy/util-utf8`) is imported on first use, not when this
 * module is: a gateway that never streams from Bedrock never loads it.
 * Source: https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream.
 */
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import { loadOnce } from '../../../shared/lazy.ts';
import { isRecord } from '../shared/values.ts';

/** Frames larger than this (bytes) are treated as a corrupt stream. */
export const MAX_EVENTSTREAM_FRAME_BYTES = 16 * 1024 * 1024;

/** The smallest possible frame (bytes): a prelude (12) and a message CRC (4). */
export const MIN_EVENTSTREAM_FRAME_BYTES = 16;

/** What a stream translator needs from @smithy: the event-stream codec and the UTF-8 helpers it takes. */
export interface EventStreamLib {
  EventStreamCodec: typeof EventStreamCodec;
  fromUtf8: (input: string) => Uint8Array;
  toUtf8: (input: Uint8Array | string) => string;
}

/** A frame's decoded headers, by name. */
export type EventStreamHeaders = Record<string, { type: string; value: unknown }>;

let eventStreamLib: EventStreamLib | null = null;

/** The codec modules when already loaded, else null (a stream translator then waits for {@link loadEventStream}). */
export function loadedEventStream(): EventStreamLib | null {
  return eventStreamLib;
}

/**
 * Imports `@smithy/eventstream-codec` and `@smithy/util-utf8` once. The Converse translator starts this when it
 * translates a streaming request, so the codec is in memory before the response arrives; a stream translator
 * whose first bytes arrive earlier waits for it.
 * @returns the loaded modules (the same object on every call); rejects when the import fails (the next call retries).
 */
export function loadEventStream(): Promise<EventStreamLib> {
  if (eventStreamLib) return Promise.resolve(eventStreamLib);
  return importEventStream();
}

const importEventStream = loadOnce(() =>
  Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]).then(
    ([codec, utf8]) => (eventStreamLib = { EventStreamCodec: codec.EventStreamCodec, fromUtf8: utf8.fromUtf8, toUtf8: utf8.toUtf8 }),
  ),
);

/** A string header's value (`:message-type`, `:event-type`, `:exception-type`, ...); undefined when absent or not a string. */
export function headerString(headers: EventStreamHeaders, name: string): string | undefined {
  const header = headers[name];
  return header && typeof header.value === 'string' ? header.value : undefined;
}

/** The message a stream translator fails with when a frame's length, CRCs or JSON payload are not valid. */
export const MALFORMED_FRAME = 'bedrock sent a malformed event-stream frame';

/**
 * What an {@link EventStreamReader} hands decoded frames to: a stream translator (the Transform itself, so that no
 * closure is made per piece of input).
 */
export interface EventStreamSink {
  /** False once the translator has finished or failed: frames after that are not decoded. */
  readonly acceptsFrames: boolean;
  /** One whole frame: its headers, and its payload parsed as JSON (`{}` when empty or not an object). */
  onFrame(headers: EventStreamHeaders, payload: Record<string, unknown>): void;
  /** The stream cannot be read on (a corrupt frame, or the codec failed to load); `message` says why. */
  onUnreadable(message: string): void;
  /** Pushes what the translator has written so far (called once per piece of input). */
  drain(): void;
}

/**
 * The framing side of a Bedrock stream translator, one per response: input pieces in, whole decoded frames out to
 * an {@link EventStreamSink}. Bytes wait in `pending` until a whole frame (length = its first 4 bytes, big-endian)
 * is there, so frames may be split anywhere across pieces; a piece that holds only whole frames is not copied. The
 * codec is the already loaded one when there is one, else loaded when the first piece arrives (the translator of a
 * streaming request normally starts loading it, see {@link loadEventStream}); pieces wait for it, since the
 * Transform holds further input until `write` calls back.
 */
export class EventStreamReader {
  private lib: EventStreamLib | null = loadedEventStream();
  private codec: EventStreamCodec | null = this.lib ? new this.lib.EventStreamCodec(this.lib.toUtf8, this.lib.fromUtf8) : null;
  private pending: Buffer = Buffer.alloc(0);

  /** Bytes held that do not yet make a whole frame. */
  get buffered(): number {
    return this.pending.length;
  }

  /**
   * Decodes the whole frames of `chunk` (with the bytes held before it) into `sink`, then `sink.drain()` and
   * `callback()`. When the codec fails to load, `sink.onUnreadable` is told `bedrock stream cannot be decoded: …`.
   */
  write(chunk: Buffer, sink: EventStreamSink, callback: () => void): void {
    if (this.codec || !sink.acceptsFrames) {
      this.feed(chunk, sink);
      sink.drain();
      callback();
      return;
    }
    loadEventStream().then(
      (loaded) => {
        this.lib = loaded;
        this.codec = new loaded.EventStreamCodec(loaded.toUtf8, loaded.fromUtf8);
        this.feed(chunk, sink);
        sink.drain();
        callback();
      },
      (err: unknown) => {
        sink.onUnreadable(`bedrock stream cannot be decoded: ${(err as Error)?.message ?? String(err)}`);
        sink.drain();
        callback();
      },
    );
  }

  /** Splits whole frames off the pending bytes and hands each to `sink` while it accepts them; a bad one ends it. */
  private feed(chunk: Buffer, sink: EventStreamSink): void {
    if (!sink.acceptsFrames) return;
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (sink.acceptsFrames && this.pending.length >= 4) {
      const total = this.pending.readUInt32BE(0);
      if (total < MIN_EVENTSTREAM_FRAME_BYTES || total > MAX_EVENTSTREAM_FRAME_BYTES) {
        sink.onUnreadable(MALFORMED_FRAME);
        break;
      }
      if (this.pending.length < total) break;
      const frame = this.pending.subarray(0, total);
      this.pending = this.pending.subarray(total);
      this.decode(frame, sink);
    }
    if (!sink.acceptsFrames) this.pending = Buffer.alloc(0);
  }

  private decode(frame: Buffer, sink: EventStreamSink): void {
    let headers: EventStreamHeaders;
    let payload: unknown;
    try {
      const message = this.codec!.decode(frame);
      headers = message.headers as EventStreamHeaders;
      payload = message.body.byteLength ? JSON.parse(this.lib!.toUtf8(message.body)) : {};
    } catch {
      sink.onUnreadable(MALFORMED_FRAME);
      return;
    }
    sink.onFrame(headers, isRecord(payload) ? payload : {});
  }
}
