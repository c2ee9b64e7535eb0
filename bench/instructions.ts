/**
 * Instructions the gateway process executes per request, counted by valgrind's callgrind: a figure
 * that does not move with this VM's speed, unlike req/s and CPU time (callgrind counts instructions,
 * not seconds, so the same code and inputs give nearly the same count whatever else the machine is
 * doing). It exists for targets smaller than this VM's noise, such as issue 18's "a miss costs at
 * most 5 % over the same request without the cache header": the throughput bench swings ±15 % for
 * one and the same code.
 *
 * Builds the bundles (scripts/build.ts), starts the stub and the gateway (`svc.features: none`,
 * memory cache store) with `valgrind --tool=callgrind` in front of node, warms it up, then measures
 * blocks of `--requests` requests per target, the targets alternating block by block (`--blocks`
 * each), asking callgrind for a dump (`callgrind_control --dump`, which also zeroes the counters)
 * before and after each block. The figure is instructions (callgrind's `Ir`) per request, every
 * thread of the process included (V8's compiler and GC threads too); the table gives each block and
 * the median, and the ratio of the medians.
 *
 * Targets (the `bench/run.ts` cache scenario's requests): `c` the chat completion without the cache
 * header (a header of no meaning gets a new value per request, as `c_miss`'s seed does), `c_miss`
 * the same with `Svc-Cache-Enabled: true` and a new `Svc-Cache-Seed` per request (every request
 * looked up, forwarded, recorded and stored), `c_hit` the same request with the header and one seed
 * (answered from the cache after its first block's first request).
 *
 * Usage: node --import tsx bench/instructions.ts [--targets=c,c_miss] [--requests=2000] [--blocks=3] [--warmup=6000] [--keep]
 * (`--keep`: leave callgrind's dump files, one per block, for `callgrind_annotate`; their folder is printed)
 * Needs valgrind (Debian's `valgrind`, with `callgrind_control`). Takes ~50× the native time: about
 * 3 minutes at the defaults. Waits while /tmp/bench.lock exists.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { PROXY_NODE_FLAGS } from '../proxy/node-flags.ts';
import { BUNDLES, build } from '../scripts/build.ts';
import { load, median, ROOT, round, sleep, startStub, stopAll, table, writeConfig, type Target } from './lib.ts';
import { CHAT_BODY } from './requests.ts';

const run = promisify(execFile);

/** A gateway process running under callgrind. */
interface Counted {
  child: ChildProcess;
  port: number;
  /** The directory callgrind writes its dumps into. */
  dir: string;
}

/** Starts the gateway bundle under `valgrind --tool=callgrind`; resolves on its `proxy.ready` message. */
function startCounted(config: string, env: NodeJS.ProcessEnv): Promise<Counted> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-callgrind-'));
  const valgrind = ['--tool=callgrind', `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`, '--dump-line=no', process.execPath];
  // fork() runs `execPath execArgv entry args`; with valgrind as execPath node becomes its guest and
  // keeps the IPC channel (its descriptor and NODE_CHANNEL_FD pass through valgrind unchanged).
  const child = fork(path.join(ROOT, BUNDLES.proxy.outfile), ['--config', config], {
    cwd: ROOT,
    execPath: 'valgrind',
    execArgv: [...valgrind, ...PROXY_NODE_FLAGS],
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway under callgrind did not become ready in 180 s:\n${out}`)), 180_000);
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type !== 'proxy.ready') return;
      clearTimeout(timer);
      resolve({ child, port: m.port!, dir });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway under callgrind exited with code ${code} before it was ready:\n${out}`));
    });
  });
}

/** The dump files callgrind has written so far. */
function dumpFiles(dir: string): Set<string> {
  return new Set(readdirSync(dir).filter((f) => f.startsWith('callgrind.out')));
}

/**
 * Asks callgrind for a dump of the counters since the last one (which zeroes them; every thread's
 * counts go into one file) and returns the instructions (`Ir`) it holds.
 * @throws when no complete dump appears within 60 s.
 */
async function dumpInstructions(p: Counted): Promise<number> {
  const before = dumpFiles(p.dir);
  await run('callgrind_control', ['--dump', String(p.child.pid)]);
  for (let waited = 0; waited < 60_000; waited += 100) {
    await sleep(100);
    const fresh = [...dumpFiles(p.dir)].find((f) => !before.has(f));
    if (fresh === undefined) continue;
    // The totals line is the file's last: present means the dump is complete.
    const m = /^totals:\s*(\d+)/m.exec(readFileSync(path.join(p.dir, fresh), 'utf8'));
    if (m) return Number(m[1]);
  }
  throw new Error('callgrind wrote no complete dump within 60 s');
}

/** The cache scenario's requests, by key. */
function targets(url: string, pid: number | undefined): Record<string, Target> {
  const json = { 'content-type': 'application/json' };
  const body = Buffer.from(JSON.stringify({ ...CHAT_BODY, model: 'openai/gpt-4o-mini' }));
  const on = { ...json, 'svc-cache-enabled': 'true' };
  return {
    c: { key: 'c', label: 'gateway, no cache header', url, headers: json, body, pid, varyHeader: 'x-bench-n' },
    c_miss: { key: 'c_miss', label: 'gateway, cache miss (new seed each)', url, headers: on, body, pid, varyHeader: 'svc-cache-seed' },
    c_hit: { key: 'c_hit', label: 'gateway, cache hit', url, headers: { ...on, 'svc-cache-seed': 'hit' }, body, pid },
  };
}

/** Sends exactly `n` requests of `target` on 2 connections and checks that all were 2xx. */
async function send(target: Target, n: number): Promise<void> {
  const r = await load(target, { connections: 2, pipelining: 1, duration: 0, amount: n });
  if (r.ok !== n) throw new Error(`${target.key}: ${r.ok} of ${n} requests answered 2xx (${r.non2xx} non-2xx, ${r.errors} errors)`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { targets: { type: 'string', default: 'c,c_miss' }, requests: { type: 'string', default: '2000' }, blocks: { type: 'string', default: '3' }, warmup: { type: 'string', default: '6000' }, keep: { type: 'boolean', default: false } },
  });
  const requests = Number(values.requests);
  const blocks = Number(values.blocks);
  const warmup = Number(values.warmup);
  if (!Number.isInteger(requests) || requests < 100) throw new Error('--requests must be a whole number ≥ 100');
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error('--blocks must be a whole number ≥ 1');
  while (existsSync('/tmp/bench.lock')) await sleep(5_000);
  await build();
  const stub = await startStub('test');
  const config = writeConfig({ svc: { features: 'none' }, cache: { store: 'memory' }, providers: { openai: { 'base-url': `http://127.0.0.1:${stub.port}/v1` } } });
  let gw: Counted | undefined;
  try {
    gw = await startCounted(config, { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', OPENAI_API_KEY: 'sk-bench-provider-key' });
    const all = targets(`http://127.0.0.1:${gw.port}/ai/chat/completions`, gw.child.pid);
    const chosen = values.targets!.split(',').map((k) => {
      const t = all[k.trim()];
      if (!t) throw new Error(`--targets: unknown target ${JSON.stringify(k)} (c, c_miss, c_hit)`);
      return t;
    });
    // Warm every target alike so the JIT has seen each path before counting starts.
    for (const t of chosen) await send(t, Math.ceil(warmup / chosen.length));
    await dumpInstructions(gw);
    const perBlock: Record<string, number[]> = Object.fromEntries(chosen.map((t) => [t.key, []]));
    for (let b = 0; b < blocks; b++) {
      for (const t of b % 2 === 0 ? chosen : [...chosen].reverse()) {
        await send(t, requests);
        perBlock[t.key]!.push(Math.round((await dumpInstructions(gw)) / requests));
        console.log(`block ${b + 1} ${t.key}: ${perBlock[t.key]!.at(-1)!.toLocaleString('en')} instructions per request`);
      }
    }
    const med = (k: string) => median(perBlock[k]!);
    console.log(table(['target', 'instructions per request, per block', 'median'], chosen.map((t) => [`${t.key} (${t.label})`, perBlock[t.key]!.map((n) => n.toLocaleString('en')).join(', '), med(t.key).toLocaleString('en')])));
    const base = chosen[0]!.key;
    for (const t of chosen.slice(1)) console.log(`${t.key} / ${base}: ${round(med(t.key) / med(base), 3)}`);
  } finally {
    gw?.child.kill('SIGTERM');
    await stopAll(stub);
    if (gw && !values.keep) rmSync(gw.dir, { recursive: true, force: true });
    else if (gw) console.log(`callgrind's dumps (one per block, in order; callgrind_annotate reads them): ${gw.dir}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
