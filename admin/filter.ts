/**
 * The filter tree of the `/v1` API (`POST /v1/request/query`, `/v1/request/count`,
 * `/v1/dashboard/query`, `/v1/experiment/dataset`, `/v1/experiment/dataset/random` and
 * `/v1/session/query`):
 * its validation (a superstruct struct naming the exact path of a mistake) and its compilation to a
 * parameterized SQL condition on `request_log r` with postgres.js fragments. Values only ever travel
 * as bind parameters; column names and operators come from fixed whitelists written out below.
 *
 * A node is `"all"`, a leaf `{request?: {...}, response?: {...}, request_response_rmt?: {...},
 * properties?: {<name>: {...}}, prompts_versions?: {...}, sessions_request_response_rmt?:
 * {session_session_id?: {...}, session_session_name?: {...}}, feedback?: {...}}`, or a branch
 * `{left, operator: "and" | "or", right}` nested at most {@link MAX_FILTER_DEPTH} branches deep. In a leaf, every field and every operator of a field AND
 * together; an empty leaf matches all.
 *
 * `request_response_rmt.*` (the reference's Partial_RequestResponseRMTToOperators_, the fields this
 * log stores) reads the request log's own columns: provider, model (the requested model, as
 * `request.model`), user_id, status (HTTP status), latency (ms, `delay_ms`), time_to_first_token (ms),
 * cost (USD), the token counts, request_created_at / response_created_at, updated_at (when admin stored
 * the row: the ingestion order, which the console's live feed polls by), request_id, target_url,
 * prompt_id, prompt_version, session_id (as `sessions_request_response_rmt.session_session_id`),
 * cache_enabled (boolean: the request asked for the response cache), cached (boolean: a cache hit,
 * `cache_reference_id` set, as the `isCached` body flag), cache_reference_id (a hit: the request whose
 * answer was served), and `properties: {<name>: text operators}` (the caller's
 * `Svc-Property-<name>` values; `svc-session-id`, `svc-session-path` and `svc-session-name`, which a
 * record shows among its properties, read the session columns they are shown from). The leaf's top-level `properties` is the same, and `response.status`
 * / `response.model` the HTTP status and the model the provider answered with. `feedback.*` (the
 * reference's Partial_FeedbackTableToOperators_) reads the request's user feedback
 * (`request_feedback`, at most one per request): rating (boolean, true a thumbs up), created_at, and
 * id (a UUID here, so text operators where the reference has number ones); the reference's
 * response_id is left out: feedback here is keyed by the request, and no response id is stored apart
 * from the provider's body.
 *
 * Null semantics (documented behaviour): for `request.*`, `request_response_rmt.*`, `response.*`,
 * `feedback.*` and `properties.*` fields a missing value (NULL, an absent property, a request
 * without feedback) matches `not-equals` and `not-contains` and nothing else; boolean fields have only
 * `equals`, so a missing value matches no boolean condition (`feedback.rating: {equals: false}` is
 * a thumbs down, not "no thumbs up"). `prompts_versions.*` conditions match only
 * requests made with a prompt version (`request_log.prompt_version_id`) of the caller's organization.
 * `request_response_rmt.provider` matches the provider as a record shows it (the reference's upper-case
 * ProviderName: `OPENAI`, `X` for xai; admin/ingest.ts providerLogName) or its config name (`openai`,
 * `xai`), with every operator case-insensitive: a provider name has no case. Property names have none
 * either (they come from `Svc-Property-<Name>` headers and are stored lower-cased,
 * proxy/pipeline/headers.ts), so a filter's property name is lower-cased too: `Env` finds `env`.
 * `contains` / `not-contains` are case-insensitive substring tests (`%` and `_` in the value are
 * literal); `like` / `ilike` take a SQL LIKE pattern as given. `request.model` is the requested model
 * as the record shows it, without the `<provider>/` prefix (stored so, admin/ingest.ts), on every path.
 */
import { define, refine, string, type Struct } from 'superstruct';
import { PROVIDERS } from '../shared/providers.ts';
import { escapeLike, type Fragment, type Sql } from './db.ts';
import { HttpError } from './http.ts';
import { isUuid } from './validation.ts';

/** Most branches on any path from the root to a leaf (`{left, operator, right}` nesting). */
export const MAX_FILTER_DEPTH = 32;
/** Most operator conditions in one filter (keeps the statement far below PostgreSQL's parameter limit). */
export const MAX_FILTER_CONDITIONS = 1000;
/** Most nodes (leaves, branches and `"all"`) in one filter. */
export const MAX_FILTER_NODES = 4000;

/** Operators on text fields. */
export const TEXT_OPERATORS = ['equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains'] as const;
/** Operators on timestamp fields (values: ISO-8601 date or date-time). */
export const TIMESTAMP_OPERATORS = ['equals', 'gte', 'lte', 'lt', 'gt'] as const;
/** Operators on number fields. */
export const NUMBER_OPERATORS = ['not-equals', 'equals', 'gte', 'lte', 'lt', 'gt'] as const;
/** Operators on boolean fields (the reference's Partial_BooleanOperators_; values: true or false). */
export const BOOLEAN_OPERATORS = ['equals'] as const;

type TextOp = (typeof TEXT_OPERATORS)[number];
type TimestampOp = (typeof TIMESTAMP_OPERATORS)[number];
type NumberOp = (typeof NUMBER_OPERATORS)[number];
type BooleanOp = (typeof BOOLEAN_OPERATORS)[number];
type FieldKind = 'text' | 'timestamp' | 'number' | 'boolean';
/** A field's kind, or `properties`: an object of property name → text operators. */
type MemberKind = FieldKind | 'properties';

/** `request.*` fields and their kinds (the seed's Partial_RequestTableToOperators_). */
export const REQUEST_FIELDS = {
  prompt: 'text',
  created_at: 'timestamp',
  user_id: 'text',
  auth_hash: 'text',
  org_id: 'text',
  id: 'text',
  node_id: 'text',
  model: 'text',
  modelOverride: 'text',
  path: 'text',
  country_code: 'text',
  prompt_id: 'text',
} as const satisfies Record<string, FieldKind>;

/** `prompts_versions.*` fields and their kinds (the seed's Partial_PromptVersionsToOperators_). */
export const PROMPT_VERSION_FIELDS = {
  minor_version: 'number',
  major_version: 'number',
  id: 'text',
  prompt_v2: 'text',
} as const satisfies Record<string, FieldKind>;

/**
 * `sessions_request_response_rmt.*` fields (the reference's Partial_SessionsRequestResponseRMTToOperators_;
 * of it, the session id and name are stored): the request's session (`request_log.session_id`:
 * `Svc-Session-Id`, else Claude Code's or Codex's own session id) and the `Svc-Session-Name` it
 * was sent with (`request_log.session_name`).
 */
export const SESSION_FIELDS = {
  session_session_id: 'text',
  session_session_name: 'text',
} as const satisfies Record<string, FieldKind>;

/**
 * `request_response_rmt.*` fields and their kinds (the part of the reference's
 * Partial_RequestResponseRMTToOperators_ this log stores); units: latency and time_to_first_token ms,
 * cost USD, token counts tokens. `cached` is true for a response-cache hit (`cache_reference_id` set).
 */
export const RMT_FIELDS = {
  provider: 'text',
  model: 'text',
  user_id: 'text',
  status: 'number',
  latency: 'number',
  time_to_first_token: 'number',
  cost: 'number',
  prompt_tokens: 'number',
  completion_tokens: 'number',
  total_tokens: 'number',
  prompt_cache_read_tokens: 'number',
  prompt_cache_write_tokens: 'number',
  request_created_at: 'timestamp',
  response_created_at: 'timestamp',
  updated_at: 'timestamp',
  request_id: 'text',
  target_url: 'text',
  prompt_id: 'text',
  prompt_version: 'text',
  session_id: 'text',
  cache_enabled: 'boolean',
  cached: 'boolean',
  cache_reference_id: 'text',
  properties: 'properties',
} as const satisfies Record<string, MemberKind>;

/**
 * `feedback.*` fields (the reference's Partial_FeedbackTableToOperators_ but for response_id, which
 * has no stored counterpart): the request's feedback row. `id` is a UUID here (text operators), not
 * the reference's number.
 */
export const FEEDBACK_FIELDS = {
  id: 'text',
  created_at: 'timestamp',
  rating: 'boolean',
} as const satisfies Record<string, FieldKind>;

/** `response.*` fields (of the reference's Partial_ResponseTableToOperators_): the HTTP status and the model the provider answered with. */
export const RESPONSE_FIELDS = {
  status: 'number',
  model: 'text',
} as const satisfies Record<string, FieldKind>;

/** Longest property name a `properties` filter accepts (characters). */
export const MAX_PROPERTY_NAME = 1000;

/** Operators of a text field: each present operator is a condition; they AND together. */
export type TextOperators = Partial<Record<TextOp, string>>;
/** Operators of a timestamp field (ISO-8601 strings). */
export type TimestampOperators = Partial<Record<TimestampOp, string>>;
/** Operators of a number field. */
export type NumberOperators = Partial<Record<NumberOp, number>>;
/** Operators of a boolean field. */
export type BooleanOperators = Partial<Record<BooleanOp, boolean>>;

/** Conditions on properties: property name → text operators (an absent property is NULL). */
export type PropertyOperators = Record<string, TextOperators>;

type OperatorsOf<K extends MemberKind> = K extends 'timestamp'
  ? TimestampOperators
  : K extends 'number'
    ? NumberOperators
    : K extends 'boolean'
      ? BooleanOperators
      : K extends 'properties'
        ? PropertyOperators
        : TextOperators;

/**
 * A leaf: conditions on the request (`request`, `response`, `request_response_rmt`, `properties`),
 * on the prompt version it was made with, on its coding session, and on its user feedback.
 */
export interface FilterLeaf {
  request?: { [K in keyof typeof REQUEST_FIELDS]?: OperatorsOf<(typeof REQUEST_FIELDS)[K]> };
  response?: { [K in keyof typeof RESPONSE_FIELDS]?: OperatorsOf<(typeof RESPONSE_FIELDS)[K]> };
  request_response_rmt?: { [K in keyof typeof RMT_FIELDS]?: OperatorsOf<(typeof RMT_FIELDS)[K]> };
  properties?: PropertyOperators;
  prompts_versions?: { [K in keyof typeof PROMPT_VERSION_FIELDS]?: OperatorsOf<(typeof PROMPT_VERSION_FIELDS)[K]> };
  sessions_request_response_rmt?: { [K in keyof typeof SESSION_FIELDS]?: TextOperators };
  feedback?: { [K in keyof typeof FEEDBACK_FIELDS]?: OperatorsOf<(typeof FEEDBACK_FIELDS)[K]> };
}
/** A branch: both sides (`and`) or either side (`or`). */
export interface FilterBranch {
  left: FilterNode;
  operator: 'and' | 'or';
  right: FilterNode;
}
/** A filter tree node. */
export type FilterNode = 'all' | FilterLeaf | FilterBranch;

/** A validation problem: where (path below the filter) and what. */
export interface FilterProblem {
  path: Array<string | number>;
  message: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * Parses an ISO-8601 date (`2024-05-01`) or date-time (`2024-05-01T10:00:00.123+02:00`; no offset
 * means UTC; an offset at most ±15:59, as PostgreSQL takes) into the canonical text PostgreSQL reads
 * as `timestamptz`.
 * @returns the canonical text, or null when the text is not a valid ISO-8601 date or date-time.
 */
export function parseIsoTimestamp(text: string): string | null {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac, off] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  if (day > days || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  let offset = '+00:00';
  if (off && off !== 'Z' && off !== 'z') {
    const om = /^([+-])(\d{2}):?(\d{2})?$/.exec(off);
    // PostgreSQL takes offsets up to ±15:59 (time zone displacement out of range beyond); real ones stop at ±14:00.
    if (!om || Number(om[2]) > 15 || Number(om[3] ?? '0') > 59) return null;
    offset = `${om[1]}${om[2]}:${om[3] ?? '00'}`;
  }
  const fraction = frac ? `.${frac.slice(0, 6)}` : '';
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${offset}`;
}

/**
 * Superstruct struct of an ISO-8601 date or date-time (see {@link parseIsoTimestamp}); the value
 * stays the caller's text.
 */
export const IsoTimestampStruct: Struct<string, null> = refine(string(), 'timestamp', (v) =>
  parseIsoTimestamp(v) === null ? `expected an ISO-8601 date or date-time, got ${JSON.stringify(v.slice(0, 100))}` : true,
);

/** True when a LIKE pattern ends with an unpaired escape character (PostgreSQL rejects those). */
function endsWithEscape(pattern: string): boolean {
  let n = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

const OPERATORS_OF_KIND: Record<FieldKind, readonly string[]> = {
  text: TEXT_OPERATORS,
  timestamp: TIMESTAMP_OPERATORS,
  number: NUMBER_OPERATORS,
  boolean: BOOLEAN_OPERATORS,
};

function checkOperators(value: unknown, kind: FieldKind, path: Array<string | number>, budget: { conditions: number }): FilterProblem | null {
  if (!isPlainObject(value)) return { path, message: `expected an object of ${kind} operators, got ${describe(value)}` };
  const allowed: readonly string[] = OPERATORS_OF_KIND[kind];
  for (const [op, v] of Object.entries(value)) {
    const p = [...path, op];
    if (!allowed.includes(op)) return { path: p, message: `unknown ${kind} operator; expected one of ${allowed.join(', ')}` };
    if (++budget.conditions > MAX_FILTER_CONDITIONS) return { path: p, message: `a filter may hold at most ${MAX_FILTER_CONDITIONS} conditions` };
    if (kind === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) return { path: p, message: `expected a number, got ${describe(v)}` };
    } else if (kind === 'boolean') {
      if (typeof v !== 'boolean') return { path: p, message: `expected a boolean (true or false), got ${describe(v)}` };
    } else if (typeof v !== 'string') {
      return { path: p, message: `expected a string, got ${describe(v)}` };
    } else if (v.includes('\u0000')) {
      return { path: p, message: 'must not contain the character U+0000' };
    } else if (kind === 'timestamp') {
      if (parseIsoTimestamp(v) === null) return { path: p, message: `expected an ISO-8601 date or date-time, got ${JSON.stringify(v)}` };
    } else if ((op === 'like' || op === 'ilike') && endsWithEscape(v)) {
      return { path: p, message: 'a LIKE pattern must not end with an unpaired escape character (\\)' };
    }
  }
  return null;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/** Checks `{<property name>: text operators}` at `path`. */
function checkProperties(value: unknown, path: Array<string | number>, budget: { conditions: number }): FilterProblem | null {
  if (!isPlainObject(value)) return { path, message: `expected an object of property names, got ${describe(value)}` };
  for (const [name, ops] of Object.entries(value)) {
    const p = [...path, name];
    if (name.length === 0) return { path: p, message: 'a property name must not be empty' };
    if (name.length > MAX_PROPERTY_NAME) return { path: p, message: `a property name may be at most ${MAX_PROPERTY_NAME} characters` };
    if (name.includes('\u0000')) return { path: p, message: 'must not contain the character U+0000' };
    if (ops === undefined) continue;
    const problem = checkOperators(ops, 'text', p, budget);
    if (problem) return problem;
  }
  return null;
}

/** The members of a leaf: each a table of fields, or `properties`. */
const LEAF_MEMBERS: Record<string, Record<string, MemberKind> | 'properties'> = {
  request: REQUEST_FIELDS,
  response: RESPONSE_FIELDS,
  request_response_rmt: RMT_FIELDS,
  properties: 'properties',
  prompts_versions: PROMPT_VERSION_FIELDS,
  sessions_request_response_rmt: SESSION_FIELDS,
  feedback: FEEDBACK_FIELDS,
};
const LEAF_SHAPE = `{${Object.keys(LEAF_MEMBERS).map((k) => `${k}?`).join(', ')}}`;

function checkLeaf(node: Record<string, unknown>, path: Array<string | number>, budget: { conditions: number }): FilterProblem | null {
  for (const [table, fields] of Object.entries(node)) {
    if (!own(LEAF_MEMBERS, table)) {
      return {
        path: [...path, table],
        message: `unknown key; a filter node is "all", a leaf ${LEAF_SHAPE} or a branch {left, operator, right}`,
      };
    }
    if (fields === undefined) continue;
    const known = LEAF_MEMBERS[table]!;
    if (known === 'properties') {
      const problem = checkProperties(fields, [...path, table], budget);
      if (problem) return problem;
      continue;
    }
    if (!isPlainObject(fields)) return { path: [...path, table], message: `expected an object of fields, got ${describe(fields)}` };
    for (const [field, ops] of Object.entries(fields)) {
      if (!own(known, field)) return { path: [...path, table, field], message: `unknown field; expected one of ${Object.keys(known).join(', ')}` };
      if (ops === undefined) continue;
      const kind = known[field]!;
      const problem = kind === 'properties' ? checkProperties(ops, [...path, table, field], budget) : checkOperators(ops, kind, [...path, table, field], budget);
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * Validates a filter tree.
 * @returns null when valid, else the first problem (path relative to the filter, and message).
 */
export function checkFilter(value: unknown): FilterProblem | null {
  const budget = { conditions: 0, nodes: 0 };
  const visit = (node: unknown, path: Array<string | number>, depth: number): FilterProblem | null => {
    if (++budget.nodes > MAX_FILTER_NODES) return { path, message: `a filter may hold at most ${MAX_FILTER_NODES} nodes` };
    if (node === 'all') return null;
    if (!isPlainObject(node)) {
      return { path, message: `expected "all", a leaf ${LEAF_SHAPE} or a branch {left, operator, right}, got ${typeof node === 'string' ? JSON.stringify(node) : describe(node)}` };
    }
    if (own(node, 'operator') || own(node, 'left') || own(node, 'right')) {
      if (depth >= MAX_FILTER_DEPTH) return { path, message: `filter nested deeper than ${MAX_FILTER_DEPTH} branches` };
      for (const k of Object.keys(node)) {
        if (k !== 'left' && k !== 'right' && k !== 'operator') return { path: [...path, k], message: 'unknown key in a branch {left, operator, right}' };
      }
      if (node.operator !== 'and' && node.operator !== 'or') {
        return { path: [...path, 'operator'], message: `expected "and" or "or", got ${typeof node.operator === 'string' ? JSON.stringify(node.operator) : describe(node.operator)}` };
      }
      for (const side of ['left', 'right'] as const) {
        if (node[side] === undefined) return { path: [...path, side], message: 'required' };
        const problem = visit(node[side], [...path, side], depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    return checkLeaf(node, path, budget);
  };
  return visit(value, [], 0);
}

/**
 * Superstruct struct of a filter tree: the failure names the full path of the mistake
 * (e.g. `filter.left.request.created_at.gte`) and what is wrong with it.
 */
export const FilterStruct: Struct<FilterNode, null> = define<FilterNode>('filter', (value, context) => {
  // describeStructError says "required" for a missing value; this message says what is expected.
  if (value === undefined) return { message: 'expected a filter ("all", a leaf or a branch)' };
  const problem = checkFilter(value);
  if (!problem) return true;
  return { path: [...context.path, ...problem.path], message: problem.message };
});

const and = (sql: Sql, parts: Fragment[]): Fragment =>
  parts.length === 0 ? sql`true` : parts.reduce((a, b) => sql`${a} and ${b}`);

/**
 * A text condition. `col` builds the column expression (fresh per use); `nullable` says a NULL
 * value should satisfy the negative operators (request fields) rather than fail them.
 */
function textCondition(sql: Sql, col: () => Fragment, op: TextOp, value: string, nullable: boolean): Fragment {
  switch (op) {
    case 'equals':
      return sql`${col()} = ${value}::text`;
    case 'not-equals':
      return nullable ? sql`${col()} is distinct from ${value}::text` : sql`${col()} <> ${value}::text`;
    case 'like':
      return sql`${col()} like ${value}::text`;
    case 'ilike':
      return sql`${col()} ilike ${value}::text`;
    case 'contains':
      return sql`${col()} ilike ${`%${escapeLike(value)}%`}::text`;
    case 'not-contains':
      return nullable
        ? sql`(${col()} is null or ${col()} not ilike ${`%${escapeLike(value)}%`}::text)`
        : sql`${col()} not ilike ${`%${escapeLike(value)}%`}::text`;
  }
}

/**
 * A condition on a uuid column: `equals` / `not-equals` compare as uuid (index-friendly; a value
 * that is not a UUID equals nothing), the pattern operators compare the canonical text form.
 */
function uuidCondition(sql: Sql, col: () => Fragment, op: TextOp, value: string, nullable: boolean): Fragment {
  if (op === 'equals') return isUuid(value) ? sql`${col()} = ${value.toLowerCase()}::uuid` : sql`false`;
  if (op === 'not-equals') {
    if (!isUuid(value)) return nullable ? sql`true` : sql`${col()} is not null`;
    return nullable ? sql`${col()} is distinct from ${value.toLowerCase()}::uuid` : sql`${col()} <> ${value.toLowerCase()}::uuid`;
  }
  return textCondition(sql, () => sql`${col()}::text`, op, value, nullable);
}

function timestampCondition(sql: Sql, col: () => Fragment, op: TimestampOp, value: string): Fragment {
  const ts = parseIsoTimestamp(value);
  if (ts === null) throw new HttpError(400, `invalid filter timestamp ${JSON.stringify(value)}`);
  switch (op) {
    case 'equals':
      return sql`${col()} = ${ts}::text::timestamptz`;
    case 'gte':
      return sql`${col()} >= ${ts}::text::timestamptz`;
    case 'lte':
      return sql`${col()} <= ${ts}::text::timestamptz`;
    case 'lt':
      return sql`${col()} < ${ts}::text::timestamptz`;
    case 'gt':
      return sql`${col()} > ${ts}::text::timestamptz`;
  }
}

/** A number condition; `nullable` says a NULL value should satisfy `not-equals` rather than fail it. */
function numberCondition(sql: Sql, col: () => Fragment, op: NumberOp, value: number, nullable: boolean): Fragment {
  const v = String(value);
  switch (op) {
    case 'equals':
      return sql`${col()} = ${v}::float8`;
    case 'not-equals':
      return nullable ? sql`${col()} is distinct from ${v}::float8` : sql`${col()} <> ${v}::float8`;
    case 'gte':
      return sql`${col()} >= ${v}::float8`;
    case 'lte':
      return sql`${col()} <= ${v}::float8`;
    case 'lt':
      return sql`${col()} < ${v}::float8`;
    case 'gt':
      return sql`${col()} > ${v}::float8`;
  }
}

/**
 * A boolean condition. Boolean fields have no negative operator, so a NULL value (a request without
 * feedback) matches neither `equals: true` nor `equals: false`, as the documented NULL rule has it.
 */
function booleanCondition(sql: Sql, col: () => Fragment, op: BooleanOp, value: boolean): Fragment {
  switch (op) {
    case 'equals':
      return sql`${col()} = ${value}::boolean`;
  }
}

type Column = { kind: 'text' | 'uuid' | 'timestamp' | 'number' | 'boolean' | 'provider'; expr: (sql: Sql) => Fragment };

/**
 * The providers a record shows under another name than their config name's upper case (xai → `X`,
 * ollama → `LOCAL`, gemini → `GOOGLE`: shared/providers.ts `logName`).
 */
const RENAMED_PROVIDERS = Object.values(PROVIDERS).filter((p) => p.logName !== p.name.toUpperCase());

/**
 * `r.provider` as a record shows it (admin/ingest.ts providerLogName: a known provider's `logName`, else
 * the stored name upper-cased), in SQL. Only the renamed providers need a branch of their own.
 */
function shownProvider(sql: Sql): Fragment {
  const whens = RENAMED_PROVIDERS.map((p) => sql`when ${p.name}::text then ${p.logName}::text`);
  if (whens.length === 0) return sql`upper(r.provider)`;
  return sql`(case r.provider ${whens.reduce((a, b) => sql`${a} ${b}`)} else upper(r.provider) end)`;
}

/**
 * A condition on the provider: the positive operators match when the name the record shows or the stored
 * config name matches, ignoring case (`OPENAI`, `openai` and `OpenAI` find the same rows; `X` and `xai` find
 * xai's); `not-equals` and `not-contains` are their negation (`r.provider` is never NULL).
 */
function providerCondition(sql: Sql, op: TextOp, value: string): Fragment {
  const either = (test: (col: Fragment) => Fragment): Fragment => sql`(${test(shownProvider(sql))} or ${test(sql`r.provider`)})`;
  const contains = () => either((col) => sql`${col} ilike ${`%${escapeLike(value)}%`}::text`);
  const equals = () => either((col) => sql`lower(${col}) = lower(${value}::text)`);
  switch (op) {
    case 'equals':
      return equals();
    case 'not-equals':
      return sql`not ${equals()}`;
    case 'like':
    case 'ilike':
      return either((col) => sql`${col} ilike ${value}::text`);
    case 'contains':
      return contains();
    case 'not-contains':
      return sql`not ${contains()}`;
  }
}

/** `request.*` field → column of `request_log r` (fixed expressions; never built from input). */
const REQUEST_COLUMNS: Record<keyof typeof REQUEST_FIELDS, Column> = {
  prompt: { kind: 'text', expr: (sql) => sql`r.prompt_text` },
  created_at: { kind: 'timestamp', expr: (sql) => sql`r.created_at` },
  user_id: { kind: 'text', expr: (sql) => sql`r.user_id` },
  auth_hash: { kind: 'text', expr: (sql) => sql`(select k.key_hash from api_key k where k.id = r.api_key_id)` },
  org_id: { kind: 'uuid', expr: (sql) => sql`r.organization_id` },
  id: { kind: 'uuid', expr: (sql) => sql`r.id` },
  node_id: { kind: 'text', expr: (sql) => sql`null::text` },
  model: { kind: 'text', expr: (sql) => sql`r.request_model` },
  modelOverride: { kind: 'text', expr: (sql) => sql`r.model_override` },
  path: { kind: 'text', expr: (sql) => sql`r.path` },
  country_code: { kind: 'text', expr: (sql) => sql`null::text` },
  prompt_id: { kind: 'uuid', expr: (sql) => sql`r.prompt_id` },
};

/** `sessions_request_response_rmt.*` field → column of `request_log r` (indexed with the organization). */
const SESSION_COLUMNS: Record<keyof typeof SESSION_FIELDS, Column> = {
  session_session_id: { kind: 'text', expr: (sql) => sql`r.session_id` },
  session_session_name: { kind: 'text', expr: (sql) => sql`r.session_name` },
};

/** `request_response_rmt.*` field → column of `request_log r` (`properties` is compiled apart). */
const RMT_COLUMNS: Record<Exclude<keyof typeof RMT_FIELDS, 'properties'>, Column> = {
  // Read by providerCondition, which matches the shown name as well (`expr` is the stored config name).
  provider: { kind: 'provider', expr: (sql) => sql`r.provider` },
  model: { kind: 'text', expr: (sql) => sql`r.request_model` },
  user_id: { kind: 'text', expr: (sql) => sql`r.user_id` },
  status: { kind: 'number', expr: (sql) => sql`r.status` },
  latency: { kind: 'number', expr: (sql) => sql`r.delay_ms` },
  time_to_first_token: { kind: 'number', expr: (sql) => sql`r.time_to_first_token` },
  cost: { kind: 'number', expr: (sql) => sql`r.cost_usd` },
  prompt_tokens: { kind: 'number', expr: (sql) => sql`r.prompt_tokens` },
  completion_tokens: { kind: 'number', expr: (sql) => sql`r.completion_tokens` },
  total_tokens: { kind: 'number', expr: (sql) => sql`r.total_tokens` },
  prompt_cache_read_tokens: { kind: 'number', expr: (sql) => sql`r.prompt_cache_read_tokens` },
  prompt_cache_write_tokens: { kind: 'number', expr: (sql) => sql`r.prompt_cache_write_tokens` },
  request_created_at: { kind: 'timestamp', expr: (sql) => sql`r.created_at` },
  response_created_at: { kind: 'timestamp', expr: (sql) => sql`r.response_created_at` },
  // Set by PostgreSQL when the row is stored (default now()) and never changed: the ingestion order.
  updated_at: { kind: 'timestamp', expr: (sql) => sql`r.updated_at` },
  request_id: { kind: 'uuid', expr: (sql) => sql`r.id` },
  target_url: { kind: 'text', expr: (sql) => sql`r.target_url` },
  prompt_id: { kind: 'uuid', expr: (sql) => sql`r.prompt_id` },
  prompt_version: { kind: 'text', expr: (sql) => sql`r.prompt_version` },
  session_id: { kind: 'text', expr: (sql) => sql`r.session_id` },
  cache_enabled: { kind: 'boolean', expr: (sql) => sql`r.cache_enabled` },
  // The same test as the `isCached` body flag (admin/resources/requests/store.ts): a hit names its source.
  cached: { kind: 'boolean', expr: (sql) => sql`(r.cache_reference_id is not null)` },
  cache_reference_id: { kind: 'uuid', expr: (sql) => sql`r.cache_reference_id` },
};

/** `response.*` field → column of `request_log r`. */
const RESPONSE_COLUMNS: Record<keyof typeof RESPONSE_FIELDS, Column> = {
  status: { kind: 'number', expr: (sql) => sql`r.status` },
  model: { kind: 'text', expr: (sql) => sql`r.response_model` },
};

/**
 * `feedback.*` field → the request's `request_feedback` value, as a scalar subquery (unique on
 * request_id, so one row or NULL) rather than a join: every consumer of the filter (query, count,
 * dashboard, datasets, sessions) reads plain `request_log r`, and a NULL for a request without
 * feedback keeps the NULL rule of the other fields.
 */
const FEEDBACK_COLUMNS: Record<keyof typeof FEEDBACK_FIELDS, Column> = {
  id: { kind: 'uuid', expr: (sql) => sql`(select f.id from request_feedback f where f.request_id = r.id)` },
  created_at: { kind: 'timestamp', expr: (sql) => sql`(select f.created_at from request_feedback f where f.request_id = r.id)` },
  rating: { kind: 'boolean', expr: (sql) => sql`(select f.rating from request_feedback f where f.request_id = r.id)` },
};

/** `prompts_versions.*` field → column of `prompt_version pv`. */
const PROMPT_VERSION_COLUMNS: Record<keyof typeof PROMPT_VERSION_FIELDS, Column> = {
  minor_version: { kind: 'number', expr: (sql) => sql`pv.minor_version` },
  major_version: { kind: 'number', expr: (sql) => sql`pv.major_version` },
  id: { kind: 'uuid', expr: (sql) => sql`pv.id` },
  prompt_v2: { kind: 'uuid', expr: (sql) => sql`pv.prompt_id` },
};

function fieldConditions(sql: Sql, columns: Record<string, Column>, fields: Record<string, Record<string, unknown> | undefined>, nullable: boolean): Fragment[] {
  const out: Fragment[] = [];
  for (const [field, ops] of Object.entries(fields)) {
    const column = columns[field];
    if (!column) throw new HttpError(400, `unknown filter field ${JSON.stringify(field)}`);
    if (!ops) continue;
    const col = () => column.expr(sql);
    for (const [op, value] of Object.entries(ops)) {
      if (value === undefined) continue;
      if (column.kind === 'number') out.push(numberCondition(sql, col, op as NumberOp, value as number, nullable));
      else if (column.kind === 'boolean') out.push(booleanCondition(sql, col, op as BooleanOp, value as boolean));
      else if (column.kind === 'timestamp') out.push(timestampCondition(sql, col, op as TimestampOp, value as string));
      else if (column.kind === 'uuid') out.push(uuidCondition(sql, col, op as TextOp, value as string, nullable));
      else if (column.kind === 'provider') out.push(providerCondition(sql, op as TextOp, value as string));
      else out.push(textCondition(sql, col, op as TextOp, value as string, nullable));
    }
  }
  return out;
}

/**
 * The properties a record shows that are not stored among its properties but in columns of their own
 * (admin/resources/requests/svc-request.ts `shownProperties`): a filter on one reads its column, so a
 * reader filtering on what the record shows finds it.
 */
const SHOWN_PROPERTY_COLUMNS: Readonly<Record<string, (sql: Sql) => Fragment>> = {
  // As shownProperties: the column when it holds a value, else a property the client stored by that name.
  'svc-session-id': (sql) => sql`coalesce(nullif(r.session_id, ''), r.properties ->> 'svc-session-id')`,
  'svc-session-path': (sql) => sql`coalesce(nullif(r.session_path, ''), r.properties ->> 'svc-session-path')`,
  'svc-session-name': (sql) => sql`coalesce(nullif(r.session_name, ''), r.properties ->> 'svc-session-name')`,
};

/**
 * Conditions on the stored properties (`r.properties ->> name`; an absent property is NULL). The name is
 * lower-cased as the proxy stores it (proxy/pipeline/headers.ts logHeaders: header names have no case).
 */
function propertyConditions(sql: Sql, properties: Record<string, Record<string, unknown> | undefined>): Fragment[] {
  const out: Fragment[] = [];
  for (const [given, ops] of Object.entries(properties)) {
    if (!ops) continue;
    const name = given.toLowerCase();
    const shown = Object.hasOwn(SHOWN_PROPERTY_COLUMNS, name) ? SHOWN_PROPERTY_COLUMNS[name]! : null;
    const col = () => (shown !== null ? shown(sql) : sql`(r.properties ->> ${name}::text)`);
    for (const [op, value] of Object.entries(ops)) {
      if (value === undefined) continue;
      out.push(textCondition(sql, col, op as TextOp, value as string, true));
    }
  }
  return out;
}

type Fields = Record<string, Record<string, unknown>>;

function compileNode(sql: Sql, node: FilterNode, depth: number): Fragment {
  if (depth > MAX_FILTER_DEPTH) throw new HttpError(400, `filter nested deeper than ${MAX_FILTER_DEPTH} branches`);
  if (node === 'all') return sql`true`;
  if ('operator' in node) {
    const left = compileNode(sql, node.left, depth + 1);
    const right = compileNode(sql, node.right, depth + 1);
    return node.operator === 'and' ? sql`(${left} and ${right})` : sql`(${left} or ${right})`;
  }
  const parts = fieldConditions(sql, REQUEST_COLUMNS, (node.request ?? {}) as Fields, true);
  parts.push(...fieldConditions(sql, RESPONSE_COLUMNS, (node.response ?? {}) as Fields, true));
  const { properties: rmtProperties, ...rmt } = node.request_response_rmt ?? {};
  parts.push(...fieldConditions(sql, RMT_COLUMNS, rmt as Fields, true));
  parts.push(...propertyConditions(sql, (rmtProperties ?? {}) as Fields));
  parts.push(...propertyConditions(sql, (node.properties ?? {}) as Fields));
  parts.push(...fieldConditions(sql, SESSION_COLUMNS, (node.sessions_request_response_rmt ?? {}) as Fields, true));
  parts.push(...fieldConditions(sql, FEEDBACK_COLUMNS, (node.feedback ?? {}) as Fields, true));
  const pvParts = fieldConditions(sql, PROMPT_VERSION_COLUMNS, (node.prompts_versions ?? {}) as Fields, false);
  if (pvParts.length > 0) {
    parts.push(sql`exists (
      select 1 from prompt_version pv
      where pv.id = r.prompt_version_id and pv.organization_id = r.organization_id and ${and(sql, pvParts)})`);
  }
  return parts.length === 0 ? sql`true` : sql`(${and(sql, parts)})`;
}

/**
 * Compiles a filter tree to a SQL condition on `request_log r`, the organization condition ANDed on
 * top: `r.organization_id = $org and (<filter>)`. Use as `sql\`select ... from request_log r where ${frag}\``.
 * @param node a filter that passed {@link checkFilter} / {@link FilterStruct}.
 * @throws {HttpError} 400 for a node that did not pass validation (defensive; routes validate first).
 */
export function compileFilter(sql: Sql, organizationId: string, node: FilterNode): Fragment {
  const problem = checkFilter(node);
  if (problem) throw new HttpError(400, `invalid filter: ${['filter', ...problem.path].join('.')}: ${problem.message}`);
  return sql`r.organization_id = ${organizationId} and ${compileNode(sql, node, 0)}`;
}
