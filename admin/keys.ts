/**
 * API keys and organizations in the database: creation (the key is returned once), revocation,
 * listing, the first-start bootstrap, and the change notifications that reach every admin process
 * (PostgreSQL LISTEN/NOTIFY on channel `svc_keys`) and through them every connected proxy.
 */
import type { Logger } from 'pino';
import { generateApiKey, hashApiKey, API_KEY_PREFIX } from '../shared/apikey.ts';
import type { KeyEntry } from '../shared/controlplane.ts';
import type { Sql } from './db.ts';

/**
 * NOTIFY channel for key changes; payload {@link KeyChange} as JSON. Admin's control plane also
 * sends itself `{"op":"ping","nonce":…}` on it to check that its LISTEN still delivers (ignored by
 * every other admin process).
 */
export const KEYS_CHANNEL = 'svc_keys';

/** A key change as published on {@link KEYS_CHANNEL}. */
export type KeyChange =
  | { op: 'upsert'; organizationId: string; keys: KeyEntry[] }
  | { op: 'revoke'; organizationId: string; hashes: string[] };

/** A created key: its id and the key itself (shown once, never stored). */
export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  prefix: string;
  created_at: string;
}

/** Display prefix of a key: `sk-svc-` plus its first 4 random characters. */
export function keyPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 4);
}

/**
 * Creates an API key in `organizationId` (inside `sql`, which may be a transaction) and notifies.
 * @param key a given key (bootstrap), else a new random one.
 */
export async function createApiKey(sql: Sql, organizationId: string, name: string, key = generateApiKey()): Promise<CreatedKey> {
  const hash = hashApiKey(key);
  const [row] = await sql<{ id: string; created_at: Date }[]>`
    insert into api_key (organization_id, name, key_hash, prefix)
    values (${organizationId}, ${name}, ${hash}, ${keyPrefix(key)})
    returning id, created_at`;
  await sql.notify(KEYS_CHANNEL, JSON.stringify({ op: 'upsert', organizationId, keys: [{ hash, keyId: row!.id, organizationId }] } satisfies KeyChange));
  return { id: row!.id, key, name, prefix: keyPrefix(key), created_at: row!.created_at.toISOString() };
}

/**
 * Revokes key `id` of `organizationId`.
 * @returns false when no such live key exists in that organization.
 */
export async function revokeApiKey(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  const rows = await sql<{ key_hash: string }[]>`
    update api_key set revoked_at = now()
    where id = ${id} and organization_id = ${organizationId} and revoked_at is null
    returning key_hash`;
  if (rows.length === 0) return false;
  await sql.notify(KEYS_CHANNEL, JSON.stringify({ op: 'revoke', organizationId, hashes: rows.map((r) => r.key_hash) } satisfies KeyChange));
  return true;
}

/** The live keys of an organization, as proxies hold them. */
export async function keyEntries(sql: Sql, organizationId: string): Promise<KeyEntry[]> {
  const rows = await sql<{ key_hash: string; id: string }[]>`
    select key_hash, id from api_key where organization_id = ${organizationId} and revoked_at is null`;
  return rows.map((r) => ({ hash: r.key_hash, keyId: r.id, organizationId }));
}

/** The organization and key id of a live key, by the key's hash; null when unknown or revoked. */
export async function findKey(sql: Sql, hash: string): Promise<{ keyId: string; organizationId: string } | null> {
  const [row] = await sql<{ id: string; organization_id: string }[]>`
    select id, organization_id from api_key where key_hash = ${hash} and revoked_at is null`;
  return row ? { keyId: row.id, organizationId: row.organization_id } : null;
}

/** Creates an organization; returns its id. */
export async function createOrganization(sql: Sql, name: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`insert into organization (name) values (${name}) returning id`;
  return row!.id;
}

/**
 * First-start bootstrap. With `bootstrapKey` set: makes sure exactly that key exists (creating an
 * organization for it if needed). Otherwise, when the database holds no API key at all: creates an
 * organization and a key. Runs under an advisory lock so concurrent admins bootstrap once.
 * @returns the key when one was created now (to be printed once), else null; and the organization.
 */
export async function bootstrapKeys(sql: Sql, bootstrapKey: string | undefined, logger: Logger): Promise<{ created: string | null; organizationId: string | null }> {
  return sql.begin(async (tx) => {
    const t = tx as unknown as Sql;
    await t`select pg_advisory_xact_lock(73041183)`;
    if (bootstrapKey) {
      const existing = await findKey(t, hashApiKey(bootstrapKey));
      if (existing) return { created: null, organizationId: existing.organizationId };
      const orgId = await createOrganization(t, 'Default organization');
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
