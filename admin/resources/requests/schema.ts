/** Request bodies of the `/v1/request` routes (superstruct). */
import { boolean, enums, literal, object, optional, refine, string } from 'superstruct';
import { FilterStruct, IsoTimestampStruct } from '../../filter.ts';
import { isUuid, LimitStruct, OffsetStruct } from '../../validation.ts';

const SortDirection = enums(['asc', 'desc']);

/** `sort` of `POST /v1/request/query`: `random: true`, or a direction per key (the keys of store.ts's SORT_COLUMNS). */
const SortStruct = object({
  random: optional(literal(true)),
  created_at: optional(SortDirection),
  latency: optional(SortDirection),
  total_tokens: optional(SortDirection),
  completion_tokens: optional(SortDirection),
  prompt_tokens: optional(SortDirection),
  user_id: optional(SortDirection),
  body_model: optional(SortDirection),
  request_prompt: optional(SortDirection),
  cost: optional(SortDirection),
  time_to_first_token: optional(SortDirection),
});

/** A request id: a UUID (either case). */
const RequestIdStruct = refine(string(), 'uuid', (v) => (isUuid(v) ? true : 'expected a request id (a UUID)'));

/**
 * `before` of `POST /v1/request/query`: the keyset position, the last row of the previous page as
 * the API showed it (`request_created_at`, `request_id`).
 */
const BeforeStruct = object({ created_at: IsoTimestampStruct, request_id: RequestIdStruct });

/** The members `POST /v1/request/query` and `POST /v1/request/count` share (the selection of rows). */
const selection = {
  filter: FilterStruct,
  isScored: optional(boolean()),
  isPartOfExperiment: optional(boolean()),
  isCached: optional(boolean()),
  includeInputs: optional(boolean()),
};

/**
 * Body of `POST /v1/request/query` (no other members). `bodies: false` (an extension of the
 * reference, default true) lists the rows with `request_body`, `response_body`, `llmSchema` and
 * `response_id` null, so a page is never refused for its bodies' size (the console's table shows
 * none of them; it reads one request's bodies with `GET /v1/request/{id}`). `before` pages by keyset in the default order
 * (created_at desc, id desc), so it cannot be combined with `offset` or `sort`: a 400 naming `before`.
 */
export const RequestQueryBody = refine(
  object({ ...selection, offset: optional(OffsetStruct), limit: optional(LimitStruct), sort: optional(SortStruct), before: optional(BeforeStruct), bodies: optional(boolean()) }),
  'keyset',
  (v) => {
    if (v.before === undefined) return true;
    for (const other of ['offset', 'sort'] as const) {
      if (v[other] !== undefined) {
        return { path: ['before'], message: `cannot be combined with ${other}: keyset paging follows the default order (created_at desc, id desc); drop ${other}` };
      }
    }
    return true;
  },
);

/** Body of `POST /v1/request/count`: the selection members of `POST /v1/request/query`, no paging or sort. */
export const RequestCountBody = object(selection);

/** Body of `POST /v1/request/{requestId}/feedback`: `rating` true (thumbs up) or false (thumbs down); no other members. */
export const FeedbackBody = object({ rating: boolean() });
