/**
 * A passed-through event stream goes to the client up to the end of its last whole line: the bytes of a line
 * still arriving wait for the rest of it (or for the answer's end). When the provider's answer then fails, or the
 * gateway shuts down, mid-stream, the gateway's error event must not be glued to half a line
 * (`data: {"id":"c","object":"chat.completiodata: {"error":…}`, which the OpenAI and Anthropic SDKs cannot parse),
 * and must not join an event whose lines came whole but whose blank line did not: {@link cutPrefix} says what to
 * write first so that the error event starts as an event of its own.
 *
 * Why lines, not whole events: a client's SSE parser acts on nothing before an event's blank line anyway, so
 * holding whole events would cost nothing there, but comment lines a provider sends to keep a connection alive
 * (`: ping`) must reach the client when they come, and a line is the smallest unit that needs no prefix to
 * recover from. Source: WHATWG HTML, "Server-sent events", §9.2.5 (a line ends with LF, CRLF or CR) and §9.2.6
 * (an event is dispatched at an empty line; an empty line with no data dispatches nothing).
 */

const LF = 0x0a;
const CR = 0x0d;

/**
 * The offset just past the last line end (LF or CR) in `bytes`, 0 when there is none. A chunk ending with a line
 * end, the common case, is answered from its last byte without a search.
 */
export function endOfWholeLines(bytes: Buffer): number {
  const n = bytes.length;
  if (n === 0) return 0;
  const last = bytes[n - 1];
  if (last === LF || last === CR) return n;
  return Math.max(bytes.lastIndexOf(LF), bytes.lastIndexOf(CR)) + 1;
}

/**
 * The last (up to) three bytes sent, `tail` (-1: none yet; else bytes packed oldest first, as
 * {@link withLastBytes} keeps them), followed by `bytes`' first `end`.
 */
export function withLastBytes(tail: number, bytes: Buffer, end: number): number {
  let t = tail < 0 ? 0 : tail;
  for (let i = end > 3 ? end - 3 : 0; i < end; i++) t = ((t << 8) | bytes[i]!) & 0xffffff;
  return t;
}

/**
 * What to write before an error event that ends a passed-through stream, given the last three bytes sent to the
 * client (`tail` as {@link withLastBytes} keeps them; -1: none): nothing when nothing was sent or an event had just
 * ended (a blank line: LF LF, CR LF CR LF, CR CR); else a blank line that ends the event whose lines came whole:
 * after LF one LF, after CR (maybe the first half of a CRLF) two.
 */
export function cutPrefix(tail: number): string {
  if (tail < 0) return '';
  const last = tail & 0xff;
  const prev = (tail >> 8) & 0xff;
  if ((last === LF && (prev === LF || (prev === CR && ((tail >> 16) & 0xff) === LF))) || (last === CR && prev === CR)) return '';
  return last === CR ? '\n\n' : '\n';
}
