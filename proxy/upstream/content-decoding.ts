/**
 * A provider's `content-encoding` (RFC 9110 §8.4). The gateway asks for `accept-encoding: identity`,
 * yet a provider (or a proxy in front of it) may still encode its answer. Where the gateway reads an
 * answer itself it decodes it with node:zlib: a translated answer (a stream on its way to the
 * stream mapper, a body collected for mapping; ./exchange.ts) and the log's copy of a passed-through
 * answer (../observers/response-recorder.ts). A passed-through answer reaches the client as the
 * provider encoded it, with its `content-encoding` header. The codings read are `gzip` (and its
 * alias `x-gzip`), `deflate` (the zlib format, RFC 9110 §8.4.1.2) and `br` (RFC 7932); any other,
 * or a list of several, is not.
 */
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/**
 * The coding of a provider's answer from its `content-encoding` value (../upstream/response.ts reads
 * the header in its one pass over the provider's headers; repeated headers joined with ", "): lower-cased
 * and trimmed, or null when it is empty or `identity`.
 */
export function codingOf(value: string): string | null {
  const coding = value.trim().toLowerCase();
  return coding === '' || coding === 'identity' ? null : coding;
}

/**
 * A zlib stream decoding `encoding` (see {@link codingOf}), or null for a coding the
 * gateway does not read. It emits `error` on bytes that are not of that coding, or that end before
 * the coding's own end.
 */
export function createDecoder(encoding: string): Transform | null {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/**
 * Decodes `bytes` of `encoding` at once, into at most `maxBytes` bytes. Bytes that end early (a copy
 * cut at a byte cap, an answer cut by the provider) decode as far as they go.
 * @throws {Error} for a coding the gateway does not read, bytes not of that coding, or a result over
 *   `maxBytes` (zlib's `ERR_BUFFER_TOO_LARGE`).
 */
export function decodeSync(encoding: string, bytes: Buffer, maxBytes: number): Buffer {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.gunzipSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes });
    case 'deflate':
      return zlib.inflateSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes });
    case 'br':
      return zlib.brotliDecompressSync(bytes, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: maxBytes });
    default:
      throw new Error(`content-encoding ${encoding} is not one the gateway reads`);
  }
}
