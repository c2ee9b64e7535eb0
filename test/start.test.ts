/**
 * `npm start` as supervisors run it (scripts/start.ts, scripts/supervisor.ts): the real `npm start`
 * in a process group of its own, on free ports and a temp `SVC_DATA_DIR`, signalled the ways systemd,
 * Docker, pm2, Kubernetes and a terminal do. Every way of stopping it stops all of it, in order (an
 * in-flight stream finishes, its log record reaches the database, the proxy stops before admin),
 * and no process it started outlives it. A killed admin is restarted while the proxy keeps serving
 * from its cached keys; a killed proxy is restarted with the control-plane key. Also the restart
 * backoff's policy (scripts/restart-backoff.ts), which the processes cannot cover in reasonable time.
 *
 * Linux only: the process tree is read from /proc.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../shared/apikey.ts';
import { RestartBackoff } from '../scripts/restart-backoff.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { defaultConfig, startProcess, stopProcess, waitFor, writeConfig, type Started } from './support/stack.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

let stub: Started;
let stubUrl: string;
before(async () => {
  stub = await startProcess('test/support/stub-upstream.ts', { STUB_PORT: '0' }, 'stub.ready');
  stubUrl = `http://127.0.0.1:${stub.port}`;
});
after(async () => {
  await stopProcess(stub);
});

// ---- the process tree, from /proc ----

/** pid → [ppid, state] of every process. */
function processTable(): Map<number, [number, string]> {
  const table = new Map<number, [number, string]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: read after its closing one.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), [Number(ppid), state]);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** `root` and every process below it. */
function tree(root: number): number[] {
  const table = processTable();
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, [ppid]] of table) if (ppid === out[i]) out.push(pid);
  return out;
}

/** True while `pid` runs (a zombie waiting to be reaped has finished). */
function alive(pid: number): boolean {
  const entry = processTable().get(pid);
  return entry !== undefined && entry[1] !== 'Z';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** True when nothing listens on `port` (connection refused). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

// ---- one `npm start` ----

interface LogLine {
  name?: string;
  msg?: string;
  child?: string;
  [key: string]: unknown;
}

interface Run {
  npm: ChildProcess;
  adminPort: number;
  gatewayPort: number;
  gatewayUrl: string;
  adminUrl: string;
  apiKey: string;
  /** The test database admin uses; null with the embedded PostgreSQL. */
  db: TestDatabase | null;
  /** Every process seen below npm so far (see {@link Run.collect}). */
  pids: Set<number>;
  /** Adds the processes now below npm to {@link Run.pids}. */
  collect(): void;
  logs(): LogLine[];
  output(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs whatever of {@link Run.pids} still runs (after a failed test), drops the database, removes the data. */
  cleanup(): Promise<void>;
}

/** Runs `npm start` on free ports and waits until the proxy holds its first key snapshot. */
async function startNpm(o: { embedded?: boolean; config?: Record<string, unknown> } = {}): Promise<Run> {
  const db: TestDatabase | null = o.embedded ? null : await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
  // Under root the embedded PostgreSQL runs as `postgres`, which must enter the data directory.
  chmodSync(dataDir, 0o755);
  const configFile = writeConfig(o.config ?? defaultConfig(stubUrl));
  const [adminPort, gatewayPort, pgPort] = [await freePort(), await freePort(), await freePort()];
  const apiKey = generateApiKey();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ADMIN_PORT: String(adminPort),
    GATEWAY_PORT: String(gatewayPort),
    GATEWAY_HOST: '127.0.0.1',
    SVC_DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(pgPort),
    SVC_BOOTSTRAP_API_KEY: apiKey,
    OPENAI_API_KEY: 'sk-provider-openai-secret',
    LOG_LEVEL: 'info',
  };
  delete env.SVC_CONTROL_PLANE_URL;
  if (db) env.DATABASE_URL = db.url;
  else delete env.DATABASE_URL;
  // Its own process group, as a service manager or a terminal would start it.
  const npm = spawn('npm', ['start', '--', '--config', configFile], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
  const pids = new Set<number>();
  const run: Run = {
    npm,
    adminPort,
    gatewayPort,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    apiKey,
    db,
    pids,
    collect: () => {
      if (npm.exitCode === null && npm.signalCode === null) for (const pid of tree(npm.pid!)) pids.add(pid);
    },
    logs: () =>
      out.split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as LogLine];
        } catch {
          return [];
        }
      }),
    output: () => out,
    exit,
    async cleanup() {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null && npm.signalCode === null) await exit;
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(path.dirname(configFile), { recursive: true, force: true });
    },
  };
  try {
    await waitFor(async () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}`);
      const health = (await (await fetch(`${run.gatewayUrl}/health`)).json()) as { controlPlane: { ready: boolean } | null };
      return health.controlPlane?.ready === true;
    }, 45_000);
  } catch (err) {
    run.collect();
    await run.cleanup();
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  run.collect();
  return run;
}

/** npm's exit; fails the test if npm start has not exited within `ms`. */
async function exitWithin(run: Run, ms = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`npm start did not exit within ${ms} ms:\n${run.output()}`)), ms);
  });
  try {
    return await Promise.race([run.exit, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The pid of the running `admin` or `proxy` below npm, found by its command line. */
function childPid(run: Run, child: 'admin' | 'proxy'): number {
  const entry = child === 'admin' ? 'admin/main.ts' : 'dist/proxy.mjs';
  const found = tree(run.npm.pid!).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((arg) => arg.endsWith(entry)) && alive(pid);
    } catch {
      return false;
    }
  });
  assert.equal(found.length, 1, `one ${child} process below npm, found ${found.join(', ')}:\n${run.output()}`);
  return found[0];
}

/** Chat completion through the gateway with the run's key. */
function chat(run: Run, model: string, stream: boolean): Promise<Response> {
  return fetch(`${run.gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${run.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `openai/${model}`, stream, messages: [{ role: 'user', content: 'Hello' }] }),
  });
}

/**
 * Starts `npm start`, opens a slow stream, signals with `send` once the stream is under way, and
 * checks that everything stopped in order and nothing is left.
 */
async function assertStopsEverything(signal: NodeJS.Signals, send: (run: Run) => void): Promise<void> {
  const run = await startNpm();
  try {
    const children = { admin: childPid(run, 'admin'), proxy: childPid(run, 'proxy') };

    const res = await chat(run, 'slow-stream', true);
    assert.equal(res.status, 200);
    const svcId = res.headers.get('svc-id')!;
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    send(run);
    let body = Buffer.from(first.value!).toString();
    for (let r = await reader.read(); !r.done; r = await reader.read()) body += Buffer.from(r.value).toString();
    assert.match(body, /data: \[DONE\]/, 'the in-flight stream finished');

    const exit = await exitWithin(run);
    // npm waits for its script, which waits for admin and the proxy: neither may still run.
    for (const [name, pid] of Object.entries(children)) assert.equal(alive(pid), false, `${name} (${pid}) outlived npm start`);
    // Nor anything else below npm (start.ts). Helpers such as tsx's esbuild service exit on their
    // own once their parent is gone.
    await waitFor(() => [...run.pids].every((pid) => !alive(pid)), 5_000).catch(() => {
      assert.fail(`still running: ${[...run.pids].filter(alive).join(', ')}`);
    });
    assert.equal(await refused(run.gatewayPort), true, 'gateway port closed');
    assert.equal(await refused(run.adminPort), true, 'admin port closed');
    // Exit code 0, or death by the signal sent (what a shell's or npm's own handling reports): not 1.
    assert.ok(exit.code === 0 || (exit.code === null && exit.signal === signal), `npm start exited with ${JSON.stringify(exit)}`);

    const msgs = run.logs().map((l) => `${l.name}: ${l.msg}`);
    const proxyStopped = msgs.indexOf('proxy: proxy stopped');
    const adminStopping = msgs.indexOf('admin: admin stopping');
    assert.ok(proxyStopped >= 0 && adminStopping > proxyStopped, `proxy stopped before admin began to stop:\n${msgs.join('\n')}`);
    assert.ok(msgs.includes('admin: admin stopped'), 'admin stopped cleanly');
    assert.ok(!msgs.some((m) => /second signal|did not stop in time/.test(m)), `an orderly stop, not a forced one:\n${msgs.join('\n')}`);
    assert.ok(msgs.some((m) => /proxy: log queue flushed/.test(m)), `the proxy flushed its log queue:\n${msgs.join('\n')}`);
    // The stream ended after the signal; its record still reached the database through admin.
    const rows = await run.db!.sql`select 1 from request_log where id = ${svcId}`;
    assert.equal(rows.length, 1, `the stream's log record ${svcId} is stored`);
  } finally {
    await run.cleanup();
  }
}

test('SIGTERM to npm (systemd, Docker, Kubernetes, pm2) stops everything in order', { timeout: 90_000 }, async () => {
  await assertStopsEverything('SIGTERM', (run) => run.npm.kill('SIGTERM'));
});

test("SIGINT to npm's pid stops everything in order", { timeout: 90_000 }, async () => {
  await assertStopsEverything('SIGINT', (run) => run.npm.kill('SIGINT'));
});

test('SIGINT to the process group (Ctrl-C), which reaches start.ts twice, is one orderly stop', { timeout: 90_000 }, async () => {
  await assertStopsEverything('SIGINT', (run) => process.kill(-run.npm.pid!, 'SIGINT'));
});

test('a second signal a second after the first kills at once instead of waiting for in-flight requests', { timeout: 90_000 }, async () => {
  // The upstream never answers, so a graceful stop would wait for the 20 s shutdown timeout.
  const run = await startNpm({ config: { ...defaultConfig(stubUrl), server: { 'shutdown-timeout': '20s' } } });
  try {
    const children = { admin: childPid(run, 'admin'), proxy: childPid(run, 'proxy') };
    const pending = chat(run, 'hang', false).then(
      (r) => r.status,
      () => 'failed',
    );
    // In flight: the stub holds it.
    await waitFor(async () => JSON.stringify(await (await fetch(`${stubUrl}/__requests`)).json()).includes('hang'), 10_000);
    run.npm.kill('SIGTERM');
    await waitFor(() => run.output().includes('proxy stopping'), 10_000);
    // A repeat within a second is the same stop (Ctrl-C under npm arrives twice): wait past that.
    await new Promise((r) => setTimeout(r, 1_200));
    run.npm.kill('SIGTERM');
    const exit = await exitWithin(run);
    assert.equal(exit.code, 1, run.output());
    assert.equal(await pending, 'failed', 'the hanging request was cut off');
    for (const [name, pid] of Object.entries(children)) assert.equal(alive(pid), false, `${name} (${pid}) outlived npm start`);
    await waitFor(() => [...run.pids].every((pid) => !alive(pid)), 5_000).catch(() => {
      assert.fail(`still running: ${[...run.pids].filter(alive).join(', ')}`);
    });
    const msgs = run.logs().map((l) => `${l.name}: ${l.msg}`);
    assert.ok(msgs.some((m) => /start: second signal while stopping/.test(m)), msgs.join('\n'));
    assert.ok(!msgs.includes('proxy: proxy stopped'), 'the proxy was killed, not left to finish');
  } finally {
    await run.cleanup();
  }
});

test('a killed admin is restarted while the proxy serves on; a killed proxy is restarted with its key', { timeout: 120_000 }, async () => {
  // The embedded PostgreSQL: what a killed admin leaves behind, which must not outlive npm start.
  const run = await startNpm({ embedded: true });
  try {
    const proxyPid = childPid(run, 'proxy');
    const oldAdmin = childPid(run, 'admin');
    const oldAdminTree = tree(oldAdmin);
    assert.ok(oldAdminTree.length > 1, 'admin runs its embedded PostgreSQL');

    process.kill(oldAdmin, 'SIGKILL');
    await waitFor(() => refused(run.adminPort), 5_000);
    const health = await fetch(`${run.gatewayUrl}/health`);
    assert.equal(health.status, 200);
    const res = await chat(run, 'gpt-4o-mini', false);
    assert.equal(res.status, 200, 'the proxy authenticates from its cached keys while admin is away');
    const svcId = res.headers.get('svc-id')!;
    await res.arrayBuffer();
    assert.equal(await refused(run.adminPort), true, 'admin was still away during those requests (restart backoff: 1 s)');

    // Admin comes back (new pid, same port) and the record the proxy queued meanwhile arrives.
    await waitFor(async () => {
      const r = await fetch(`${run.adminUrl}/v1/request/${svcId}`, { headers: { authorization: `Bearer ${run.apiKey}` } });
      return r.status === 200;
    }, 45_000);
    run.collect();
    assert.notEqual(childPid(run, 'admin'), oldAdmin);
    const restart = run.logs().find((l) => l.name === 'start' && l.child === 'admin' && /exited unexpectedly/.test(l.msg ?? ''));
    assert.ok(restart, `the restart is logged:\n${run.output()}`);
    assert.equal(restart.signal, 'SIGKILL');
    assert.equal(restart.restartInMs, 1_000);
    assert.equal(childPid(run, 'proxy'), proxyPid, 'the proxy was not restarted');
    for (const pid of oldAdminTree) assert.equal(alive(pid), false, `the killed admin's process ${pid} (its PostgreSQL) is stopped`);

    process.kill(proxyPid, 'SIGKILL');
    await waitFor(() => refused(run.gatewayPort), 5_000);
    assert.equal((await fetch(`${run.adminUrl}/health`)).status, 200, 'admin serves on while the proxy restarts');
    await waitFor(async () => {
      const h = (await (await fetch(`${run.gatewayUrl}/health`)).json()) as { controlPlane: { ready: boolean } | null };
      return h.controlPlane?.ready === true;
    }, 30_000);
    run.collect();
    const again = await chat(run, 'gpt-4o-mini', false);
    assert.equal(again.status, 200, 'the restarted proxy got the control-plane key and the keys');
    await again.arrayBuffer();
    assert.notEqual(childPid(run, 'proxy'), proxyPid);
    assert.ok(run.logs().some((l) => l.name === 'start' && l.child === 'proxy' && /exited unexpectedly \(signal SIGKILL\)/.test(l.msg ?? '')), 'the restart is logged');

    run.npm.kill('SIGTERM');
    assert.deepEqual(await exitWithin(run), { code: 0, signal: null });
    await waitFor(() => [...run.pids].every((pid) => !alive(pid)), 5_000).catch(() => {
      assert.fail(`still running: ${[...run.pids].filter(alive).join(', ')}`);
    });
    assert.equal(await refused(run.adminPort), true);
    assert.equal(await refused(run.gatewayPort), true);
  } finally {
    await run.cleanup();
  }
});

test('an invalid configuration stops npm start with code 1, without restarts', { timeout: 60_000 }, async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-'));
  const configFile = path.join(dataDir, 'gateway.yaml');
  writeFileSync(configFile, 'svc:\n  features: everything\n');
  const [adminPort, gatewayPort] = [await freePort(), await freePort()];
  const npm = spawn('npm', ['start', '--', '--config', configFile], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ADMIN_PORT: String(adminPort), GATEWAY_PORT: String(gatewayPort), SVC_DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
  });
  let out = '';
  npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const code = await new Promise<number | null>((resolve) => npm.once('exit', (c) => resolve(c)));
    assert.equal(code, 1, out);
    assert.match(out, /admin: invalid configuration: .*svc\.features/);
    assert.doesNotMatch(out, /restarting it/);
  } finally {
    if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('restart backoff: doubles from 1 s to 30 s, starts over after a stable minute, gives up after 5 failed starts', () => {
  const b = new RestartBackoff();
  // Crashes after becoming ready but before a minute: the delay doubles up to the cap, never gives up.
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map(() => b.crashed(10_000)), [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  assert.equal(b.crashed(60_000), 1_000, 'a minute of stable running starts the delay over');

  const s = new RestartBackoff();
  assert.deepEqual([1, 2, 3, 4].map(() => s.crashed(null)), [1_000, 2_000, 4_000, 8_000]);
  assert.equal(s.crashed(null), null, 'the fifth failed start in a row gives up');

  const r = new RestartBackoff();
  for (let i = 0; i < 4; i++) r.crashed(null);
  assert.equal(typeof r.crashed(5_000), 'number', 'a start that got ready resets the failed-start count');
  assert.equal(typeof r.crashed(null), 'number');
});
