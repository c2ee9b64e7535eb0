/**
 * Reads the last events of a Server-Sent Events stream held as the Buffer pieces it arrived in,
 * backward from its end, comparing bytes where they lie: nothing is joined, decoded or allocated
 * unless a short line straddles two pieces (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation:
 * a blank line ends an event, `field: value` with one leading space dropped from the value, `:` a
 * comment, the last `event` line names the event, an event with no `data` is not dispatched). Used
 * by ./answer-completion.ts to tell whether a stream ended with its dialect's final event.
 * Of the spec's forms it reads lines ending in LF or CRLF, not in a lone CR, nor a `data` field
 * without a colon, nor a stream that is one event after a byte-order mark: no provider sends these,
 * and such a stream reads as not ending in its final event, so its answer is not cached (the safe side).
 *
 * Cost: a short line (a blank line, an event name, `data: [DONE]`) is found byte by byte; a longer
 * one, a data line, by a backward byte search (memrchr) over it. Reading the last event therefore
 * costs in proportion to its size (a few dozen bytes for `data: [DONE]` and `message_stop`; for the
 * Responses API's `response.completed`, which repeats the whole response, that response's size at
 * memory speed) and nothing for the rest of the stream.
 */

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
/** Lines up to this long (bytes) are searched for byte by byte; what is compared of a line lies in its first bytes. */
const SHORT_LINE = 64;
/** Most lines one event may have before the reader gives up on it (providers send 1 to 3). */
const MAX_EVENT_LINES = 16;
/** Most events without data (comment blocks) skipped looking for the last dispatched event. */
const MAX_SKIPPED_BLOCKS = 4;
const EMPTY = Buffer.alloc(0);

/** True when `bytes[start…start+length)` hold `text` (ASCII) exactly. */
function bytesAre(bytes: Buffer, start: number, length: number, text: string): boolean {
  if (length !== text.length) return false;
  for (let i = 0; i < length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** True when `bytes[start…start+length)` begin with `text` (ASCII). */
function bytesStartWith(bytes: Buffer, start: number, length: number, text: string): boolean {
  return length >= text.length && bytesAre(bytes, start, text.length, text);
}

/**
 * The offset of the last LF in `piece` before `end`, or -1: the last {@link SHORT_LINE} bytes byte
 * by byte (cheaper than a call into the runtime), the rest by memrchr.
 */
function lastLineEnd(piece: Buffer, end: number): number {
  const stop = end > SHORT_LINE ? end - SHORT_LINE : 0;
  for (let i = end - 1; i >= stop; i--) if (piece[i] === LF) return i;
  return stop > 0 ? piece.lastIndexOf(LF, stop - 1) : -1;
}

/**
 * A backward reader over one stream's pieces (`pieces` in order; none is changed), made once per
 * stored answer: {@link terminated} says whether the stream ended with a blank line, each
 * {@link lastEvent} reads the event before the previous one, and {@link nameIs}, {@link dataIs} and
 * {@link dataMatches} look at the event read.
 */
export class SseTail {
  /** The piece holding the reading position, and the offset in it: the bytes before are unread. */
  private piece: number;
  private at: number;
  /** The start of the stream was reached. */
  private exhausted: boolean;
  /** The stream ended with a blank line (at least two line ends after its last line). */
  readonly terminated: boolean;
  /** The line read last: its bytes (a piece, or a copy of its head when it straddles pieces), start and length. */
  private line: Buffer = EMPTY;
  private lineStart = 0;
  private lineLength = 0;
  /** The event read last: its `event` value (null: none) and first `data` value, as bytes, start and length. */
  private name: Buffer | null = null;
  private nameStart = 0;
  private nameLength = 0;
  private data: Buffer = EMPTY;
  private dataStart = 0;
  private dataLength = 0;

  constructor(private readonly pieces: readonly Buffer[]) {
    let piece = pieces.length - 1;
    let at = piece >= 0 ? pieces[piece]!.length : 0;
    let lineEnds = 0;
    // The blank line(s) after the last event.
    for (;;) {
      if (at === 0) {
        if (piece <= 0) break;
        at = pieces[--piece]!.length;
        continue;
      }
      const byte = pieces[piece]![at - 1];
      if (byte !== LF && byte !== CR) break;
      if (byte === LF) lineEnds++;
      at--;
    }
    this.piece = Math.max(piece, 0);
    this.at = at;
    this.exhausted = at === 0 && piece <= 0;
    this.terminated = lineEnds >= 2;
  }

  /** Reads the line before the reading position into {@link line} (a final CR left out) and moves before it; false at the stream's start. */
  private previousLine(): boolean {
    if (this.exhausted) return false;
    const pieces = this.pieces;
    let endPiece = this.piece;
    let end = this.at;
    while (end === 0 && endPiece > 0) end = pieces[--endPiece]!.length;
    if (end > 0 && pieces[endPiece]![end - 1] === CR) end--;
    let piece = endPiece;
    let lf = lastLineEnd(pieces[piece]!, end);
    while (lf < 0 && piece > 0) {
      const prev = pieces[--piece]!;
      lf = prev.length > 0 ? prev.lastIndexOf(LF) : -1;
    }
    const from = lf < 0 ? 0 : lf + 1;
    if (piece === endPiece) {
      this.line = pieces[piece]!;
      this.lineStart = from;
      this.lineLength = end - from;
    } else {
      this.straddling(piece, from, endPiece, end);
    }
    if (lf < 0) this.exhausted = true;
    this.piece = piece;
    this.at = Math.max(lf, 0);
    return true;
  }

  /**
   * {@link line} for a line from `piece`/`from` to `endPiece`/`end`: its length, and its first
   * {@link SHORT_LINE} bytes where they lie, or copied when they straddle pieces themselves.
   */
  private straddling(piece: number, from: number, endPiece: number, end: number): void {
    const pieces = this.pieces;
    let length = end + pieces[piece]!.length - from;
    for (let p = piece + 1; p < endPiece; p++) length += pieces[p]!.length;
    this.lineLength = length;
    if (pieces[piece]!.length - from >= Math.min(length, SHORT_LINE)) {
      this.line = pieces[piece]!;
      this.lineStart = from;
      return;
    }
    const parts: Buffer[] = [];
    let kept = 0;
    for (let p = piece; p <= endPiece && kept < SHORT_LINE; p++, from = 0) {
      const part = pieces[p]!.subarray(from, Math.min(p === endPiece ? end : pieces[p]!.length, from + SHORT_LINE - kept));
      parts.push(part);
      kept += part.length;
    }
    this.line = Buffer.concat(parts, kept);
    this.lineStart = 0;
  }

  /**
   * Reads the event before the reading position that has data (blocks of comments only are skipped,
   * as a client skips them) and moves before it. False at the stream's start, and for an event no
   * provider sends (over {@link MAX_EVENT_LINES} lines, or over {@link MAX_SKIPPED_BLOCKS} blocks
   * without data): the caller takes that as no final event.
   */
  lastEvent(): boolean {
    for (let block = 0; block <= MAX_SKIPPED_BLOCKS; block++) {
      this.name = null;
      let hasData = false;
      let lines = 0;
      while (this.previousLine()) {
        const bytes = this.line;
        const start = this.lineStart;
        const length = this.lineLength;
        if (length === 0) {
          if (lines > 0) break;
          continue;
        }
        if (++lines > MAX_EVENT_LINES) return false;
        if (bytesStartWith(bytes, start, length, 'event:')) {
          // Read backward, the first name met is the event's last `event` line: the one that counts.
          if (this.name !== null) continue;
          const skip = bytes[start + 6] === SPACE && length > 6 ? 7 : 6;
          this.name = bytes;
          this.nameStart = start + skip;
          this.nameLength = length - skip;
        } else if (bytesStartWith(bytes, start, length, 'data:')) {
          // Read backward, the last data line kept is the event's first.
          const skip = bytes[start + 5] === SPACE && length > 5 ? 6 : 5;
          this.data = bytes;
          this.dataStart = start + skip;
          this.dataLength = length - skip;
          hasData = true;
        }
      }
      if (hasData) return true;
      if (lines === 0) return false;
    }
    return false;
  }

  /** The event read has an `event` field. */
  hasName(): boolean {
    return this.name !== null;
  }

  /** The event read is named `text` (ASCII). */
  nameIs(text: string): boolean {
    return this.name !== null && bytesAre(this.name, this.nameStart, this.nameLength, text);
  }

  /** The event read's (first) data line is `text` (ASCII) exactly. */
  dataIs(text: string): boolean {
    return bytesAre(this.data, this.dataStart, this.dataLength, text);
  }

  /**
   * `test` applied to the event read's (first) data value, `bytes[start…start+length)`: the whole
   * value, or for a long one straddling pieces (not copied whole) at least what of it lies in its
   * line's first {@link SHORT_LINE} bytes.
   */
  dataMatches(test: ByteTest): boolean {
    return test(this.data, this.dataStart, Math.min(this.dataLength, this.data.length - this.dataStart));
  }
}

/** A test of a run of bytes, `bytes[start…start+length)` (a module-level function: no closure per call). */
export type ByteTest = (bytes: Buffer, start: number, length: number) => boolean;
