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
