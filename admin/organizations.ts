/**
 * Organizations: the tenant every key, logged request, prompt and dataset belongs to. They have no
 * REST resource of their own; one is created with the first key (admin/resources/api-keys/bootstrap.ts).
 */
import type { Sql } from './db.ts';

/**
 * Creates an organization.
 * @returns its id (a UUID).
 */
export async function createOrganization(sql: Sql, name: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`insert into organization (name) values (${name}) returning id`;
  return row!.id;
}
