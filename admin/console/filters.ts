/**
 * The Requests page's filter controls as the REST filter tree of `POST /v1/request/query`
 * (admin/filter.ts): each control is one leaf, the leaves AND together. Text controls use
 * `contains` (case-insensitive substring), so a partial model or user name finds its rows.
 */

/** Text operators of a filter field. */
export type TextOperators = Partial<Record<'equals' | 'not-equals' | 'like' | 'ilike' | 'contains' | 'not-contains', string>>;
/** Number operators of a filter field. */
export type NumberOperators = Partial<Record<'equals' | 'not-equals' | 'gte' | 'lte' | 'lt' | 'gt', number>>;
/** Timestamp operators (ISO-8601 strings). */
export type TimestampOperators = Partial<Record<'equals' | 'gte' | 'lte' | 'lt' | 'gt', string>>;

/** A leaf of the filter tree (the members the console writes). */
export interface FilterLeaf {
  request?: { prompt?: TextOperators };
  request_response_rmt?: {
    provider?: TextOperators;
    model?: TextOperators;
    user_id?: TextOperators;
    status?: NumberOperators;
    request_created_at?: TimestampOperators;
    /** When admin stored the row (PostgreSQL's now() of the storing statement): the order the live feed polls in. */
    updated_at?: TimestampOperators;
    properties?: Record<string, TextOperators>;
    /** true: answered from the response cache (a hit); false: every other request. */
    cached?: { equals: boolean };
  };
  /** The user's thumbs up (true) or down (false); a request without feedback matches neither. */
  feedback?: { rating?: { equals: boolean } };
}
/** A filter tree node: everything, a leaf, or two nodes joined. */
export type FilterNode = 'all' | FilterLeaf | { left: FilterNode; operator: 'and' | 'or'; right: FilterNode };

/** The time ranges offered, by select value; `all` has no bound. */
export const RANGES = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, all: null } as const;
/** A select value of {@link RANGES}. */
export type RangeKey = keyof typeof RANGES;

/** The cache select: every request, cache hits only, or the requests the provider answered. */
export const CACHE_CHOICES = { any: 'all answers', hits: 'cache hits', misses: 'not from the cache' } as const;
/** A select value of {@link CACHE_CHOICES}. */
export type CacheChoice = keyof typeof CACHE_CHOICES;

/** The feedback select: every request, or those a user rated up, or down. */
export const FEEDBACK_CHOICES = { any: 'any feedback', up: 'rated up ▲', down: 'rated down ▼' } as const;
/** A select value of {@link FEEDBACK_CHOICES}. */
export type FeedbackChoice = keyof typeof FEEDBACK_CHOICES;

/** What the filter controls hold. */
export interface RequestFilters {
  model: string;
  provider: string;
  status: string;
  user: string;
  propertyKey: string;
  propertyValue: string;
  range: RangeKey;
  text: string;
  cache: CacheChoice;
  feedback: FeedbackChoice;
}

/** The controls' initial values: everything of the last 24 hours. */
export const EMPTY_FILTERS: RequestFilters = { model: '', provider: '', status: '', user: '', propertyKey: '', propertyValue: '', range: '24h', text: '', cache: 'any', feedback: 'any' };

/** ANDs nodes together; no node is `"all"`. */
export function and(nodes: FilterNode[]): FilterNode {
  const real = nodes.filter((n) => n !== 'all');
  if (real.length === 0) return 'all';
  return real.reduce((left, right) => ({ left, operator: 'and', right }));
}

/**
 * The status control: `200` exact, `4xx` a class, `error` every status from 400 up, `ok` below 400.
 * @returns the number operators, or null when the text is none of those (then no condition).
 */
export function statusOperators(text: string): NumberOperators | null {
  const t = text.trim().toLowerCase();
  if (/^\d{3}$/.test(t)) return { equals: Number(t) };
  const cls = /^([1-5])xx$/.exec(t);
  if (cls) return { gte: Number(cls[1]) * 100, lt: Number(cls[1]) * 100 + 100 };
  if (t === 'error' || t === 'errors') return { gte: 400 };
  if (t === 'ok' || t === 'success') return { lt: 400 };
  return null;
}

/** The start of `range` as an ISO string, or null for `all`. */
export function rangeStart(range: RangeKey, now = Date.now()): string | null {
  const span = RANGES[range];
  return span === null ? null : new Date(now - span).toISOString();
}

/** The filter tree of the controls (without the time range when `withRange` is false). */
export function toFilterTree(f: RequestFilters, withRange = true): FilterNode {
  const rmt = (v: NonNullable<FilterLeaf['request_response_rmt']>): FilterLeaf => ({ request_response_rmt: v });
  const nodes: FilterNode[] = [];
  if (f.model.trim()) nodes.push(rmt({ model: { contains: f.model.trim() } }));
  if (f.provider.trim()) nodes.push(rmt({ provider: { contains: f.provider.trim() } }));
  const status = statusOperators(f.status);
  if (status) nodes.push(rmt({ status }));
  if (f.user.trim()) nodes.push(rmt({ user_id: { contains: f.user.trim() } }));
  // Property names come from `Svc-Property-<Name>` headers, whose names have no case: the gateway
  // stores them lower-cased (proxy/pipeline/headers.ts), so `Env` must ask for `env`.
  const propertyKey = f.propertyKey.trim().toLowerCase();
  if (propertyKey) {
    // A key alone asks only that the property exists: LIKE '%' is false on a missing (NULL) value.
    const value = f.propertyValue.trim();
    nodes.push(rmt({ properties: { [propertyKey]: value ? { equals: value } : { like: '%' } } }));
  }
  const start = withRange ? rangeStart(f.range) : null;
  if (start) nodes.push(rmt({ request_created_at: { gte: start } }));
  if (f.text.trim()) nodes.push({ request: { prompt: { contains: f.text.trim() } } });
  if (f.cache !== 'any') nodes.push(rmt({ cached: { equals: f.cache === 'hits' } }));
  if (f.feedback !== 'any') nodes.push({ feedback: { rating: { equals: f.feedback === 'up' } } });
  return and(nodes);
}

/**
 * `filter` narrowed to rows admin stored at or after `iso` (`updated_at >= iso`, an ISO-8601
 * date-time in ms): the live feed's poll (./request-feed.ts). `updated_at` and not the creation
 * time, because a request is stored when it ends, so one that streamed for minutes is stored with
 * an old `request_created_at`. `gte`, not `gt`: admin answers `updated_at` cut to the ms, so a row
 * shown as stored at `iso` may have been stored after it within that ms.
 */
export function storedSince(filter: FilterNode, iso: string): FilterNode {
  return and([filter, { request_response_rmt: { updated_at: { gte: iso } } }]);
}
