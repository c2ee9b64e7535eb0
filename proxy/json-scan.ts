/**
 * A single byte scan over a request body's JSON text, run before `JSON.parse`: it bounds the
 * nesting depth (so no deep structure is ever built) and finds the top-level `"model"` value, so a
 * body whose only change is its model can be forwarded as the client's own bytes with the model
 * spliced in, instead of being serialized again.
 */

/** What {@link scanJson} found. Byte offsets into the scanned buffer. */
export interface JsonScan {
  /** Objects/arrays nest deeper than the limit (the scan stopped there). */
  tooDeep: boolean;
  /**
   * `[modelStart, modelEnd)`: the last top-level `"model"` member's value when it is a string,
   * quotes included; -1 when there is none. The text is not validated: the caller must check the
   * span against what `JSON.parse` read before relying on it.
   */
  modelStart: number;
  modelEnd: number;
}

/** The result object, reused: a scan allocates nothing (read it before the next scan). */
const result: JsonScan = { tooDeep: false, modelStart: -1, modelEnd: -1 };

/**
 * The index of the quote that ends the string whose opening quote is at `open`, or -1 when none
 * does. A quote after an odd run of backslashes is escaped. The search is the native `indexOf`
 * (memchr), not a loop in JS: strings are most of a large body's bytes (Claude Code's ~49 KB
 * request scanned in ~100 µs byte by byte).
 */
function stringEnd(buf: Buffer, open: number): number {
  let end = buf.indexOf(0x22, open + 1);
  while (end > 0) {
    let backslashes = 0;
    while (buf[end - 1 - backslashes] === 0x5c) backslashes++;
    if ((backslashes & 1) === 0) return end;
    end = buf.indexOf(0x22, end + 1);
  }
  return -1;
}

/** True when the string `buf[open..close]` (quotes included) is exactly `"model"`. */
function isModelName(buf: Buffer, open: number, close: number): boolean {
  return close - open === 6 && buf[open + 1] === 0x6d && buf[open + 2] === 0x6f && buf[open + 3] === 0x64 && buf[open + 4] === 0x65 && buf[open + 5] === 0x6c;
}

/**
 * Scans UTF-8 JSON text once. Brackets inside strings do not count; a quote after an odd run of
 * backslashes does not end a string.
 * @param buf the body bytes.
 * @param maxDepth deepest nesting of objects and arrays allowed (≥ 1).
 * @returns the shared {@link JsonScan} (overwritten by the next call).
 */
export function scanJson(buf: Buffer, maxDepth: number): JsonScan {
  result.tooDeep = false;
  result.modelStart = result.modelEnd = -1;
  let depth = 0;
  // The last byte outside strings and whitespace: at depth 1 a string after ':' is a member value,
  // any other string a member name.
  let last = 0;
  let modelKey = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x22) {
      const close = stringEnd(buf, i);
      // Unterminated: JSON.parse reports it.
      if (close < 0) return result;
      if (depth === 1) {
        if (last === 0x3a) {
          if (modelKey) {
            result.modelStart = i;
            result.modelEnd = close + 1;
          }
          modelKey = false;
        } else modelKey = isModelName(buf, i, close);
      }
      last = 0x22;
      i = close;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) {
        result.tooDeep = true;
        result.modelStart = result.modelEnd = -1;
        return result;
      }
      // An object or array value ends any "model" member at this level.
      if (depth === 2) modelKey = false;
      last = c;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      last = c;
    } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
      // A number or literal value at depth 1 ends any "model" member.
      if (depth === 1 && c !== 0x3a && c !== 0x2c) modelKey = false;
      last = c;
    }
  }
  return result;
}

/**
 * The body bytes with the JSON string at `[start, end)` replaced by `model`, JSON-encoded.
 * @param raw UTF-8 JSON text; `start`/`end` as found by {@link scanJson} (and checked by the caller).
 * @param model the new model name.
 */
export function spliceModel(raw: Buffer, start: number, end: number, model: string): Buffer {
  const value = Buffer.from(JSON.stringify(model));
  return Buffer.concat([raw.subarray(0, start), value, raw.subarray(end)], start + value.length + raw.length - end);
}

/** At most this many `"name"` keys are tried by {@link lastTopLevelMember}, last first: the scan stays linear in the window. */
const MAX_MEMBER_CANDIDATES = 16;

/** True for JSON's insignificant whitespace. */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** True when the byte at `at` follows an odd run of backslashes (an escaped character inside a string). */
function escaped(buf: Buffer, at: number): boolean {
  let backslashes = 0;
  while (at - 1 - backslashes >= 0 && buf[at - 1 - backslashes] === 0x5c) backslashes++;
  return (backslashes & 1) === 1;
}

/**
 * Scans from `from`, a position outside any string, to the first bracket that closes one opened before it.
 * @returns that bracket's index, or -1 when the text ends first (or a string in it does not end).
 */
function firstUnmatchedClose(buf: Buffer, from: number): number {
  let depth = 0;
  for (let i = from; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x22) {
      i = stringEnd(buf, i);
      if (i < 0) return -1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth < 0) return i;
  }
  return -1;
}

/**
 * Finds the value of the last member `name` of the top-level object in `tail`, the last bytes of a JSON text whose
 * beginning is not at hand (an answer cut at the log's cap: its `usage` is near its end). The window may start
 * anywhere, inside a string even, so each `"name"` key is checked from it forward, where the text is known: its
 * quote is not escaped (a key inside a string would be), a `:` follows, its value (an object or a string) ends,
 * and what comes after closes exactly one object, the window's last non-space byte (the top-level object's end).
 * The text is not validated: the caller parses the span (`JSON.parse`) and drops a value that does not parse.
 * @param tail the window's bytes (UTF-8).
 * @param name the member's name, plain (no character JSON would escape).
 * @returns `[start, end)` of the value in `tail`, or null when no such member is found.
 */
export function lastTopLevelMember(tail: Buffer, name: string): [number, number] | null {
  const key = Buffer.from(`"${name}"`);
  let last = tail.length - 1;
  while (last >= 0 && isSpace(tail[last])) last--;
  if (last < 0 || tail[last] !== 0x7d) return null;
  let at = tail.lastIndexOf(key, last);
  for (let tries = 0; at >= 0 && tries < MAX_MEMBER_CANDIDATES; tries++, at = at > 0 ? tail.lastIndexOf(key, at - 1) : -1) {
    if (escaped(tail, at)) continue;
    let i = at + key.length;
    while (isSpace(tail[i])) i++;
    if (tail[i] !== 0x3a) continue;
    i++;
    while (isSpace(tail[i])) i++;
    const start = i;
    let end: number;
    if (tail[start] === 0x22) end = stringEnd(tail, start) + 1;
    else if (tail[start] === 0x7b) end = firstUnmatchedClose(tail, start + 1) + 1;
    else continue;
    if (end <= 0 || tail[end - 1] !== (tail[start] === 0x22 ? 0x22 : 0x7d)) continue;
    if (firstUnmatchedClose(tail, end) === last) return [start, end];
  }
  return null;
}
