/** Request body of `POST /v1/dashboard/query` (superstruct), and the bucket arithmetic it is checked with. */
import { enums, object, optional, refine } from 'superstruct';
import { FilterStruct, IsoTimestampStruct, parseIsoTimestamp } from '../../filter.ts';

/** Bucket widths of the dashboard series, in ms (UTC has no daylight saving: a day is always 24 h). */
export const BUCKET_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
/** A bucket width name. */
export type Bucket = keyof typeof BUCKET_MS;
/** Longest time range (ms): 366 days. */
export const MAX_RANGE_MS = 366 * 86_400_000;
/** Most buckets a default bucket aims at: the smallest width giving at most this many is chosen. */
export const TARGET_BUCKETS = 200;
/** Most buckets an explicit `bucket` may produce over the range (a wider bucket is a 400 naming `bucket`). */
export const MAX_BUCKETS = 2000;

/** Epoch ms of an ISO-8601 text that passed {@link IsoTimestampStruct}. */
export function epochMs(text: string): number {
  return Date.parse(parseIsoTimestamp(text)!);
}

/** Start (epoch ms) of the UTC-aligned bucket holding `ms`. */
export function bucketStart(ms: number, bucket: Bucket): number {
  const size = BUCKET_MS[bucket];
  return Math.floor(ms / size) * size;
}

/** How many buckets of width `bucket` the range [startMs, endMs) touches. */
export function bucketCount(startMs: number, endMs: number, bucket: Bucket): number {
  const size = BUCKET_MS[bucket];
  return Math.ceil((endMs - bucketStart(startMs, bucket)) / size);
}

/**
 * The default bucket of a range: minute, hour or day, the narrowest giving at most
 * {@link TARGET_BUCKETS} buckets; day beyond that (a range of up to 366 days: at most 367 buckets).
 */
export function defaultBucket(startMs: number, endMs: number): Bucket {
  for (const b of ['minute', 'hour'] as const) if (bucketCount(startMs, endMs, b) <= TARGET_BUCKETS) return b;
  return 'day';
}

/**
 * Body of `POST /v1/dashboard/query` (no other members): `filter` (default `"all"`), `timeRange`
 * {start, end} (ISO-8601; start inclusive, end exclusive; end after start; at most 366 days) and
 * `bucket` (minute | hour | day; at most {@link MAX_BUCKETS} buckets over the range).
 */
export const DashboardQueryBody = refine(
  object({
    filter: optional(FilterStruct),
    timeRange: object({ start: IsoTimestampStruct, end: IsoTimestampStruct }),
    bucket: optional(enums(Object.keys(BUCKET_MS) as Bucket[])),
  }),
  'timeRange',
  (v) => {
    const start = epochMs(v.timeRange.start);
    const end = epochMs(v.timeRange.end);
    if (!(end > start)) return { path: ['timeRange', 'end'], message: 'must be after timeRange.start' };
    if (end - start > MAX_RANGE_MS) return { path: ['timeRange'], message: 'may span at most 366 days' };
    if (v.bucket && bucketCount(start, end, v.bucket) > MAX_BUCKETS) {
      return { path: ['bucket'], message: `${v.bucket} gives ${bucketCount(start, end, v.bucket)} buckets over this range; at most ${MAX_BUCKETS}: choose a wider bucket` };
    }
    return true;
  },
);
