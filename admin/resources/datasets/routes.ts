/**
 * Datasets over REST:
 * - `POST /v1/experiment/dataset` {datasetName (1–200 characters), filter, limit? (1–10,000, default
 *   1000)} (no other members) → `{datasetId, rows}`: the `limit` newest of the organization's
 *   requests matching the filter become a new dataset (position 0 the newest), in one transaction;
 *   `rows` says how many it holds (0 when none match).
 * - `POST /v1/experiment/dataset/random` {datasetName, filter, offset?, limit?} (no other members) →
 *   `{datasetId}`: the organization's logged requests matching the filter, in random order, page
 *   `offset`/`limit` (default 100, at most 10,000), become a new dataset, in one transaction. No
 *   match: an empty dataset.
 * - `POST /v1/experiment/dataset/query` {promptVersionId?} → DatasetResult[] (`{id, name, created_at}`),
 *   newest first; with `promptVersionId`, the datasets holding a request made with that version.
 * - `POST /v1/experiment/dataset/{datasetId}/query` {offset?, limit?} → the dataset's rows in order:
 *   `{request_id, position, created_at, request_body, response_body}` (`created_at`: the request's).
 * - `POST /v1/experiment/dataset/{datasetId}/inputs/query` {offset?, limit?} (the reference's
 *   GetDataset) → PromptInputRecord[]: each row's managed-prompt inputs (see {@link toInputRecord}).
 * Adding requests to a dataset, removing one, renaming, deleting and exporting: manage-routes.ts.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { DatasetRowsBody, ListDatasetsBody, NewestDatasetBody, RandomDatasetBody } from './schema.ts';
import { datasetManageRoutes } from './manage-routes.ts';
import { createNewestDataset, createRandomDataset, datasetRows, listDatasets, type DatasetRequestRow } from './store.ts';

/**
 * A dataset row as the reference's PromptInputRecord: `id`, `source_request` and `dataset_row_id`
 * are the request's id (a row is its request within the dataset), `inputs` the prompt inputs it was
 * made with, each value as text (`{}` and `prompt_version` "" without a managed prompt), `created_at`
 * when the row joined the dataset, the bodies as JSON text, and `auto_prompt_inputs` [] (none kept).
 */
function toInputRecord(r: DatasetRequestRow): Record<string, unknown> {
  // No prototype: an input named "__proto__" is a name, not the prototype's setter (which would drop it).
  const inputs = Object.create(null) as Record<string, string>;
  for (const [name, v] of Object.entries(r.prompt_inputs ?? {})) inputs[name] = typeof v === 'string' ? v : JSON.stringify(v);
  return {
    id: r.request_id,
    inputs,
    dataset_row_id: r.request_id,
    source_request: r.request_id,
    prompt_version: r.prompt_version_id ?? '',
    created_at: r.added_at.toISOString(),
    request_body: JSON.stringify(r.request_body ?? null),
    response_body: JSON.stringify(r.response_body ?? null),
    auto_prompt_inputs: [],
  };
}

/**
 * Registers the dataset routes (those of manage-routes.ts too). `maxBodyBytes` bounds request
 * bodies; `maxPageBodyBytes` the body text one page of rows may carry (else 413 naming `limit`).
 */
export function datasetRoutes(router: Router, sql: Sql, maxBodyBytes: number, maxPageBodyBytes?: number): void {
  router.post('/v1/experiment/dataset', async (ctx) => {
    const body = await readSafeBody(ctx, NewestDatasetBody, maxBodyBytes);
    ok(ctx, await createNewestDataset(sql, auth(ctx).organizationId, body));
  });

  router.post('/v1/experiment/dataset/random', async (ctx) => {
    const body = await readSafeBody(ctx, RandomDatasetBody, maxBodyBytes);
    const created = await createRandomDataset(sql, auth(ctx).organizationId, body);
    ok(ctx, { datasetId: created.datasetId });
  });

  router.post('/v1/experiment/dataset/query', async (ctx) => {
    const body = await readSafeBody(ctx, ListDatasetsBody, maxBodyBytes);
    const rows = await listDatasets(sql, auth(ctx).organizationId, body.promptVersionId);
    ok(ctx, rows.map((r) => ({ id: r.id, name: r.name, created_at: r.created_at.toISOString() })));
  });

  router.post('/v1/experiment/dataset/:datasetId/inputs/query', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const body = await readSafeBody(ctx, DatasetRowsBody, maxBodyBytes);
    const rows = await datasetRows(sql, auth(ctx).organizationId, id, body, maxPageBodyBytes);
    if (!rows) throw new HttpError(404, `dataset ${id} not found`);
    ok(ctx, rows.map(toInputRecord));
  });

  router.post('/v1/experiment/dataset/:datasetId/query', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const body = await readSafeBody(ctx, DatasetRowsBody, maxBodyBytes);
    const rows = await datasetRows(sql, auth(ctx).organizationId, id, body, maxPageBodyBytes);
    if (!rows) throw new HttpError(404, `dataset ${id} not found`);
    ok(
      ctx,
      rows.map((r) => ({
        request_id: r.request_id,
        position: r.position,
        created_at: r.created_at.toISOString(),
        request_body: r.request_body ?? null,
        response_body: r.response_body ?? null,
      })),
    );
  });

  datasetManageRoutes(router, sql, maxBodyBytes);
}
