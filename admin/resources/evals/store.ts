/** The SQL of scores (`request_score`): named numbers on a logged request, read back with the request. */
import type { Sql } from '../../db.ts';

/**
 * Stores (or replaces) several scores of request `requestId` in the organization in one statement:
 * `scores` maps a name to its value (a boolean as 1 or 0, as the reference's boolean scores are).
 * @returns false when the request does not exist in that organization (nothing stored).
 */
export async function upsertScores(sql: Sql, organizationId: string, requestId: string, scores: Readonly<Record<string, number | boolean>>): Promise<boolean> {
  // No prototype: a score named "__proto__" is a name, not the prototype's setter (which would drop it).
  const values = Object.create(null) as Record<string, number>;
  for (const [name, v] of Object.entries(scores)) values[name] = typeof v === 'boolean' ? Number(v) : v;
  const [found] = await sql<{ found: boolean }[]>`
    with scored as (
      insert into request_score (request_id, organization_id, name, value)
      select r.id, r.organization_id, s.key, s.value::text::float8
      from request_log r, jsonb_each(${sql.json(values)}::jsonb) s
      where r.id = ${requestId} and r.organization_id = ${organizationId}
      on conflict (request_id, name) do update set value = excluded.value, created_at = now()
      returning request_id
    )
    select exists (select 1 from scored) as found`;
  return found!.found;
}
