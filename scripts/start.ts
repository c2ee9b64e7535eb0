/**
 * `npm start`: builds the proxy (scripts/build.ts → `dist/proxy.mjs`), then runs admin (under tsx),
 * then the proxy (compiled, plain node), as two child processes. Admin keeps a control-plane key
 * in `.data/control-plane.key` (created when missing or revoked) and the proxy gets it as
 * `SVC_CONTROL_PLANE_API_KEY` on every start, so a restart needs no manual step. SIGINT/SIGTERM stop
 * the proxy first (its queued log records flush to admin), then admin (and its embedded database).
 * Arguments (e.g. `--config FILE`) are passed to both.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BUNDLES, build } from './build.ts';

const root = path.resolve(import.meta.dirname, '..');
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? path.join(root, '.data'));
mkdirSync(dataDir, { recursive: true });
const keyFile = path.join(dataDir, 'control-plane.key');
const args = process.argv.slice(2);

/** Forks `entry` (relative to the repo root): a .ts file with tsx, a .mjs bundle with plain node. */
function start(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  const execArgv = entry.endsWith('.mjs') ? [] : ['--import', 'tsx'];
  // Own process group: a terminal Ctrl-C reaches this script only, which stops the children in order.
  return fork(path.join(root, entry), args, { env, execArgv, detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function ready(child: ChildProcess, type: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.on('message', (m: { type?: string }) => m?.type === type && resolve());
    child.once('exit', (code) => reject(new Error(`${type.split('.')[0]} exited with code ${code} before it was ready`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

try {
  await build();
} catch (err) {
  console.error(`npm start: building the proxy failed: ${(err as Error).message}`);
  process.exit(1);
}
const admin = start('admin/main.ts', { ...process.env, SVC_KEY_FILE: keyFile });
let proxy: ChildProcess | null = null;
let stopping = false;

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (proxy && proxy.exitCode === null) {
    proxy.kill('SIGTERM');
    await exited(proxy);
  }
  if (admin.exitCode === null) {
    admin.kill('SIGTERM');
    await exited(admin);
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  await ready(admin, 'admin.ready');
  const key = readFileSync(keyFile, 'utf8').trim();
  proxy = start(BUNDLES.proxy.outfile, { ...process.env, SVC_CONTROL_PLANE_API_KEY: key });
  await ready(proxy, 'proxy.ready');
  admin.once('exit', () => void stop(1));
  proxy.once('exit', () => void stop(1));
} catch (err) {
  console.error(`npm start: ${(err as Error).message}`);
  await stop(1);
}
