/**
 * Where the last whole event of a passed-through event stream ends. The gateway sends a provider's
 * event stream on as it arrives, but only up to the end of its last whole event: the bytes of an
 * event still arriving wait for the rest of it. A client's SSE parser acts only on whole events
 * anyway (WHATWG HTML, "Server-sent events", §9.2.6: an event is dispatched at a blank line, and
 * what is pending at the end of the stream is discarded), so holding them costs the client nothing;
 * and when the provider's answer then fails, or the gateway shuts down, the error event the gateway
 * ends the stream with starts on an event boundary instead of being glued to half an event
 * (`data: {"id":"c","object":"chat.completiodata: {"error":…}`), which the OpenAI and Anthropic SDKs
 * could not parse.
 *
 * A line ends with LF, CRLF or CR (§9.2.5); an event ends with an empty line, so its last bytes are
 * LF LF, CR LF CR LF, CR CR, or a mix such as CR LF LF.
 */

const LF = 0x0a;
const CR = 0x0d;
const LF_LF = Buffer.from('\n\n');
const LF_CR_LF = Buffer.from('\n\r\n');
const CR_CR = Buffer.from('\r\r');

/**
 * The offset just past the last event boundary (blank line) in `bytes`, 0 when there is none: LF LF,
 * LF CR LF (CRLF framing) or CR CR (CR framing). The common case, a chunk ending with a whole event,
 * is answered from its last bytes without a search; otherwise one native `lastIndexOf` per form.
 * A chunk ending in LF CR waits for its next byte, which may make that CR a CRLF.
 */
export function endOfWholeEvents(bytes: Buffer): number {
  const n = bytes.length;
  if (n >= 2 && bytes[n - 1] === LF && (bytes[n - 2] === LF || (n >= 3 && bytes[n - 2] === CR && bytes[n - 3] === LF))) return n;
  let end = bytes.lastIndexOf(LF_LF);
  end = end === -1 ? 0 : end + 2;
  const crlf = bytes.lastIndexOf(LF_CR_LF);
  if (crlf !== -1 && crlf + 3 > end) end = crlf + 3;
  const cr = bytes.lastIndexOf(CR_CR);
  if (cr !== -1 && cr + 2 > end) end = cr + 2;
  return end;
}
