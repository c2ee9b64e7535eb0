/**
 * `npm start`: builds the proxy and the web console (scripts/build.ts → `dist/proxy.mjs`,
 * `dist/console/`, which admin serves at `/`), then runs admin (under tsx),
 * then the proxy (compiled, plain node), as two supervised child processes (scripts/supervisor.ts).
 * Admin keeps a control-plane key in `.data/control-plane.key` (`SVC_DATA_DIR`; created when missing
 * or revoked) and the proxy gets it as `SVC_CONTROL_PLANE_API_KEY` on every start, so a restart needs
 * no manual step. Arguments (e.g. `--config FILE`) are passed to both.
 *
 * Stopping. package.json runs this with `exec`, so the pid npm signals is this process: npm passes
 * SIGINT/SIGTERM on to its script's process, and a `sh -c` in between would die of SIGTERM or sit
 * out SIGINT without passing it on. SIGINT, SIGTERM or SIGHUP here, a child signalled directly, or
 * the parent (npm) gone (polled: Linux has no parent-death signal in Node) all stop everything in
 * order: the proxy first (in-flight requests finish, its queued log records flush to admin), then
 * admin (and its embedded database); then this process exits 0. The children sit in their own
 * process groups, so a terminal's Ctrl-C reaches them only through this order. A second signal at
 * least {@link FORCE_AFTER_MS} after the first SIGKILLs both at once and exits 1 (Ctrl-C under npm
 * arrives twice at once, from the terminal and from npm, which must not count as two). Each child
 * gets at most its own shutdown bound plus {@link STOP_MARGIN_MS} before it is SIGKILLed.
 *
 * Crashes. A child that exits unasked is restarted with backoff while the other keeps serving (the
 * proxy rides out admin's absence on its cached keys and queued records, and reconnects by itself);
 * only a child that fails at start 5 times in a row, or exits with code 2 (invalid configuration),
 * stops everything with code 1.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configPathFrom, loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { PROXY_NODE_FLAGS } from '../proxy/node-flags.ts';
import { BUNDLES, build } from './build.ts';
import { SupervisedChild, type SupervisorHooks } from './supervisor.ts';

/** A repeated signal counts as "force" only this long after the first (ms). */
const FORCE_AFTER_MS = 1_000;
/** How long a forced stop waits for the SIGKILLed children to die before exiting anyway (ms). */
const KILL_WAIT_MS = 2_000;
/** Time a child gets beyond its own shutdown bound before it is SIGKILLed (ms). */
const STOP_MARGIN_MS = 5_000;
/** How often the parent's liveness is checked (ms). */
const PARENT_POLL_MS = 500;

const root = path.resolve(import.meta.dirname, '..');
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? path.join(root, '.data'));
mkdirSync(dataDir, { recursive: true });
const keyFile = path.join(dataDir, 'control-plane.key');
const args = process.argv.slice(2);

// Only for the stop bounds and the log level: a configuration error is the children's to report.
let shutdownTimeoutMs = 10_000;
let logLevel: string | undefined;
try {
  const config = loadConfig(configPathFrom(args));
  shutdownTimeoutMs = config.server.shutdownTimeoutMs;
  logLevel = config.logLevel;
} catch {
  // The children exit with code 2 and say what is wrong; start.ts then stops.
}
const logger = createLogger('start', logLevel);

try {
  await build();
} catch (err) {
  logger.fatal({ err: (err as Error).message }, 'building the proxy and the console failed');
  process.exit(1);
}

let stoppingSince: number | null = null;
const hooks = (onReady: (first: boolean) => void): SupervisorHooks => ({
  logger,
  onReady,
  onStopRequest: (signal) => void stop(0, `${signal} to a child`),
  onGiveUp: (reason) => {
    logger.fatal({ reason }, 'giving up');
    void stop(1, 'a child failed');
  },
});

// The bounds mirror the children's own force-exit timers (admin/main.ts, proxy/main.ts).
const proxy = new SupervisedChild(
  {
    name: 'proxy',
    entry: path.join(root, BUNDLES.proxy.outfile),
    args,
    nodeFlags: PROXY_NODE_FLAGS,
    readyType: 'proxy.ready',
    env: () => ({ ...process.env, ...controlPlaneKeyEnv() }),
    stopTimeoutMs: shutdownTimeoutMs * 2 + 5_000 + STOP_MARGIN_MS,
  },
  hooks(() => {}),
);
const admin = new SupervisedChild(
  {
    name: 'admin',
    entry: path.join(root, 'admin/main.ts'),
    args,
    readyType: 'admin.ready',
    env: () => ({ ...process.env, SVC_KEY_FILE: keyFile }),
    stopTimeoutMs: shutdownTimeoutMs + 5_000 + STOP_MARGIN_MS,
  },
  // The proxy needs the key admin writes before it reports ready; later admin restarts leave it be.
  hooks((first) => {
    if (first) proxy.start();
  }),
);

/** The proxy's key, read at each of its starts; absent only if admin could not write it. */
function controlPlaneKeyEnv(): NodeJS.ProcessEnv {
  try {
    return { SVC_CONTROL_PLANE_API_KEY: readFileSync(keyFile, 'utf8').trim() };
  } catch {
    return {};
  }
}

async function stop(code: number, reason: string): Promise<void> {
  if (stoppingSince !== null) return;
  stoppingSince = Date.now();
  logger.info({ reason }, 'stopping: the proxy first (its queued log records go to admin), then admin');
  await proxy.stop();
  await admin.stop();
  logger.info('stopped');
  process.exit(code);
}

function onSignal(signal: NodeJS.Signals): void {
  if (stoppingSince === null) return void stop(0, signal);
  if (Date.now() - stoppingSince < FORCE_AFTER_MS) return;
  logger.warn({ signal }, 'second signal while stopping: killing admin and the proxy');
  // npm's exit must mean nothing of it runs any more: wait (bounded) until both have died.
  const bound = new Promise((resolve) => setTimeout(resolve, KILL_WAIT_MS));
  void Promise.race([Promise.all([proxy.kill(), admin.kill()]), bound]).then(() => process.exit(1));
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);

// Reparented means npm (or whatever started this) is gone, e.g. SIGKILLed: nobody is left to stop us.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop(0, `parent process ${parent} exited`);
}, PARENT_POLL_MS).unref();

admin.start();
