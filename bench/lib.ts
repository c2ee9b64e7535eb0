/**
 * Building blocks of the benchmark (bench/run.ts): starting the processes under test, the load
 * generators (autocannon for throughput, a paced client with sub-millisecond timing for latency and
 * time to first byte, an open-streams client), reading a process's RSS and CPU time from /proc, and
 * small statistics and formatting helpers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROXY_NODE_FLAGS } from '../proxy/node-flags.ts';
import { BUNDLES } from '../scripts/build.ts';
import { startProcess, stopProcess, waitFor, writeConfig, type Started } from '../test/support/stack.ts';

export { startProcess, stopProcess, writeConfig, type Started };

/** The repository root (with a trailing slash). */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where results are written (git-ignored). */
export const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

/* ------------------------------------------------------------------------------------------------
 * Processes
 * --------------------------------------------------------------------------------------------- */

/**
 * Starts the test stub provider (`STUB_QUIET=1`: it records nothing) or the bench's hold stub, from
 * its bundle in `dist/bench/` (plain node; scripts/build.ts must have run).
 */
export function startStub(kind: 'test' | 'hold' = 'test'): Promise<Started> {
  const entry = kind === 'hold' ? BUNDLES.stubHold.outfile : BUNDLES.stubUpstream.outfile;
  return startProcess(entry, { STUB_PORT: '0', STUB_QUIET: '1' }, 'stub.ready');
}

/**
 * Starts a bare forwarder (`bench/forward-node.ts` or `bench/forward-http-proxy3.ts`) in front of
 * `target`, from its bundle in `dist/bench/` (plain node; scripts/build.ts must have run).
 */
export function startForwarder(kind: 'node' | 'http-proxy3', target: string): Promise<Started> {
  const entry = kind === 'node' ? BUNDLES.forwardNode.outfile : BUNDLES.forwardHttpProxy3.outfile;
  return startProcess(entry, { FORWARD_TARGET: target, FORWARD_PORT: '0' }, 'forward.ready');
}

/**
 * Starts the gateway from its bundle (`dist/proxy.mjs`; scripts/build.ts must have run) with the
 * flags it always runs with (proxy/node-flags.ts), then `nodeArgs` (e.g. `--trace-gc-nvp`).
 */
export function startProxy(env: NodeJS.ProcessEnv, args: string[], nodeArgs: string[] = []): Promise<Started> {
  return startProcess(BUNDLES.proxy.outfile, env, 'proxy.ready', args, 30_000, [...PROXY_NODE_FLAGS, ...nodeArgs]);
}

/**
 * Like {@link startProxy}, with `--cpu-prof` (not allowed in NODE_OPTIONS), so a V8 CPU profile is
 * written to `profileDir` when the process exits.
 */
export function startProfiled(env: NodeJS.ProcessEnv, args: string[], profileDir: string): Promise<Started> {
  return startProxy(env, args, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
}

/** Stops every given process (in parallel, ignoring the ones never started). */
export async function stopAll(...ps: Array<Started | null | undefined>): Promise<void> {
  await Promise.all(ps.map((p) => stopProcess(p)));
}

/**
 * Polls `check` until it returns true (the tests' {@link waitFor}); throws after `timeoutMs`, the
 * message starting with `what`.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  try {
    await waitFor(check, timeoutMs, intervalMs);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resident memory and CPU time of a process, from /proc (Linux). */
export interface ProcStats {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size (VmHWM), bytes. */
  peakRss: number;
  /** User + system CPU time consumed so far, ms. */
  cpuMs: number;
}

const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux x86-64 and arm64

/** Reads a process's {@link ProcStats}; null when /proc is unavailable or the process is gone. */
export function procStats(pid: number | undefined): ProcStats | null {
  if (!pid) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime (14), stime (15)
    return { rss: kb('VmRSS'), peakRss: kb('VmHWM'), cpuMs };
  } catch {
    return null;
  }
}

/** PIDs of the processes whose command is `name` (from /proc/<pid>/comm), e.g. every PostgreSQL backend and helper. */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * CPU time (user + system, ms) used so far by the processes of `pids`, summed; a process that is
 * gone counts 0. Per-process clocks tick every 10 ms.
 */
export function cpuMsOf(pids: ReadonlyArray<number | undefined>): number {
  return pids.reduce<number>((sum, pid) => sum + (procStats(pid)?.cpuMs ?? 0), 0);
}

/** Busy CPU time of the whole machine so far (all cores; /proc/stat), ms. */
export function machineBusyMs(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already part of user)
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
    return (busy * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/**
 * Measures how much CPU other processes used while `fn` ran: machine busy time minus the CPU time
 * of `pids` (and this process), as a percentage of all cores over the wall time.
 */
export async function withForeignCpu<R>(pids: Iterable<number | undefined>, fn: () => Promise<R>): Promise<{ result: R; otherCpuPct: number }> {
  const list = [...pids].filter((p): p is number => typeof p === 'number' && p !== process.pid);
  const ours = () => list.reduce((s, p) => s + (procStats(p)?.cpuMs ?? 0), 0) + (process.cpuUsage().user + process.cpuUsage().system) / 1000;
  const b0 = machineBusyMs();
  const o0 = ours();
  const t0 = performance.now();
  const result = await fn();
  const wall = performance.now() - t0;
  const other = machineBusyMs() - b0 - (ours() - o0);
  return { result, otherCpuPct: Math.max(0, (other / (wall * cpus().length)) * 100) };
}

/**
 * Waits until the machine is quiet (busy time of all processes below `maxPct` % of all cores over
 * 2 s), for at most `timeoutMs`. Returns the last busy percentage measured.
 */
export async function waitQuiet(maxPct: number, timeoutMs: number): Promise<{ busyPct: number; waitedMs: number }> {
  const t0 = Date.now();
  let pct = NaN;
  do {
    const b0 = machineBusyMs();
    const w0 = performance.now();
    await sleep(2000);
    pct = ((machineBusyMs() - b0) / ((performance.now() - w0) * cpus().length)) * 100;
    if (pct <= maxPct) break;
  } while (Date.now() - t0 < timeoutMs);
  return { busyPct: pct, waitedMs: Date.now() - t0 };
}

/** The machine the figures were measured on. */
export function machineInfo(): Record<string, unknown> {
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    pinning:
      'none: the load generator (this process), the server under test, the stub and (where used) admin and PostgreSQL share all cores',
  };
}

/* ------------------------------------------------------------------------------------------------
 * Targets and load generators
 * --------------------------------------------------------------------------------------------- */

/** One endpoint measured: the request sent to it and the process whose CPU/RSS is charged to it. */
export interface Target {
  /** Short key: `a`, `b`, `b3`, `c`, … */
  key: string;
  label: string;
  /** Full URL, path included. */
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** PID of the server under test (CPU time and RSS are read from it). */
  pid: number | undefined;
  /**
   * A header given a new value (a counter) on every request, e.g. `svc-cache-seed` so that every
   * request is a cache miss; absent: every request is the same.
   */
  varyHeader?: string;
}

/**
 * The counter behind {@link varying}: one per bench process, so no value repeats across runs (a
 * value seen in an earlier round would make a "miss" target's request a cache hit).
 */
let varyCounter = 0;
const VARY_PREFIX = `${process.pid}-${Date.now()}-`;

/** autocannon's per-request hook setting `name` to a value never used before on each request. */
function varying(name: string): Array<{ setupRequest: (req: { headers?: Record<string, string> }) => unknown }> {
  return [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, [name]: VARY_PREFIX + varyCounter++ } }) }];
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  latency: { p50: number; p90: number; p99: number; mean: number; max: number };
  requests: { average: number; total: number; sent: number };
}

interface AutocannonOptions {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  connections: number;
  pipelining: number;
  duration?: number;
  amount?: number;
  overallRate?: number;
  ignoreCoordinatedOmission?: boolean;
  timeout?: number;
  /** Per-request hooks (the request's defaults are the options above). */
  requests?: ReturnType<typeof varying>;
}

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: AutocannonOptions) => PromiseLike<AutocannonResult>;

/** Options of one autocannon run. */
export interface LoadOptions {
  connections: number;
  pipelining: number;
  /** Seconds (ignored when `amount` is given). */
  duration: number;
  /** Send exactly this many requests instead (a multiple of `connections`: none is in flight at the end). */
  amount?: number;
  /** Fixed total request rate (autocannon `overallRate`; per-connection buckets refilled each second). */
  overallRate?: number;
}

/** Figures of one autocannon run. Latencies in ms at autocannon's resolution (whole milliseconds). */
export interface LoadResult {
  /** 2xx responses per second of the run. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Requests written (includes the ones still in flight when the run stopped). */
  sent: number;
  durationS: number;
  /** CPU time the server under test spent per 2xx response, µs (10 ms clock resolution over the run). */
  serverCpuUsPerReq: number | null;
}

/** Runs autocannon against `target`. */
export async function load(target: Target, opts: LoadOptions): Promise<LoadResult> {
  const before = procStats(target.pid);
  const r = await autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    ...(target.varyHeader !== undefined ? { requests: varying(target.varyHeader) } : {}),
    connections: opts.connections,
    pipelining: opts.pipelining,
    ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.duration }),
    overallRate: opts.overallRate,
    // With a rate, autocannon would otherwise add synthetic samples with a 1 ms expected interval.
    ignoreCoordinatedOmission: opts.overallRate !== undefined ? true : undefined,
    timeout: 30,
  });
  const after = procStats(target.pid);
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    mean: r.latency.mean,
    ok,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    sent: r.requests.sent,
    durationS: r.duration,
    serverCpuUsPerReq: before && after && ok > 0 ? ((after.cpuMs - before.cpuMs) * 1000) / ok : null,
  };
}

/** Figures of one paced run; times in ms measured with `performance.now()` (µs precision). */
export interface PacedResult {
  rate: number;
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Request sent → response headers. */
  headersP50: number;
  headersP99: number;
  /** Request sent → first body byte (time to first byte of the stream). */
  ttfbP50: number;
  ttfbP99: number;
  /** Request sent → last body byte. */
  totalP50: number;
  totalP99: number;
  totalMean: number;
}

/**
 * An open-loop client: sends `rate` requests per second for `durationS` seconds (scheduled from a
 * 1 ms timer, so arrivals are spread over each second rather than bunched at its start), each on a
 * keep-alive connection, and times every request with `performance.now()`.
 */
export async function paced(target: Target, rate: number, durationS: number): Promise<PacedResult> {
  const url = new URL(target.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024, scheduling: 'lifo' });
  const headers = { ...target.headers, 'content-length': String(target.body.length) };
  const head: number[] = [];
  const ttfb: number[] = [];
  const total: number[] = [];
  let sent = 0;
  let non2xx = 0;
  let errors = 0;
  let inFlight = 0;
  await new Promise<void>((resolve) => {
    const start = performance.now();
    const end = start + durationS * 1000;
    let stopped = false;
    const settle = () => {
      if (--inFlight === 0 && stopped) resolve();
    };
    const fire = () => {
      sent++;
      inFlight++;
      const t0 = performance.now();
      let tHead = 0;
      let tFirst = 0;
      const req = http.request({ agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
        tHead = performance.now();
        res.on('data', () => {
          if (tFirst === 0) tFirst = performance.now();
        });
        res.on('end', () => {
          const t = performance.now();
          if (res.statusCode! >= 200 && res.statusCode! < 300) {
            head.push(tHead - t0);
            ttfb.push((tFirst || t) - t0);
            total.push(t - t0);
          } else non2xx++;
          settle();
        });
        res.on('error', () => {
          errors++;
          settle();
        });
      });
      req.on('error', () => {
        errors++;
        settle();
      });
      req.end(target.body);
    };
    const tick = () => {
      const now = performance.now();
      if (now >= end) {
        stopped = true;
        if (inFlight === 0) resolve();
        return;
      }
      const due = Math.floor(((now - start) * rate) / 1000);
      while (sent < due) fire();
      setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  const sorted = (xs: number[]) => xs.sort((x, y) => x - y);
  sorted(head);
  sorted(ttfb);
  sorted(total);
  return {
    rate,
    sent,
    ok: total.length,
    non2xx,
    errors,
    headersP50: percentile(head, 50),
    headersP99: percentile(head, 99),
    ttfbP50: percentile(ttfb, 50),
    ttfbP99: percentile(ttfb, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
    totalMean: total.reduce((s, x) => s + x, 0) / (total.length || 1),
  };
}

/** Figures of holding many streams open through one server. */
export interface OpenStreamsResult {
  streams: number;
  /** Streams whose first chunk arrived. */
  opened: number;
  /** Streams that ended with `[DONE]` after the release. */
  completed: number;
  failed: number;
  /** ms until every stream had its first chunk. */
  openMs: number;
  rssIdleMiB: number | null;
  /** Highest RSS sampled while all streams were open. */
  rssOpenMiB: number | null;
  /** RSS after the streams ended. */
  rssAfterMiB: number | null;
  /** The process's peak RSS (VmHWM) since it started. */
  peakRssMiB: number | null;
}

const MiB = (bytes: number | undefined | null): number | null => (bytes == null || Number.isNaN(bytes) ? null : Math.round((bytes / 2 ** 20) * 10) / 10);

/**
 * Opens `n` concurrent streaming requests to `target` (one connection each), waits until every one
 * has delivered its first chunk, samples the server's RSS for `holdMs`, then calls `release` (which
 * makes the upstream end them) and waits for every stream to end.
 */
export async function openStreams(target: Target, n: number, holdMs: number, release: () => Promise<void>): Promise<OpenStreamsResult> {
  const url = new URL(target.url);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const headers = { ...target.headers, 'content-length': String(target.body.length) };
  const rssIdle = procStats(target.pid)?.rss;
  let opened = 0;
  let settledFirst = 0;
  let completed = 0;
  let failed = 0;
  let onOpened: () => void = () => {};
  const allOpened = new Promise<void>((r) => (onOpened = r));
  const ends: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    ends.push(
      new Promise<void>((resolve) => {
        let first = true;
        let tail = '';
        const fail = () => {
          failed++;
          if (first) {
            first = false;
            if (++settledFirst === n) onOpened();
          }
          resolve();
        };
        const req = http.request({ agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return fail();
          }
          res.setEncoding('utf8');
          res.on('data', (s: string) => {
            if (first) {
              first = false;
              opened++;
              if (++settledFirst === n) onOpened();
            }
            tail = (tail + s).slice(-64);
          });
          const settleFirst = () => {
            if (!first) return;
            first = false;
            if (++settledFirst === n) onOpened();
          };
          res.on('end', () => {
            settleFirst();
            if (tail.includes('[DONE]')) completed++;
            else failed++;
            resolve();
          });
          res.on('error', () => {
            settleFirst();
            failed++;
            resolve();
          });
        });
        req.on('error', fail);
        req.end(target.body);
      }),
    );
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([allOpened, new Promise<void>((r) => (timer = setTimeout(r, 60_000)))]);
  clearTimeout(timer);
  const openMs = performance.now() - t0;
  let rssOpen = 0;
  const holdEnd = Date.now() + holdMs;
  while (Date.now() < holdEnd) {
    rssOpen = Math.max(rssOpen, procStats(target.pid)?.rss ?? 0);
    await sleep(100);
  }
  await release();
  await Promise.all(ends);
  agent.destroy();
  await sleep(500);
  const after = procStats(target.pid);
  return {
    streams: n,
    opened,
    completed,
    failed,
    openMs: Math.round(openMs),
    rssIdleMiB: MiB(rssIdle),
    rssOpenMiB: MiB(rssOpen || null),
    rssAfterMiB: MiB(after?.rss),
    peakRssMiB: MiB(after?.peakRss),
  };
}

/* ------------------------------------------------------------------------------------------------
 * Statistics and formatting
 * --------------------------------------------------------------------------------------------- */

/** The `p`-th percentile (nearest rank) of an ascending array; NaN when empty. */
export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length - 1, Math.max(0, rank - 1))]!;
}

/** The median of `xs` (mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Per-key medians over a list of records with numeric fields (non-numeric fields are dropped). */
export function medianOf<T extends object>(rows: readonly T[]): Record<string, number> {
  const out: Record<string, number> = {};
  if (rows.length === 0) return out;
  for (const k of Object.keys(rows[0]!)) {
    const vals = rows.map((r) => (r as Record<string, unknown>)[k]).filter((v): v is number => typeof v === 'number');
    if (vals.length) out[k] = median(vals);
  }
  return out;
}

/** Rounds to `digits` decimals (NaN and null become null, for JSON). */
export function round(x: number | null | undefined, digits = 2): number | null {
  if (x == null || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Renders rows as a left-aligned text table with a header line. */
export function table(header: string[], rows: Array<Array<string | number | null>>): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null || (typeof c === 'number' && !Number.isFinite(c)) ? '–' : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}
