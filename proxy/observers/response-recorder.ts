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
 * A non-streamed body past the cap is logged as a note (`{truncated, bytes_kept}`), but its usage, near the end of
 * every dialect's JSON, is still read: once the cap is passed the answer's last {@link TAIL_BYTES} are kept, and its
 * top-level `usage` and `model` found there (or the model in the kept head), so the row bills the provider's counts.
 * An answer the provider encoded (`content-encoding`, passed to the client as it is) is kept as
 * received and decoded when the recording finishes ({@link ResponseRecorder.decodeAs}).
 */
import { createParser, ParseError, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { ChatUsage } from '../../shared/chat.ts';
import { lastTopLevelMember, scanJson } from '../json-scan.ts';
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

/**
 * The last bytes of a non-streamed answer kept once it passed the cap (bytes): what follows the top-level `usage`
 * fits (a chat completion's `system_fingerprint`, a Responses object's `user` and `metadata`, at most ~10 KB).
 */
const TAIL_BYTES = 16 * 1024;

/** Deepest nesting {@link scanJson} follows in a cut answer's head, looking for its model (a deeper one is not read). */
const HEAD_SCAN_DEPTH = 256;

/** The last {@link TAIL_BYTES} bytes pushed into it, in one buffer allocated once. */
class TailWindow {
  private readonly buf = Buffer.allocUnsafe(TAIL_BYTES);
  private length = 0;

  /** Appends `chunk`, dropping the oldest bytes past {@link TAIL_BYTES}. */
  push(chunk: Buffer): void {
    const size = this.buf.length;
    if (chunk.length >= size) {
      chunk.copy(this.buf, 0, chunk.length - size);
      this.length = size;
      return;
    }
    const drop = this.length + chunk.length - size;
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.length);
      this.length -= drop;
    }
    chunk.copy(this.buf, this.length);
    this.length += chunk.length;
  }

  /** Pushes the last {@link TAIL_BYTES} of `chunks`, in order (only those are copied). */
  pushLast(chunks: readonly Buffer[]): void {
    let first = chunks.length;
    for (let bytes = 0; first > 0 && bytes < TAIL_BYTES; ) bytes += chunks[--first]!.length;
    for (let i = first; i < chunks.length; i++) this.push(chunks[i]!);
  }

  /** The bytes held (a view, valid until the next push). */
  get bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
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
  /** A non-streamed answer's last bytes, kept from the chunk that passed the cap on; else null. */
  private tail: TailWindow | null = null;

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
    if (this.bytes + chunk.length > this.capBytes) return this.pushPastCap(chunk);
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /**
   * A chunk past the cap: the record is truncated. Of a plain answer, the head is filled up to the cap (where the
   * model is) and the last bytes are kept from here on (where the usage is); an encoded answer's bytes would not read.
   */
  private pushPastCap(chunk: Buffer): void {
    this.truncated = true;
    if (this.encoding !== null) return;
    let tail = this.tail;
    if (tail === null) {
      tail = this.tail = new TailWindow();
      tail.pushLast(this.chunks);
      const room = this.capBytes - this.bytes;
      if (room > 0) {
        // A copy: a view would hold on to the whole chunk.
        this.chunks.push(Buffer.from(chunk.subarray(0, room)));
        this.bytes += room;
      }
    }
    tail.push(chunk);
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
      body = this.cutBody(bytes);
    }
    const usage = body && typeof body === 'object' ? ((this.reading.usageInBody(body as Json) as ChatUsage | null) ?? null) : null;
    const error = status >= 400 ? (text || `status ${status}`).slice(0, 64 * 1024) : null;
    return { body, usage, error, truncated: this.truncated, raw: null };
  }

  /**
   * The note logged for a non-streamed answer past the cap, with the answer's top-level `model` and `usage` when the
   * kept bytes show them (the tail window, or the head for the model): the kind reads its usage from it.
   * @param head the answer's first bytes, as kept (at most the cap).
   */
  private cutBody(head: Buffer): Json {
    const body: Json = { truncated: true, bytes_kept: this.bytes };
    const tail = this.tail?.bytes;
    if (!tail) return body;
    let model = memberIn(tail, 'model');
    if (typeof model !== 'string') {
      const scan = scanJson(head, HEAD_SCAN_DEPTH);
      if (scan.modelStart >= 0) model = parsed(head.subarray(scan.modelStart, scan.modelEnd));
    }
    if (typeof model === 'string') body.model = model;
    const usage = memberIn(tail, 'usage');
    if (usage && typeof usage === 'object' && !Array.isArray(usage)) body.usage = usage;
    return body;
  }
}

/** The parsed value of `bytes` (UTF-8 JSON text), or undefined when it does not parse. */
function parsed(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The parsed value of the top-level member `name` found in an answer's last bytes (json-scan's lastTopLevelMember), or undefined. */
function memberIn(tail: Buffer, name: string): unknown {
  const span = lastTopLevelMember(tail, name);
  return span ? parsed(tail.subarray(span[0], span[1])) : undefined;
}
