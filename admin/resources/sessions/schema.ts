/** Request bodies and query parameters of the `/v1/session` routes (superstruct; no SQL, no Koa). */
import { integer, max, min, object, optional, refine } from 'superstruct';
import { FilterStruct } from '../../filter.ts';
import { HttpError } from '../../http.ts';
import { LimitStruct, MAX_LIMIT, MAX_OFFSET, OffsetStruct } from '../../validation.ts';

/** Largest epoch-millisecond time a time filter takes (the year 9999). */
const MAX_TIME_MS = 253_402_300_799_999;
const EpochMs = max(min(integer(), 0), MAX_TIME_MS);

/**
 * Body of `POST /v1/session/query` (no other members):
 * - `timeFilter` {startTimeUnixMs, endTimeUnixMs} (epoch ms, start inclusive, end exclusive, end
 *   after start; absent: all time): a session is listed when at least one of its requests was made
 *   in the range;
 * - `filter` (a filter tree, default `"all"`): and at least one of those requests matches it;
 * - `offset` / `limit` (default 100, at most 10,000): the page, newest session (by its last request) first.
 */
export const SessionQueryBody = refine(
  object({
    timeFilter: optional(object({ startTimeUnixMs: EpochMs, endTimeUnixMs: EpochMs })),
    filter: optional(FilterStruct),
    offset: optional(OffsetStruct),
    limit: optional(LimitStruct),
  }),
  'timeFilter',
  (v) => (v.timeFilter && !(v.timeFilter.endTimeUnixMs > v.timeFilter.startTimeUnixMs) ? { path: ['timeFilter', 'endTimeUnixMs'], message: 'must be after timeFilter.startTimeUnixMs' } : true),
);

/** Default number of a session's requests `GET /v1/session/{sessionId}` answers with. */
export const DEFAULT_SESSION_REQUESTS = 1000;

/**
 * The `offset` and `limit` query parameters of `GET /v1/session/{sessionId}` (the page of the
 * session's requests in time order): integers in [0, 1,000,000,000] and [1, 10,000]; default 0 and
 * {@link DEFAULT_SESSION_REQUESTS}.
 * @throws {HttpError} 400 naming the parameter for any other value (or one given twice).
 */
export function sessionPage(query: Record<string, string | string[] | undefined>): { offset: number; limit: number } {
  const read = (name: 'offset' | 'limit', lowest: number, highest: number, fallback: number): number => {
    const value = query[name];
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
    if (!(n >= lowest && n <= highest)) throw new HttpError(400, `invalid query: ${name}: expected an integer from ${lowest} to ${highest}`);
    return n;
  };
  return { offset: read('offset', 0, MAX_OFFSET, 0), limit: read('limit', 1, MAX_LIMIT, DEFAULT_SESSION_REQUESTS) };
}
