/**
 * A request's cache options, read from its headers once `Svc-Cache-Enabled: true` was seen:
 * `Cache-Control` (RFC 9111 §5.2.1 request directives: `max-age=<s>` the lifetime of the answer
 * stored, the configured default without it, 1 s .. 365 days; `no-cache`: not answered from the
 * cache, the provider's answer replaces the bucket; `no-store`: the answer is not stored; other
 * directives have no meaning here and are ignored),
 * `Svc-Cache-Bucket-Max-Size: <n>` (1..20 answers kept and served in turn), `Svc-Cache-Seed: <s>`
 * (partitions the cache), `Svc-Cache-Ignore-Keys: a,b` (body members left out of the key: names of
 * top-level members, or dot-separated paths with `*` for every element or member, e.g. `input.*.id`).
 * A bad value is a 400 naming the header, in the caller's dialect (thrown as a GatewayError).
 */
import type { IncomingMessage } from 'node:http';
import { CACHE_MAX_TTL_MS } from '../../shared/config.ts';
import { badRequest } from '../errors.ts';
import { MAX_BUCKET_SIZE } from './types.ts';

/** Longest seed accepted (characters). */
const MAX_SEED_LENGTH = 256;
/** Most members `Svc-Cache-Ignore-Keys` may name. */
const MAX_IGNORED = 64;

/** The options of one request (see the module comment). */
export interface CacheOptions {
  ttlMs: number;
  bucketMax: number;
  seed: string;
  ignore: string[] | null;
  /** False with `Cache-Control: no-cache`: the cache is not read. */
  lookup: boolean;
  /** What becomes of the provider's answer: added to the bucket, replacing it (`no-cache`), or not stored (`no-store`). */
  write: CacheWrite;
}

/** See {@link CacheOptions.write}. */
export type CacheWrite = 'add' | 'replace' | 'none';

/**
 * The one value of a header that node:http may have joined from repeats (`true, true`): every
 * comma-separated part must be the same, so repeating a header is harmless and a conflict is refused.
 * @throws {GatewayError} 400 naming `name` when the parts differ.
 */
function single(value: string, name: string): string {
  if (!value.includes(',')) return value.trim();
  const parts = value.split(',').map((p) => p.trim());
  if (parts.some((p) => p !== parts[0])) throw badRequest(`${name}: sent more than once with different values (${JSON.stringify(value.slice(0, 64))})`, name, 'invalid_header');
  return parts[0]!;
}

/** One header's value (repeated headers joined as node:http joins them); undefined when absent. */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/**
 * `Svc-Cache-Enabled`: true → on, false → off.
 * @throws {GatewayError} 400 for any other value.
 */
export function cacheEnabled(value: string | string[]): boolean {
  const v = single((Array.isArray(value) ? value.join(',') : value).toLowerCase(), 'Svc-Cache-Enabled');
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw badRequest(`Svc-Cache-Enabled: expected "true" or "false", got ${JSON.stringify(v.slice(0, 64))}`, 'Svc-Cache-Enabled', 'invalid_header');
}

/**
 * The request's cache options; `defaultTtlMs` when it sends no `max-age`.
 * @throws {GatewayError} 400 naming the header whose value is malformed or out of range.
 */
export function cacheOptions(req: IncomingMessage, defaultTtlMs: number): CacheOptions {
  const cc = header(req, 'cache-control');
  const { ttlMs, lookup, write } = cc === undefined ? { ttlMs: defaultTtlMs, lookup: true, write: 'add' as const } : cacheControl(cc, defaultTtlMs);
  let bucketMax = 1;
  const b = header(req, 'svc-cache-bucket-max-size');
  if (b !== undefined) {
    const t = single(b, 'Svc-Cache-Bucket-Max-Size');
    if (!/^\d{1,3}$/.test(t) || Number(t) < 1 || Number(t) > MAX_BUCKET_SIZE) {
      throw badRequest(`Svc-Cache-Bucket-Max-Size: expected a whole number from 1 to ${MAX_BUCKET_SIZE}, got ${JSON.stringify(t.slice(0, 64))}`, 'Svc-Cache-Bucket-Max-Size', 'invalid_header');
    }
    bucketMax = Number(t);
  }
  const seed = header(req, 'svc-cache-seed') ?? '';
  if (seed.length > MAX_SEED_LENGTH) throw badRequest(`Svc-Cache-Seed: at most ${MAX_SEED_LENGTH} characters`, 'Svc-Cache-Seed', 'invalid_header');
  let ignore: string[] | null = null;
  const ik = header(req, 'svc-cache-ignore-keys');
  if (ik !== undefined) {
    ignore = ik.split(',').map((k) => k.trim());
    if (ignore.length > MAX_IGNORED || ignore.some((k) => k.length > 256 || k.split('.').includes(''))) {
      throw badRequest(
        `Svc-Cache-Ignore-Keys: expected up to ${MAX_IGNORED} comma-separated body member names or dot-separated paths (such as input.*.id), none empty and no path with an empty step`,
        'Svc-Cache-Ignore-Keys',
        'invalid_header',
      );
    }
  }
  return { ttlMs, bucketMax, seed, ignore, lookup, write };
}

/**
 * The directives of a `Cache-Control` request header that matter here (see the module comment);
 * the first `max-age` counts.
 * @throws {GatewayError} 400 naming Cache-Control for a `max-age` that is not whole seconds in range.
 */
function cacheControl(cc: string, defaultTtlMs: number): Pick<CacheOptions, 'ttlMs' | 'lookup' | 'write'> {
  let ttlMs = -1;
  let noCache = false;
  let noStore = false;
  for (const directive of cc.split(',')) {
    const eq = directive.indexOf('=');
    const name = (eq < 0 ? directive : directive.slice(0, eq)).trim().toLowerCase();
    if (name === 'no-cache') noCache = true;
    else if (name === 'no-store') noStore = true;
    else if (name === 'max-age' && ttlMs < 0) ttlMs = maxAgeMs(eq < 0 ? '' : directive.slice(eq + 1));
  }
  return { ttlMs: ttlMs < 0 ? defaultTtlMs : ttlMs, lookup: !noCache, write: noStore ? 'none' : noCache ? 'replace' : 'add' };
}

/**
 * A `max-age` value (a token or a quoted string, RFC 9110 §5.6) in ms.
 * @throws {GatewayError} 400 naming Cache-Control unless it is whole seconds from 1 to 365 days.
 */
function maxAgeMs(raw: string): number {
  let s = raw.trim();
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) s = s.slice(1, -1).trim();
  if (!/^\d{1,12}$/.test(s) || Number(s) < 1 || Number(s) * 1000 > CACHE_MAX_TTL_MS) {
    throw badRequest(`Cache-Control: max-age must be whole seconds from 1 to 31536000 (365 days), got ${JSON.stringify(s.slice(0, 64))}`, 'Cache-Control', 'invalid_header');
  }
  return Number(s) * 1000;
}
