/**
 * A request's cache options, read from its headers once `Svc-Cache-Enabled: true` was seen:
 * `Cache-Control: max-age=<s>` (lifetime; the configured default without it; 1 s .. 365 days),
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
  const v = (Array.isArray(value) ? value[0]! : value).trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw badRequest(`Svc-Cache-Enabled: expected "true" or "false", got ${JSON.stringify(v.slice(0, 64))}`, 'Svc-Cache-Enabled', 'invalid_header');
}

/**
 * The request's cache options; `defaultTtlMs` when it sends no `max-age`.
 * @throws {GatewayError} 400 naming the header whose value is malformed or out of range.
 */
export function cacheOptions(req: IncomingMessage, defaultTtlMs: number): CacheOptions {
  let ttlMs = defaultTtlMs;
  const cc = header(req, 'cache-control');
  if (cc !== undefined) {
    const m = /(?:^|,)\s*max-age\s*=\s*("?)([^,"]*)\1\s*(?:,|$)/i.exec(cc);
    if (m) {
      const s = m[2]!.trim();
      if (!/^\d{1,12}$/.test(s) || Number(s) < 1 || Number(s) * 1000 > CACHE_MAX_TTL_MS) {
        throw badRequest(`Cache-Control: max-age must be whole seconds from 1 to 31536000 (365 days), got ${JSON.stringify(s.slice(0, 64))}`, 'Cache-Control', 'invalid_header');
      }
      ttlMs = Number(s) * 1000;
    }
  }
  let bucketMax = 1;
  const b = header(req, 'svc-cache-bucket-max-size');
  if (b !== undefined) {
    const t = b.trim();
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
  return { ttlMs, bucketMax, seed, ignore };
}
