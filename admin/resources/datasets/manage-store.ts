/**
 * The SQL of changing an existing dataset: adding requests by id, removing one, renaming, deleting.
 * Every statement is scoped to one organization: another organization's dataset or request is
 * treated as absent, and never read or written.
 *
 * Positions: a dataset's rows are numbered 0..n-1 in order (as store.ts writes them). Adding
 * appends after the last position; removing renumbers the rows so they stay 0..n-1 (which also
 * closes gaps a retention delete of a logged request left). Both lock the dataset row first
 * (`for update`), so concurrent changes of one dataset run one after the other and never give two
 * rows one position.
 */
import type { Sql } from '../../db.ts';

/** What {@link addRequests} did: how many rows it added, skipped (present or repeated) and now holds. */
export interface AddedRequests {
  added: number;
  skipped: number;
  rows: number;
}

/**
 * Appends the organization's requests `requestIds` (UUIDs, any case) to the dataset, in the order
 * given, after its last position; ids already in the dataset, or repeated in the list, are skipped.
 * All or nothing: when any id is not a request of the organization, nothing is added.
 * @returns `null` when the dataset is not the organization's; `{missing}` (the unknown ids, lower
 *   case, in the order given) when some request is not; else what was added.
 */
export async function addRequests(sql: Sql, organizationId: string, datasetId: string, requestIds: readonly string[]): Promise<AddedRequests | { missing: string[] } | null> {
  const ids = [...new Set(requestIds.map((id) => id.toLowerCase()))];
  try {
    return await addInTransaction(sql, organizationId, datasetId, ids, requestIds.length);
  } catch (err) {
    // A request found above and deleted (retention) before the insert: its foreign key refuses the row. Answered as
    // the unknown id it now is, so the caller gets a 404, not a 500; nothing was added (the transaction rolled back).
    if ((err as { code?: string }).code !== '23503') throw err;
    const found = await sql<{ id: string }[]>`select id from request_log where organization_id = ${organizationId} and id = any(${ids}::uuid[])`;
    const known = new Set(found.map((r) => r.id));
    return { missing: ids.filter((id) => !known.has(id)) };
  }
}

/** {@link addRequests}' transaction (`ids` lower case and unique; `asked`: how many ids the caller gave). */
function addInTransaction(sql: Sql, organizationId: string, datasetId: string, ids: string[], asked: number): Promise<AddedRequests | { missing: string[] } | null> {
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [ds] = await tx`select id from dataset where id = ${datasetId} and organization_id = ${organizationId} for update`;
    if (!ds) return null;
    const found = await tx<{ id: string }[]>`select id from request_log where organization_id = ${organizationId} and id = any(${ids}::uuid[])`;
    if (found.length < ids.length) {
      const known = new Set(found.map((r) => r.id));
      return { missing: ids.filter((id) => !known.has(id)) };
    }
    const [last] = await tx<{ next: number }[]>`select coalesce(max(position) + 1, 0)::int as next from dataset_row where dataset_id = ${datasetId}`;
    const inserted = await tx`
      insert into dataset_row (dataset_id, request_id, organization_id, position)
      select ${datasetId}, x.id, ${organizationId}, ${last!.next}::int + (row_number() over (order by x.ord))::int - 1
      from unnest(${ids}::uuid[]) with ordinality as x(id, ord)
      where not exists (select 1 from dataset_row dr where dr.dataset_id = ${datasetId} and dr.request_id = x.id)`;
    const [total] = await tx<{ n: number }[]>`select count(*)::int as n from dataset_row where dataset_id = ${datasetId}`;
    return { added: inserted.count, skipped: asked - inserted.count, rows: total!.n };
  }) as Promise<AddedRequests | { missing: string[] } | null>;
}

/**
 * Removes request `requestId` (lower case) from the dataset and renumbers the remaining rows
 * 0..n-1 in their order; the logged request itself is kept.
 * @returns `'no-dataset'` when the dataset is not the organization's, `'no-row'` when the request is
 *   not in it, else `'removed'`.
 */
export async function removeRequest(sql: Sql, organizationId: string, datasetId: string, requestId: string): Promise<'no-dataset' | 'no-row' | 'removed'> {
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [ds] = await tx`select id from dataset where id = ${datasetId} and organization_id = ${organizationId} for update`;
    if (!ds) return 'no-dataset';
    const removed = await tx`delete from dataset_row where dataset_id = ${datasetId} and request_id = ${requestId}`;
    if (removed.count === 0) return 'no-row';
    // Only the rows whose number changes are written (those after the removed one, and any gap).
    await tx`
      update dataset_row dr set position = s.rn
      from (select request_id, (row_number() over (order by position, request_id))::int - 1 as rn
            from dataset_row where dataset_id = ${datasetId}) s
      where dr.dataset_id = ${datasetId} and dr.request_id = s.request_id and dr.position <> s.rn`;
    return 'removed';
  }) as Promise<'no-dataset' | 'no-row' | 'removed'>;
}

/** A dataset after a rename: id, name and creation time. */
export interface RenamedDataset {
  id: string;
  name: string;
  created_at: Date;
}

/**
 * Renames the organization's dataset.
 * @returns the dataset as listed after the change, or null when it is not the organization's.
 */
export async function renameDataset(sql: Sql, organizationId: string, datasetId: string, name: string): Promise<RenamedDataset | null> {
  const [row] = await sql<RenamedDataset[]>`
    update dataset set name = ${name} where id = ${datasetId} and organization_id = ${organizationId}
    returning id, name, created_at`;
  return row ?? null;
}

/**
 * Deletes the organization's dataset and its rows (dataset_row cascades); the logged requests stay.
 * @returns false when the dataset is not the organization's.
 */
export async function deleteDataset(sql: Sql, organizationId: string, datasetId: string): Promise<boolean> {
  const deleted = await sql`delete from dataset where id = ${datasetId} and organization_id = ${organizationId}`;
  return deleted.count > 0;
}
