/**
 * `data:` URLs, the form OpenAI clients send inline images and files in, read for wire formats that take
 * the media type and base64 payload apart (Anthropic `source.base64`, Bedrock `source.bytes`).
 * Source: RFC 2397 (https://www.rfc-editor.org/rfc/rfc2397).
 */

/** A parsed `data:` URL: its media type (lower-cased, e.g. `image/png`) and base64 payload. */
export interface DataUrl {
  mediaType: string;
  base64: string;
}

/**
 * Parses `data:<media type>[;params];base64,<payload>` (whitespace in the payload removed). Returns null
 * for anything else, including non-base64 data URLs.
 */
export function parseDataUrl(url: string): DataUrl | null {
  const match = /^data:([^;,]+)((?:;[^;,]*)*?);base64,(.*)$/is.exec(url);
  if (!match) return null;
  return { mediaType: match[1]!.trim().toLowerCase(), base64: match[3]!.replace(/\s+/g, '') };
}
