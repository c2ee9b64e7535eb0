/**
 * What the gateway's garbage collector does per request: builds the bundles (scripts/build.ts),
 * starts the stub and the gateway (`svc.features: none`) with V8's `--trace-gc-nvp`, sends a warm-up
 * of 20,000 requests and then exactly `--requests` (autocannon `amount`, 50 connections), and sums
 * V8's own lines over the measured requests: bytes allocated per request, GC pause per request (µs),
 * scavenges and mark-compacts, and bytes promoted to the old generation per scavenge. Unlike req/s and
 * CPU time, the allocation and promotion figures barely move with this VM's noise, so they tell two
 * versions of the code apart where `bench/run.ts` cannot.
 *
 * Targets (the `bench/run.ts` requests): `chat` (the nonstream scenario's gateway request on
 * `/ai/chat/completions`, a new value of a meaningless header per request as the cache scenario's c),
 * `responses` (the Responses passthrough on `/v1/responses`) and `cache` (a cache miss per request: a
 * new `Svc-Cache-Seed` each time, so every answer is stored).
 *
 * Usage: node --import tsx bench/gc-trace.ts [--target=chat|responses|cache] [--requests=100000]
 * Waits while /tmp/bench.lock exists (someone else is benchmarking).
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from '../scripts/build.ts';
import { load, sleep, startProxy, startStub, stopAll, writeConfig, type Target } from './lib.ts';
import { CHAT_BODY, RESPONSES_BODY } from './requests.ts';

/** The sums of V8's `--trace-gc-nvp` lines over a run. */
export interface GcTotals {
  /** Bytes allocated (the `allocated=` of every collection). */
  allocatedBytes: number;
  /** Pause of every collection, ms. */
  pauseMs: number;
  /** The longest single pause, ms. */
  maxPauseMs: number;
  scavenges: number;
  /** Full collections (mark-compact, any `gc=` other than `s`). */
  markCompacts: number;
  /** Bytes promoted to the old generation by the scavenges. */
  promotedBytes: number;
}

/**
 * Sums `--trace-gc-nvp` output (one `name=value` line per collection; V8's own format, see
 * `Heap::PrintGCTrace`/`GCTracer::PrintNVP`). Lines of other output are ignored.
 */
export function sumGcTrace(text: string): GcTotals {
  const t: GcTotals = { allocatedBytes: 0, pauseMs: 0, maxPauseMs: 0, scavenges: 0, markCompacts: 0, promotedBytes: 0 };
  for (const line of text.split('\n')) {
    const m = /\bpause=([\d.]+).*?\bgc=(\w+)/.exec(line);
    if (!m) continue;
    const pause = Number(m[1]);
    t.pauseMs += pause;
    t.maxPauseMs = Math.max(t.maxPauseMs, pause);
    const scavenge = m[2] === 's';
    if (scavenge) t.scavenges++;
    else t.markCompacts++;
    t.allocatedBytes += Number(/\ballocated=(\d+)/.exec(line)?.[1] ?? 0);
    if (scavenge) t.promotedBytes += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  return t;
}

/** The request of each target against the gateway at `url` (pid: the gateway's). */
function targetOf(name: string, url: string, pid: number | undefined): Target {
  const json = { 'content-type': 'application/json' };
  const chat = Buffer.from(JSON.stringify({ ...CHAT_BODY, model: 'openai/gpt-4o-mini' }));
  switch (name) {
    case 'chat':
      return { key: 'chat', label: 'chat passthrough', url: `${url}/ai/chat/completions`, headers: json, body: chat, pid, varyHeader: 'x-bench-n' };
    case 'responses':
      return { key: 'responses', label: 'Responses passthrough', url: `${url}/v1/responses`, headers: json, body: Buffer.from(JSON.stringify({ ...RESPONSES_BODY, model: 'gpt-4.1-nano' })), pid };
    case 'cache':
      return { key: 'cache', label: 'cache miss', url: `${url}/ai/chat/completions`, headers: { ...json, 'svc-cache-enabled': 'true' }, body: chat, pid, varyHeader: 'svc-cache-seed' };
    default:
      throw new Error(`--target must be chat, responses or cache, not ${JSON.stringify(name)}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { target: { type: 'string', default: 'chat' }, requests: { type: 'string', default: '100000' } } });
  const requests = Number(values.requests);
  if (!Number.isInteger(requests) || requests < 1000) throw new Error('--requests must be a whole number ≥ 1000');
  while (existsSync('/tmp/bench.lock')) await sleep(5_000);
  await build();
  const stub = await startStub('test');
  const config = writeConfig({ svc: { features: 'none' }, providers: { openai: { 'base-url': `http://127.0.0.1:${stub.port}/v1` } } });
  const env = { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', OPENAI_API_KEY: 'sk-bench-provider-key' };
  const proxy = await startProxy(env, ['--config', config], ['--trace-gc-nvp']).catch(async (err: unknown) => {
    await stopAll(stub);
    throw err;
  });
  try {
    const target = targetOf(values.target!, `http://127.0.0.1:${proxy.port}`, proxy.child.pid);
    await load(target, { connections: 50, pipelining: 1, duration: 0, amount: 20_000 });
    const from = proxy.output().length;
    const r = await load(target, { connections: 50, pipelining: 1, duration: 0, amount: requests });
    await sleep(200);
    const t = sumGcTrace(proxy.output().slice(from));
    const ok = Math.max(1, r.ok);
    console.log(`${target.label}: ${r.ok} of ${requests} answered 2xx, ${Math.round(r.rps)} req/s, ${Math.round(r.serverCpuUsPerReq ?? 0)} µs CPU per request`);
    console.log(`allocated ${Math.round(t.allocatedBytes / ok)} bytes per request; GC pause ${((t.pauseMs * 1000) / ok).toFixed(2)} µs per request (longest ${t.maxPauseMs} ms)`);
    console.log(`${t.scavenges} scavenges, ${t.markCompacts} mark-compacts, ${Math.round(t.promotedBytes / Math.max(1, t.scavenges) / 1024)} KiB promoted per scavenge`);
  } finally {
    await stopAll(proxy, stub);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
