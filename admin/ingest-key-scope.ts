/**
 * The API key id of a stored log record must be a key of the record's organization. Ingestion
 * (./ingest.ts) already refuses a record of another organization than its link's; this checks the
 * key id too, which a proxy linked to one organization could otherwise point at another
 * organization's key (a hostile or broken link). Such a record is stored with `api_key_id`
 * cleared, not refused: its organization is the link's (checked), so its usage and cost belong in
 * that organization's log; the caller counts and logs every id cleared, so none goes silently.
 * An id no key has (never a key, or deleted before this process confirmed it) is cleared the same
 * way. Revoked keys are still keys of their organization: their earlier requests keep their id.
 *
 * One query per batch for the ids not confirmed yet; a key never changes organization, so a
 * confirmation is kept (bounded LRU, per process) and the common batch needs no query at all. A
 * key deleted after its confirmation therefore keeps its id on later records of its own
 * organization: harmless (request_log has no foreign key to api_key, and the organization is the
 * link's), and cheaper than a query per batch.
 */
import { LRUCache } from 'lru-cache';
import type { Sql } from './db.ts';
import type { RequestLogRow } from './ingest.ts';
import { isUuid } from './validation.ts';

/** Key ids known to be keys of an organization: key id → organization id. */
const confirmed = new LRUCache<string, string>({ max: 100_000 });

/** The key ids {@link clearForeignKeyIds} cleared in one batch (the first few, for the log) and their number. */
export interface ClearedKeyIds {
  count: number;
  /** At most 5 of the ids cleared. */
  keyIds: string[];
}

/**
 * Clears `api_key_id` (to null) in every row whose key id is not a key of `organizationId`, in place.
 * @param rows rows of `organizationId`'s records (./ingest.ts recordToRow).
 * @returns how many were cleared, with a few of the ids.
 * @throws the database error when the key lookup fails (the batch is then not stored; the proxy re-sends it).
 */
export async function clearForeignKeyIds(sql: Sql, organizationId: string, rows: RequestLogRow[]): Promise<ClearedKeyIds> {
  const unknown = new Set<string>();
  for (const row of rows) {
    const id = row.api_key_id;
    if (typeof id !== 'string' || !isUuid(id)) continue;
    // PostgreSQL answers uuids in lower case: compare them so.
    const lower = (row.api_key_id = id.toLowerCase());
    if (confirmed.get(lower) !== organizationId) unknown.add(lower);
  }
  if (unknown.size > 0) {
    const found = await sql<{ id: string }[]>`
      select id from api_key where organization_id = ${organizationId} and id = any(${[...unknown]}::uuid[])`;
    for (const { id } of found) confirmed.set(id, organizationId);
  }
  const cleared: ClearedKeyIds = { count: 0, keyIds: [] };
  for (const row of rows) {
    const id = row.api_key_id;
    if (id === null || id === undefined) continue;
    if (typeof id === 'string' && confirmed.get(id) === organizationId) continue;
    row.api_key_id = null;
    cleared.count++;
    if (cleared.keyIds.length < 5) cleared.keyIds.push(String(id));
  }
  return cleared;
}
