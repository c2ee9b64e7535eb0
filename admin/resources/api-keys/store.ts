/**
 * The SQL of API keys: creation (the key is returned once), revocation, listing, lookup by hash
 * (authentication, here and in proxies), and the change notifications that reach every admin
 * process (PostgreSQL LISTEN/NOTIFY on channel `svc_keys`) and through them every connected proxy.
 */
import { generateApiKey, hashApiKey, API_KEY_PREFIX } from '../../../shared/apikey.ts';
import type { KeyEntry } from '../../../shared/controlplane.ts';
import type { Sql } from '../../db.ts';

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

/**
 * The state of each key of `keyIds` (any organization; the control plane re-checks its links' keys
 * with it): `live` or `revoked`; an id absent from the map has no row (deleted, or its organization was).
 */
export async function keyStates(sql: Sql, keyIds: readonly string[]): Promise<Map<string, 'live' | 'revoked'>> {
  const rows = await sql<{ id: string; revoked: boolean }[]>`
    select id, revoked_at is not null as revoked from api_key where id = any(${keyIds as string[]}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.revoked ? 'revoked' : 'live']));
}

/** A key as listed over REST (never the key or its hash); `revoked_at` null while it is live. */
export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** The keys of an organization, oldest first: the live ones, and with `includeRevoked` the revoked ones too. */
export async function listApiKeys(sql: Sql, organizationId: string, includeRevoked = false): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
      select id, name, prefix, created_at, last_used_at, revoked_at
      from api_key where organization_id = ${organizationId} and (${includeRevoked}::boolean or revoked_at is null)
      order by created_at, id`;
}
