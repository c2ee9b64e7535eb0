/** Request bodies of the `/v1/request` routes (superstruct). */
import { boolean, enums, literal, object, optional } from 'superstruct';
import { FilterStruct } from '../../filter.ts';
import { LimitStruct, OffsetStruct } from '../../validation.ts';

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

/** Body of `POST /v1/request/query` (no other members). */
export const RequestQueryBody = object({
  filter: FilterStruct,
  offset: optional(OffsetStruct),
  limit: optional(LimitStruct),
  sort: optional(SortStruct),
  isScored: optional(boolean()),
  isPartOfExperiment: optional(boolean()),
  isCached: optional(boolean()),
  includeInputs: optional(boolean()),
});
