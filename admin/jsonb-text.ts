/**
 * JSON text that PostgreSQL's jsonb accepts. jsonb refuses two things JSON and JS strings allow:
 * the `\u0000` escape and an escaped lone surrogate (`\ud800`..`\udfff` not forming a pair). Both
 * are replaced with `\ufffd` (U+FFFD), in keys and values alike; everything else of the text is
 * left as it is, so the text is produced once and PostgreSQL parses it once.
 */

/**
 * A real (not itself escaped: preceded by an even run of backslashes) `\u` escape that jsonb may
 * refuse: `\u0000`, a high surrogate with the low one that completes it (kept), a lone high or a
 * lone low surrogate. Hex digits in either case: a client's raw JSON may write `\uD83D`.
 * JSON.stringify writes paired surrogates as characters and escapes only lone ones, but a client's
 * raw body may escape a pair, which jsonb accepts and must stay.
 */
const ESCAPE_RE = /(?<!\\)((?:\\\\)*)\\u(0000|[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|[dD][c-fC-F][0-9a-fA-F]{2})/g;
/** A cheap first test: most texts have no such escape and are returned as they are. */
const MAYBE_RE = /\\u(?:0000|[dD][89a-fA-F])/;

const replaceEscape = (match: string, backslashes: string, hex: string): string => (hex.length > 4 ? match : `${backslashes}\\ufffd`);

/**
 * Makes a JSON text acceptable to jsonb (see the module comment).
 * @param text valid JSON text (JSON.stringify output or a client's raw body).
 * @returns the same text, or with the refused escapes replaced by `\ufffd`. Never throws.
 */
export function jsonbSafeText(text: string): string {
  // includes() first: a native substring search, ~10x cheaper than the regex on a body without `\u`.
  return text.includes('\\u') && MAYBE_RE.test(text) ? text.replace(ESCAPE_RE, replaceEscape) : text;
}

/**
 * The jsonb text of a JS value: JSON.stringify once, made jsonb-safe.
 * @returns null for null and undefined (stored as SQL NULL, as before), else the text. Throws what
 *   JSON.stringify throws (a cycle, a BigInt), which values parsed from JSON never contain.
 */
export function jsonbText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return jsonbSafeText(JSON.stringify(value));
}
