/**
 * What the response store needs of a Responses answer, read from the bytes as they reach the client:
 * - a relayed answer (OpenAI, Azure keep their own responses): only the response id, found in the
 *   first piece of the body (a JSON body starts with it; a stream's first event, `response.created`,
 *   carries the response with its id first), so the passthrough path does one bounded regex and no more;
 * - an answer the gateway made (a translated provider's): the whole final response, from a stream's
 *   `response.completed` (or `response.incomplete`) event or from the JSON body, with the output items
 *   of `response.output_item.done` kept in case the final event carries none. Bounded by the store's
 *   largest entry: past it nothing more is read and what was held is let go, so its event parser never holds
 *   more than that (an event that never ends included).
 * A relayed answer the provider encoded (`content-encoding`, passed to the client as it is; see
 * ../upstream/content-decoding.ts) is decoded for the id ({@link ResponseCapture.decodeAs}): its pieces
 * are kept and decoded as far as they go until the id is found (usually in the first), so an encoded
 * answer costs a small synchronous decode and an unencoded one nothing.
 * Source of the stream's events: OpenAI API reference, "Responses" → "Streaming events".
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { Json } from '../endpoints/types.ts';
import { MAX_ENTRY_BYTES } from '../response-store/types.ts';
import { decodeSync } from '../upstream/content-decoding.ts';

/** A response id in the first bytes of an answer (`"id": "resp_…"`, the first `id` member). */
const FIRST_ID = /"id"\s*:\s*"([A-Za-z0-9_-]{1,200})"/;
/** How much of the first piece is searched for the id (bytes). */
const ID_WINDOW = 4096;
/** The member name searched for in the bytes, and how many bytes from it are decoded (name, spaces, a 200-character id). */
const ID_MEMBER = Buffer.from('"id"');
const ID_SPAN = 256;
/** The events whose `response` is final and kept. */
const FINAL = new Set(['response.completed', 'response.incomplete']);

/** Collects what the store keeps of one answer; see the module comment. */
export class ResponseCapture {
  /** The response id of a relayed answer, once found. */
  id: string | null = null;
  /** The final response of a made answer, once complete. */
  response: Json | null = null;
  /** Nothing more to read: the id or the response was found, or cannot be. */
  done = false;
  private parser: EventSourceParser | null = null;
  /** Decodes a made answer across pieces (a character may be split); a relayed one needs none. */
  private readonly decoder: TextDecoder | null;
  private text = '';
  private bytes = 0;
  private items: Json[] = [];
  /** {@link decodeAs}: the relayed answer's content-encoding, and its pieces so far. */
  private encoding: string | null = null;
  private encoded: Buffer[] | null = null;

  /**
   * @param relayed true for an answer a provider keeps (only its id is read).
   * @param streamed true for an SSE answer.
   */
  constructor(
    readonly relayed: boolean,
    private readonly streamed: boolean,
  ) {
    this.decoder = relayed ? null : new TextDecoder('utf-8');
    if (!relayed && streamed) this.parser = createParser({ onEvent: (e) => this.onEvent(e) });
  }

  /**
   * The relayed answer comes encoded as `encoding` (gzip, deflate, br): the id is read from its decoded
   * bytes. Call it before the first {@link push}.
   */
  decodeAs(encoding: string): void {
    this.encoding = encoding;
    this.encoded = [];
  }

  /** Reads one piece of the body as it reached the client; true when this piece completed the capture. */
  push(chunk: Buffer): boolean {
    if (this.done) return false;
    this.bytes += chunk.length;
    if (this.bytes > MAX_ENTRY_BYTES) {
      // Past what the store keeps (an endless stream event included): the parser's and the text's bytes go now, not with the request.
      this.done = true;
      this.parser = null;
      this.text = '';
      this.items = [];
      this.encoded = null;
      return false;
    }
    if (this.relayed) {
      if (this.encoding !== null) return this.pushEncoded(chunk);
      this.done = true;
      this.id = firstId(chunk);
      return this.id !== null;
    }
    if (this.parser) {
      this.parser.feed(this.decoder!.decode(chunk, { stream: true }));
      return this.done && this.response !== null;
    }
    this.text += this.decoder!.decode(chunk, { stream: true });
    if (!this.text.trimEnd().endsWith('}')) return false;
    try {
      const body = JSON.parse(this.text) as Json;
      if (body && body.object === 'response' && typeof body.id === 'string') this.finish(body);
    } catch {
      return false;
    }
    return this.done;
  }

  /**
   * {@link decodeAs}: decodes the pieces so far as far as they go (a piece may end mid-block) and
   * looks for the id; done once it is found, once more than the id's window has decoded without it,
   * or when the bytes do not decode.
   */
  private pushEncoded(chunk: Buffer): boolean {
    const kept = this.encoded!;
    kept.push(chunk);
    let plain: Buffer;
    try {
      plain = decodeSync(this.encoding!, kept.length === 1 ? chunk : Buffer.concat(kept), MAX_ENTRY_BYTES);
    } catch {
      plain = Buffer.alloc(0);
      this.done = true;
    }
    this.id = firstId(plain);
    if (this.id !== null || plain.length >= ID_WINDOW + ID_SPAN) this.done = true;
    if (this.done) this.encoded = null;
    return this.id !== null;
  }

  private onEvent(e: EventSourceMessage): void {
    if (this.done) return;
    const type = e.event ?? /"type"\s*:\s*"([a-z_.]+)"/.exec(e.data)?.[1];
    if (type === 'response.output_item.done') {
      const event = parse(e.data);
      if (event && typeof event.output_index === 'number' && event.item) this.items[event.output_index] = event.item as Json;
      return;
    }
    if (type === undefined || !FINAL.has(type)) return;
    const response = parse(e.data)?.response as Json | undefined;
    if (response && typeof response.id === 'string') this.finish(response);
  }

  /** Keeps the final response, with the items seen when it lists none. */
  private finish(response: Json): void {
    if (!Array.isArray(response.output) || (response.output.length === 0 && this.items.length > 0)) response.output = this.items.filter(Boolean);
    this.response = response;
    this.text = '';
    this.items = [];
    this.done = true;
  }
}

/** The response id in the first bytes of `body` (see {@link FIRST_ID}), or null. */
function firstId(body: Buffer): string | null {
  // Decode only from the first `"id"` on (the id is at most 200 characters past it), not the whole piece.
  const at = body.indexOf(ID_MEMBER);
  return at < 0 || at >= ID_WINDOW ? null : (FIRST_ID.exec(body.toString('latin1', at, Math.min(at + ID_SPAN, body.length)))?.[1] ?? null);
}

/** JSON text as an object, or null. */
function parse(text: string): Json | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as Json) : null;
  } catch {
    return null;
  }
}
