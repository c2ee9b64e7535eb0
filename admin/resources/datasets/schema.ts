/** Request bodies of the `/v1/experiment/dataset` routes (superstruct). */
import { array, object, optional, refine, string, type } from 'superstruct';
import { FilterStruct } from '../../filter.ts';
import { isUuid, LimitStruct, OffsetStruct, sizedText, Text } from '../../validation.ts';

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

/**
 * Most request ids `POST /v1/experiment/dataset/{datasetId}/request` takes at once: the route checks
 * every id against the log in one statement and answers a 413 beyond this.
 */
export const MAX_REQUEST_IDS = 1000;

/** A request id: a UUID (either case). */
const RequestId = refine(string(), 'uuid', (v) => (isUuid(v) ? true : 'expected a request id (a UUID)'));

/**
 * Body of `POST /v1/experiment/dataset/{datasetId}/request` (no other members): at least one request
 * id. The upper bound ({@link MAX_REQUEST_IDS}) is the route's, as a 413 rather than a 400.
 */
export const AddRequestsBody = object({
  requestIds: refine(array(RequestId), 'nonEmpty', (v) => (v.length > 0 ? true : 'must hold at least 1 request id')),
});

/** Body of `PATCH /v1/experiment/dataset/{datasetId}` (no other members): the new name, 1–200 characters as at creation. */
export const RenameDatasetBody = object({ datasetName: sizedText(200) });
