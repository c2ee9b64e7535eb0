/**
 * Test databases: each suite gets its own fresh database on the real PostgreSQL server named by
 * `TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test), migrated, and dropped at
 * the end. A server that cannot be reached fails the suite.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate, type Sql } from '../../admin/db.ts';

/** The server tests use; its database is only used to create and drop per-suite databases. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh, migrated database. */
export interface TestDatabase {
  url: string;
  sql: Sql;
  drop(): Promise<void>;
}

/** Creates and migrates a fresh database named `svc_test_<random>`. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 5, onnotice: () => {}, transform: { undefined: null } }) as unknown as Sql;
  await migrate(sql);
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.end({ timeout: 2 });
      const a = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}
