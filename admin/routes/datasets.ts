/**
 * Datasets over REST:
 * - `POST /v1/experiment/dataset/random` {datasetName, filter, offset?, limit?} (no other members) →
 *   `{datasetId}`: the organization's logged requests matching the filter, in random order, page
 *   `offset`/`limit` (default 100, at most 10,000), become a new dataset, in one transaction. No
 *   match: an empty dataset.
 * - `POST /v1/experiment/dataset/query` {promptVersionId?} → DatasetResult[] (`{id, name, created_at}`),
 *   newest first; with `promptVersionId`, the datasets holding a request made with that version.
 * - `POST /v1/experiment/dataset/{datasetId}/query` {offset?, limit?} → the dataset's rows in order:
 *   `{request_id, position, created_at, request_body, response_body}` (`created_at`: the request's).
 */
import type Router from '@koa/router';
import { object, optional, type } from 'superstruct';
import type { Sql } from '../db.ts';
import { compileFilter, FilterStruct, readSafeBody, sizedText, Text, type FilterNode } from '../filter.ts';
import { auth, HttpError, isUuid, ok, uuidParam } from '../http.ts';
import { DEFAULT_LIMIT, LimitStruct, OffsetStruct } from './requests.ts';

/** Body of `POST /v1/experiment/dataset/random` (the reference RandomDatasetParams; no other members). */
export const RandomDatasetBody = object({
  datasetName: sizedText(1000),
  filter: FilterStruct,
  offset: optional(OffsetStruct),
  limit: optional(LimitStruct),
});

/** Body of `POST /v1/experiment/dataset/query`. */
export const ListDatasetsBody = type({ promptVersionId: optional(Text) });

/** Body of `POST /v1/experiment/dataset/{datasetId}/query` (may be empty). */
export const DatasetRowsBody = object({ offset: optional(OffsetStruct), limit: optional(LimitStruct) });

/**
 * Creates dataset `name` from a random sample of the organization's requests matching `filter`
 * (page `offset`/`limit` of the random order), dataset and rows in one transaction.
 * @returns the new dataset's id and how many rows it holds.
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function createRandomDataset(
  sql: Sql,
  organizationId: string,
  input: { datasetName: string; filter: FilterNode; offset?: number; limit?: number },
): Promise<{ datasetId: string; rows: number }> {
  const where = compileFilter(sql, organizationId, input.filter);
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [ds] = await tx<{ id: string }[]>`insert into dataset (organization_id, name) values (${organizationId}, ${input.datasetName}) returning id`;
    const inserted = await tx`
      insert into dataset_row (dataset_id, request_id, organization_id, position)
      select ${ds!.id}, picked.id, ${organizationId}, (row_number() over ())::int - 1
      from (
        select r.id from request_log r
        where ${where}
        order by random()
        limit ${input.limit ?? DEFAULT_LIMIT} offset ${input.offset ?? 0}
      ) picked`;
    return { datasetId: ds!.id, rows: inserted.count };
  }) as Promise<{ datasetId: string; rows: number }>;
}

/** Registers the dataset routes. `maxBodyBytes` bounds request bodies. */
export function datasetRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/experiment/dataset/random', async (ctx) => {
    const body = await readSafeBody(ctx, RandomDatasetBody, maxBodyBytes);
    const created = await createRandomDataset(sql, auth(ctx).organizationId, body);
    ok(ctx, { datasetId: created.datasetId });
  });

  router.post('/v1/experiment/dataset/query', async (ctx) => {
    const body = await readSafeBody(ctx, ListDatasetsBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    let rows: { id: string; name: string; created_at: Date }[];
    if (body.promptVersionId === undefined) {
      rows = await sql`select id, name, created_at from dataset where organization_id = ${organizationId} order by created_at desc, id desc`;
    } else if (!isUuid(body.promptVersionId)) {
      rows = [];
    } else {
      rows = await sql`
        select d.id, d.name, d.created_at from dataset d
        where d.organization_id = ${organizationId} and exists (
          select 1 from dataset_row dr join request_log r on r.id = dr.request_id
          where dr.dataset_id = d.id and r.prompt_version_id = ${body.promptVersionId.toLowerCase()})
        order by d.created_at desc, d.id desc`;
    }
    ok(ctx, rows.map((r) => ({ id: r.id, name: r.name, created_at: r.created_at.toISOString() })));
  });

  router.post('/v1/experiment/dataset/:datasetId/query', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const body = await readSafeBody(ctx, DatasetRowsBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const [ds] = await sql`select id from dataset where id = ${id} and organization_id = ${organizationId}`;
    if (!ds) throw new HttpError(404, `dataset ${id} not found`);
    const rows = await sql<{ request_id: string; position: number; created_at: Date; request_body: unknown; response_body: unknown }[]>`
      select dr.request_id, dr.position, r.created_at, r.request_body, r.response_body
      from dataset_row dr join request_log r on r.id = dr.request_id
      where dr.dataset_id = ${id} and dr.organization_id = ${organizationId}
      order by dr.position
      limit ${body.limit ?? DEFAULT_LIMIT} offset ${body.offset ?? 0}`;
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
}
