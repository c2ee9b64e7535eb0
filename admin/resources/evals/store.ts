/** The SQL of scores (`request_score`): named numbers on a logged request, read back with the request. */
import type { Sql } from '../../db.ts';

/**
 * Stores (or replaces) score `name` of request `requestId` in the organization.
 * @returns false when the request does not exist in that organization.
 */
export async function upsertScore(sql: Sql, organizationId: string, requestId: string, name: string, score: number): Promise<boolean> {
  const rows = await sql`
    insert into request_score (request_id, organization_id, name, value)
    select r.id, r.organization_id, ${name}, ${score}::float8
    from request_log r where r.id = ${requestId} and r.organization_id = ${organizationId}
    on conflict (request_id, name) do update set value = excluded.value, created_at = now()
    returning request_id`;
  return rows.length > 0;
}
