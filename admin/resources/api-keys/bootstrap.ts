/**
 * API keys at process start: the first-start bootstrap (a key printed once, or exactly the key of
 * `SVC_BOOTSTRAP_API_KEY`) and the control-plane key `npm start` hands the proxy.
 */
import type { Logger } from 'pino';
import { hashApiKey } from '../../../shared/apikey.ts';
import type { Sql } from '../../db.ts';
import { createOrganization } from '../../organizations.ts';
import { createApiKey, findKey } from './store.ts';

/**
 * First-start bootstrap. With `bootstrapKey` set: makes sure exactly that key exists, creating it
 * (named `bootstrap`) in the one organization there is, or in a new one on an empty database.
 * Otherwise, when the database holds no API key at all: creates an organization and a key. Runs
 * under an advisory lock so concurrent admins bootstrap once.
 * @returns the key when one was created now (to be printed once), else null; and the organization.
 * @throws {Error} naming `SVC_BOOTSTRAP_API_KEY` when the key is new and there are several
 *   organizations (nothing created; admin stops at start).
 */
export async function bootstrapKeys(sql: Sql, bootstrapKey: string | undefined, logger: Logger): Promise<{ created: string | null; organizationId: string | null }> {
  return sql.begin(async (tx) => {
    const t = tx as unknown as Sql;
    await t`select pg_advisory_xact_lock(73041183)`;
    if (bootstrapKey) {
      const existing = await findKey(t, hashApiKey(bootstrapKey));
      if (existing) return { created: null, organizationId: existing.organizationId };
      const orgId = await bootstrapOrganization(t);
      await createApiKey(t, orgId, 'bootstrap', bootstrapKey);
      logger.info({ organizationId: orgId }, 'bootstrap API key created from SVC_BOOTSTRAP_API_KEY');
      return { created: null, organizationId: orgId };
    }
    const [{ count }] = await t<{ count: number }[]>`select count(*)::int as count from api_key`;
    if (count > 0) return { created: null, organizationId: null };
    const orgId = await createOrganization(t, 'Default organization');
    const key = await createApiKey(t, orgId, 'default');
    return { created: key.key, organizationId: orgId };
  }) as Promise<{ created: string | null; organizationId: string | null }>;
}

/**
 * The organization a new `SVC_BOOTSTRAP_API_KEY` goes into: the only one there is (a key in a new
 * organization would be refused by the proxy `npm start` runs, which serves the organization of its
 * control-plane key), or a new one when there is none.
 * @throws {Error} when there are several: which one is meant cannot be told.
 */
async function bootstrapOrganization(sql: Sql): Promise<string> {
  const rows = await sql<{ id: string }[]>`select id from organization`;
  if (rows.length === 0) return createOrganization(sql, 'Default organization');
  if (rows.length === 1) return rows[0]!.id;
  throw new Error(
    `SVC_BOOTSTRAP_API_KEY: the key does not exist and the database holds ${rows.length} organizations, so which one it belongs to cannot be told; ` +
      'create it with POST /v1/api-keys using a key of the organization you mean, or unset SVC_BOOTSTRAP_API_KEY',
  );
}

/**
 * Makes sure `file` holds a live API key for the proxy's control-plane link (`npm start` passes it
 * to the proxy as SVC_CONTROL_PLANE_API_KEY on every start). When the file is missing, or its key is
 * unknown or revoked, a new key named `control-plane` is created in `organizationId` (default: the
 * oldest organization) and written to the file (mode 0600).
 * @returns the key.
 * @throws when there is no organization at all.
 */
export async function ensureControlPlaneKey(sql: Sql, file: string, organizationId: string | null): Promise<string> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const existing = await readFile(file, 'utf8').then((t) => t.trim(), () => '');
  if (existing && (await findKey(sql, hashApiKey(existing)))) return existing;
  let org = organizationId;
  if (!org) {
    const [row] = await sql<{ id: string }[]>`select id from organization order by created_at limit 1`;
    if (!row) throw new Error('no organization exists to hold the control-plane key');
    org = row.id;
  }
  const created = await createApiKey(sql, org, 'control-plane');
  await writeFile(file, created.key, { mode: 0o600 });
  return created.key;
}
