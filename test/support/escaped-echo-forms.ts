/**
 * The encoded forms in which test/support/escaped-echo-stub.ts echoes a credential, apart from the stub so that a
 * test can import them without starting the stub's server.
 */

/** `\uXXXX` of each UTF-16 unit of `s`, hex in `upper` or lower case. */
const unicodeEscaped = (s: string, upper: boolean): string =>
  [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).map((e) => (upper ? e.replace(/[a-f]/g, (h) => h.toUpperCase()) : e)).join('');

/** `%XX` of each byte of `s` (UTF-8), hex in upper case. */
const percentEscaped = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/**
 * The forms a credential is echoed in, each as it stands inside a JSON string literal: JSON `\u` escapes (only the
 * `-`, lower case, as in the security review's report; every character, lower or upper case; every other one),
 * percent-encoding (the `-` only, every byte in lower case), and percent-encoding whose `%` is itself a JSON escape.
 */
export const FORMS: Readonly<Record<string, (credential: string) => string>> = {
  dash: (c) => c.replaceAll('-', '\\u002d'),
  lower: (c) => unicodeEscaped(c, false),
  upper: (c) => unicodeEscaped(c, true),
  mixed: (c) => [...c].map((ch, i) => (i % 2 === 0 ? unicodeEscaped(ch, i % 4 === 0) : ch)).join(''),
  percent: (c) => c.replaceAll('-', '%2D'),
  percentall: (c) => percentEscaped(c).toLowerCase(),
  jsonpercent: (c) => c.replaceAll('-', '\\u00252d'),
};

