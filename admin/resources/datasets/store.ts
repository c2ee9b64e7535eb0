/**
 * The SQL of datasets: sampling the request log into a new dataset (a random sample, or the newest
 * requests matching a filter), listing an organization's
 * datasets, and reading a dataset's rows. Every statement is scoped to one organization.
 */
import type { Sql } from '../../db.ts';
import { compileFilter, type FilterNode } from '../../filter.ts';
import { DEFAULT_LIMIT, isUuid } from '../../validation.ts';
import { DEFAULT_MAX_PAGE_BODY_BYTES, inIdOrder, pageIdsWithinBudget } from '../requests/page-budget.ts';

/**
 * Creates dataset `name` from the organization's requests matching `filter`, taken in `order`
 * (`random`, or `newest`: created_at desc, id desc), page `offset`/`limit`; row positions follow that
 * order. Dataset and rows in one transaction.
 * @returns the new dataset's id and how many rows it holds.
 * @throws {HttpError} 400 for an invalid filter.
 */
async function createDataset(
  sql: Sql,
  organizationId: string,
  input: { datasetName: string; filter: FilterNode; order: 'random' | 'newest'; offset: number; limit: number },
): Promise<{ datasetId: string; rows: number }> {
  const where = compileFilter(sql, organizationId, input.filter);
  const picked =
    input.order === 'random'
      ? sql`select r.id, random()::float8 as k1, null::timestamptz as k2 from request_log r where ${where} order by 2 limit ${input.limit} offset ${input.offset}`
      : sql`select r.id, null::float8 as k1, r.created_at as k2 from request_log r where ${where} order by r.created_at desc, r.id desc limit ${input.limit} offset ${input.offset}`;
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [ds] = await tx<{ id: string }[]>`insert into dataset (organization_id, name) values (${organizationId}, ${input.datasetName}) returning id`;
    const inserted = await tx`
      insert into dataset_row (dataset_id, request_id, organization_id, position)
      select ${ds!.id}, picked.id, ${organizationId}, (row_number() over (order by picked.k1, picked.k2 desc, picked.id desc))::int - 1
      from (${picked}) picked`;
    return { datasetId: ds!.id, rows: inserted.count };
  }) as Promise<{ datasetId: string; rows: number }>;
}

/**
 * Creates dataset `name` from a random sample of the organization's requests matching `filter`
 * (page `offset`/`limit`, default {@link DEFAULT_LIMIT}, of the random order), dataset and rows in one transaction.
 * @returns the new dataset's id and how many rows it holds.
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function createRandomDataset(
  sql: Sql,
  organizationId: string,
  input: { datasetName: string; filter: FilterNode; offset?: number; limit?: number },
): Promise<{ datasetId: string; rows: number }> {
  return createDataset(sql, organizationId, { ...input, order: 'random', offset: input.offset ?? 0, limit: input.limit ?? DEFAULT_LIMIT });
}

/** Default `limit` of {@link createNewestDataset} (`POST /v1/experiment/dataset`). */
export const NEWEST_DATASET_LIMIT = 1000;

/**
 * Creates dataset `name` from the `limit` (default {@link NEWEST_DATASET_LIMIT}) newest of the
 * organization's requests matching `filter`, position 0 the newest; dataset and rows in one transaction.
 * @returns the new dataset's id and how many rows it holds (fewer than `limit` when fewer match).
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function createNewestDataset(
  sql: Sql,
  organizationId: string,
  input: { datasetName: string; filter: FilterNode; limit?: number },
): Promise<{ datasetId: string; rows: number }> {
  return createDataset(sql, organizationId, { ...input, order: 'newest', offset: 0, limit: input.limit ?? NEWEST_DATASET_LIMIT });
}

/** A dataset as listed: id, name and creation time. */
export interface DatasetRow {
  id: string;
  name: string;
  created_at: Date;
}

/**
 * The organization's datasets, newest first; with `promptVersionId`, only those holding a request
 * made with that prompt version (none when it is not a UUID).
 */
export async function listDatasets(sql: Sql, organizationId: string, promptVersionId: string | undefined): Promise<DatasetRow[]> {
  if (promptVersionId === undefined) {
    return sql<DatasetRow[]>`select id, name, created_at from dataset where organization_id = ${organizationId} order by created_at desc, id desc`;
  }
  if (!isUuid(promptVersionId)) return [];
  return sql<DatasetRow[]>`
        select d.id, d.name, d.created_at from dataset d
        where d.organization_id = ${organizationId} and exists (
          select 1 from dataset_row dr join request_log r on r.id = dr.request_id
          where dr.dataset_id = d.id and r.prompt_version_id = ${promptVersionId.toLowerCase()})
        order by d.created_at desc, d.id desc`;
}

/**
 * One row of a dataset with the request it points to (`created_at`: the request's; `added_at`: when
 * the row joined the dataset) and the managed-prompt inputs and version it was made with (null without).
 */
export interface DatasetRequestRow {
  request_id: string;
  position: number;
  created_at: Date;
  added_at: Date;
  request_body: unknown;
  response_body: unknown;
  prompt_inputs: Record<string, unknown> | null;
  prompt_version_id: string | null;
}

/**
 * One page (`offset`/`limit`, default {@link DEFAULT_LIMIT}) of a dataset's rows in order. The page's
 * request ids and body sizes (bodies and prompt inputs, as their JSON text) are read first; the rows
 * are loaded only when those hold at most `maxPageBodyBytes` (see requests/page-budget.ts).
 * @returns null when the dataset does not exist in the organization.
 * @throws {HttpError} 413 naming `limit` when the page's bodies exceed `maxPageBodyBytes`.
 */
export async function datasetRows(
  sql: Sql,
  organizationId: string,
  datasetId: string,
  page: { offset?: number; limit?: number },
  maxPageBodyBytes = DEFAULT_MAX_PAGE_BODY_BYTES,
): Promise<DatasetRequestRow[] | null> {
  const [ds] = await sql`select id from dataset where id = ${datasetId} and organization_id = ${organizationId}`;
  if (!ds) return null;
  const rowsOf = sql`dataset_row dr join request_log r on r.id = dr.request_id where dr.dataset_id = ${datasetId} and dr.organization_id = ${organizationId}`;
  // The bodies ride through the sort as TOAST pointers; only the outer select, row by row, measures them.
  const sizes = sql`
    select p.id, (coalesce(octet_length(p.request_body::text), 0) + coalesce(octet_length(p.response_body::text), 0)
      + coalesce(octet_length(p.prompt_inputs::text), 0))::float8 as body_bytes
    from (select dr.request_id as id, r.request_body, r.response_body, r.prompt_inputs from ${rowsOf}
      order by dr.position limit ${page.limit ?? DEFAULT_LIMIT} offset ${page.offset ?? 0}) p`;
  const ids = await pageIdsWithinBudget(sizes, maxPageBodyBytes, { one: 'row', many: 'rows' });
  if (ids.length === 0) return [];
  const rows = await sql<DatasetRequestRow[]>`
      select dr.request_id, dr.position, r.created_at, dr.created_at as added_at, r.request_body, r.response_body,
        r.prompt_inputs, r.prompt_version_id
      from ${rowsOf} and dr.request_id = any(${ids}::uuid[])`;
  return inIdOrder(ids, rows, (r) => r.request_id);
}
