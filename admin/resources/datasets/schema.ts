/** Request bodies of the `/v1/experiment/dataset` routes (superstruct). */
import { object, optional, type } from 'superstruct';
import { FilterStruct } from '../../filter.ts';
import { LimitStruct, OffsetStruct, sizedText, Text } from '../../validation.ts';

/** Body of `POST /v1/experiment/dataset/random` (the reference RandomDatasetParams; no other members). */
export const RandomDatasetBody = object({
  datasetName: sizedText(1000),
  filter: FilterStruct,
  offset: optional(OffsetStruct),
  limit: optional(LimitStruct),
});

/**
 * Body of `POST /v1/experiment/dataset` (no other members): a name of 1–200 characters, a filter, and
 * how many of the newest matching requests to take (1–10,000; default 1000).
 */
export const NewestDatasetBody = object({
  datasetName: sizedText(200),
  filter: FilterStruct,
  limit: optional(LimitStruct),
});

/** Body of `POST /v1/experiment/dataset/query`. */
export const ListDatasetsBody = type({ promptVersionId: optional(Text) });

/** Body of `POST /v1/experiment/dataset/{datasetId}/query` (may be empty). */
export const DatasetRowsBody = object({ offset: optional(OffsetStruct), limit: optional(LimitStruct) });
