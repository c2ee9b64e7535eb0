/**
 * Reads a copy of the response as it passes to the client, for the log record. A non-streamed
 * body is kept (up to a byte cap): a 2xx body is handed over as its bytes, unparsed (admin parses
 * it, and reads its usage, off the request path); another status's body is parsed here, since its
 * text is the record's error. An SSE stream is parsed event by event
 * (eventsource-parser) and folded into one body by the endpoint kind (chat: one `chat.completion`
 * with content, reasoning, tool calls, finish reasons, usage; Messages: one `message` with its
 * content blocks, stop reason and the usage of `message_start` and `message_delta` merged), or kept
 * as the last error event.
 * Where usage is found is the kind's to say ({@link ResponseReading}). Memory is bounded by the cap, and a stream's
 * parser by {@link maxEventChars}: an event still unfinished past it (a provider sending one endless event) is
 * dropped with the rest of the stream, the record marked truncated, so the parser does not buffer it for as long
 * as bytes come.
 * An answer the provider encoded (`content-encoding`, passed to the client as it is) is kept as
 * received and decoded when the recording finishes ({@link ResponseRecorder.decodeAs}).
 */
import { createParser, ParseError, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { ChatUsage } from '../../shared/chat.ts';
import { decodeSync } from '../upstream/content-decoding.ts';
import { chatCompletions } from '../endpoints/chat-completions.ts';
import type { EndpointKind, Json, ResponseReading, TextBudget } from '../endpoints/types.ts';
import { MAX_STREAM_EVENT_CHARS } from '../translators/shared/translator-stream.ts';

/**
 * The longest stream event a recorder parses (characters): the cap, or the gateway's bound of one event when that is
 * larger, so that an event the client gets whole (a Responses `response.completed` carrying the whole output, past a
 * small cap) still gives its usage; the exchange ends a passed-through stream at its own bound anyway.
 */
function maxEventChars(capBytes: number): number {
  return Math.max(capBytes, MAX_STREAM_EVENT_CHARS);
}

/** What a stream's parser becomes once an event outgrew {@link maxEventChars}: the rest of the stream is not read. */
const STOPPED: EventSourceParser = { feed() {}, reset() {} };

/** What the recorder learned from a response. */
export interface RecordedResponse {
  /** The JSON body, or a stream folded into one body by its endpoint kind (chat: a `chat.completion`); null when unreadable. */
  body: unknown;
  usage: ChatUsage | null;
  /** An error the provider sent (error body of a non-2xx, or an error event mid-stream). */
  error: string | null;
  truncated: boolean;
  /**
   * A non-streamed 2xx body whole, as the bytes received, not parsed (`body` and `usage` are null
   * then: admin reads them from these bytes); else null.
   */
  raw: Buffer | null;
}

/** Collects a response for the log. Feed it every chunk with {@link push}; call {@link finish} once. */
export class ResponseRecorder implements TextBudget {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private truncated = false;
  private parser: EventSourceParser | null = null;
  private assembled: Json | null = null;
  private contentBytes = 0;
  private usage: ChatUsage | null = null;
  private streamError: string | null = null;
  /** Decodes the stream across chunks (a multi-byte character may be split between two); only for a stream. */
  private readonly decoder: TextDecoder | null = null;
  private readonly reading: ResponseReading;
  /** The `data` of the event that closes the stream (OpenAI's `[DONE]`): not a chunk. */
  private readonly doneData: string | null;
  /** The newest event of the kind's `supersededEvents` since the last final one, unparsed; else null. */
  private superseded: string | null = null;
  /** {@link decodeAs}: the answer's content-encoding, and a stream's parser set aside until the bytes are decoded. */
  private encoding: string | null = null;
  private encodedStreamParser: EventSourceParser | null = null;

  /**
   * @param streamed true for an SSE response (`text/event-stream`).
   * @param capBytes most bytes kept of a body or of assembled stream text.
   * @param kind the endpoint kind answered (chat completions by default): where its usage is
   *   found, how its stream chunks fold into one body, which event closes its stream.
   */
  constructor(
    private readonly streamed: boolean,
    private readonly capBytes: number,
    kind: EndpointKind = chatCompletions,
  ) {
    this.reading = kind.reading;
    this.doneData = kind.framing?.doneData ?? null;
    if (streamed) {
      // One callback for events and parse errors: no second closure per response.
      const parsed = (item: EventSourceMessage | ParseError): void => {
        if (!(item instanceof ParseError)) this.onEvent(item);
        else if (item.type === 'max-buffer-size-exceeded') this.stopParsing();
      };
      this.parser = createParser({ onEvent: parsed, onError: parsed, maxBufferSize: maxEventChars(capBytes) });
      this.decoder = new TextDecoder('utf-8');
    }
  }

  /** Feeds one chunk of the response as it reached the client. */
  push(chunk: Buffer): void {
    const parser = this.parser;
    if (parser !== null) {
      if (parser !== STOPPED) parser.feed(this.decoder!.decode(chunk, { stream: true }));
      return;
    }
    if (this.bytes + chunk.length > this.capBytes) {
      this.truncated = true;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /**
   * The answer comes encoded as `encoding` (gzip, deflate, br): its bytes are kept as received, up
   * to the cap, and decoded (into at most the cap) when the recording finishes. A zlib stream would
   * hand its output over asynchronously, after the record is built; a coding the gateway does not
   * read leaves the body unread (`{"content_encoding": …}`). Call it before the first {@link push}.
   */
  decodeAs(encoding: string): void {
    this.encoding = encoding;
    // push() then keeps the bytes as it keeps a body that is not a stream.
    this.encodedStreamParser = this.parser;
    this.parser = null;
  }

  /**
   * Decodes what {@link decodeAs} kept (a stream's decoded text goes to its parser).
   * @returns null, or what is logged instead of a body that does not decode (or decodes past the cap).
   */
  private decodeKept(): Json | null {
    const encoding = this.encoding!;
    this.encoding = null;
    const kept = Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    this.bytes = 0;
    let plain: Buffer;
    try {
      plain = decodeSync(encoding, kept, this.capBytes);
    } catch (err) {
      // Over the cap (ERR_BUFFER_TOO_LARGE), or bytes that do not decode: the copy is kept as the note.
      this.truncated ||= (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      return { content_encoding: encoding, bytes: kept.length, error: (err as Error).message };
    }
    this.parser = this.encodedStreamParser;
    if (this.parser) this.parser.feed(this.decoder!.decode(plain, { stream: true }));
    else if (plain.length > 0) {
      this.chunks.push(plain);
      this.bytes = plain.length;
    }
    return null;
  }

  /**
   * An event outgrew {@link maxEventChars} (the parser dropped what it held and is terminated): the rest of the
   * stream is not read, what was folded so far is kept, and the record is marked truncated.
   */
  private stopParsing(): void {
    this.truncated = true;
    this.parser = STOPPED;
  }

  private onEvent(e: EventSourceMessage): void {
    const data = e.data;
    if (data === this.doneData) return;
    const name = e.event;
    if (name !== undefined) {
      // A lifecycle event a final one will supersede is kept as text; parsed only if none comes.
      if (this.reading.supersededEvents?.has(name)) {
        this.superseded = data;
        return;
      }
      if (this.reading.finalEvents?.has(name)) this.superseded = null;
    }
    this.fold(data, name);
  }

  /** Parses one event's data and folds it in: an error event, usage, the kind's fold. */
  private fold(data: string, name: string | undefined): void {
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      return;
    }
    if (name === 'error' || chunk.error) {
      const err = chunk.error ?? chunk;
      this.streamError = typeof err === 'string' ? err : JSON.stringify(err);
      return;
    }
    const usage = this.reading.usageInChunk(chunk);
    if (usage) {
      const merge = this.reading.mergeUsage;
      this.usage = (merge ? merge(this.usage, usage) : usage) as ChatUsage;
    }
    const fold = this.reading.foldChunk;
    if (fold) this.assembled = fold(this.assembled, chunk, this);
  }

  /**
   * True when the stream carried an error event (its text is the record's error). A passed-through stream reaches
   * the client unscanned, so such an error may repeat the attempt's credentials: the log redacts it then
   * (./log-record.ts), and only then.
   */
  get hadStreamError(): boolean {
    return this.streamError !== null;
  }

  /** {@link TextBudget}: grows assembled stream text up to the cap, then marks the record truncated. */
  append(current: unknown, piece: string): string {
    if (this.contentBytes + piece.length > this.capBytes) {
      this.truncated = true;
      return (current as string) ?? '';
    }
    this.contentBytes += piece.length;
    return ((current as string | null) ?? '') + piece;
  }

  /**
   * Finishes the recording.
   * @param status the HTTP status of the response (non-2xx bodies are kept as the error).
   * @param cut true when the client left before the response ended: what the kind's fold kept apart of a stream
   *   (`ResponseReading.closeCutBody`) goes into the body.
   */
  finish(status: number, cut = false): RecordedResponse {
    if (this.encoding !== null) {
      const unread = this.decodeKept();
      if (unread !== null) return { body: unread, usage: null, error: status >= 400 ? `status ${status}` : null, truncated: this.truncated, raw: null };
    }
    if (this.parser) {
      this.parser.feed(this.decoder!.decode());
      if (this.superseded !== null) this.fold(this.superseded, undefined);
      this.superseded = null;
      const body = this.assembled;
      if (body && cut) this.reading.closeCutBody?.(body);
      if (body && this.usage) body.usage = this.usage;
      return { body, usage: this.usage, error: this.streamError, truncated: this.truncated, raw: null };
    }
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    if (status < 400 && !this.truncated && bytes.length > 0) return { body: null, usage: null, error: null, truncated: false, raw: bytes };
    const text = bytes.toString('utf8');
    let body: unknown = null;
    if (!this.truncated && text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = { raw: text };
      }
    } else if (this.truncated) {
      body = { truncated: true, bytes_kept: this.bytes };
    }
    const usage = body && typeof body === 'object' ? ((this.reading.usageInBody(body as Json) as ChatUsage | null) ?? null) : null;
    const error = status >= 400 ? (text || `status ${status}`).slice(0, 64 * 1024) : null;
    return { body, usage, error, truncated: this.truncated, raw: null };
  }
}
