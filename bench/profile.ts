/**
 * Summarizes a V8 CPU profile (`.cpuprofile`, as written by `node --cpu-prof`, e.g. by
 * `npm run bench -- --scenario=auth --profile`): the functions with the most self time, the
 * functions with the most inclusive time in the repository's own code, and self time by file or
 * package. Percentages are of the busy (non-idle) samples. Positions are mapped back to the
 * TypeScript files and lines through the source maps of esbuild's bundles (`dist/*.mjs.map`, see
 * scripts/build.ts; what the bench runs) or tsx's cached source maps (a process run under tsx), in
 * either case only when they fit the sources as they are now. In a bundle, a function esbuild renamed
 * to avoid a name clash between modules shows under that name (e.g. `isRecord2`).
 *
 * Run: node --import tsx bench/profile.ts <file.cpuprofile> [--top=25] [--filter=proxy/] [--requests=N]
 * (`--requests`: how many requests the profiled process served, for a µs-per-request column).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { table } from './lib.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
/** The JSON of a `.cpuprofile` file (Chrome DevTools protocol `Profiler.Profile`). */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self and inclusive time per function, per file, from one profile (µs). */
export interface ProfileSummary {
  busyUs: number;
  idleUs: number;
  gcUs: number;
  self: Map<string, number>;
  inclusive: Map<string, number>;
  byFile: Map<string, number>;
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Shortens a module URL to a repo-relative path or `pkg:<name>` / `node:<module>`. */
export function shortUrl(url: string): string {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return url;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `pkg:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const i = url.indexOf('/work/main/');
  if (i >= 0) return url.slice(i + '/work/main/'.length);
  return url.replace(/^file:\/\//, '');
}

/** Absolute path → file content, as the profiled process loaded it. */
export type SourceSnapshot = Map<string, string>;

/** Reads every `.ts` file under `dirs` (repo-relative), to match tsx's cached transforms later. */
export function snapshotSources(root: string, dirs: string[]): SourceSnapshot {
  const out: SourceSnapshot = new Map();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && e.name !== 'node_modules') walk(p);
      else if (e.isFile() && e.name.endsWith('.ts')) out.set(p, readFileSync(p, 'utf8'));
    }
  };
  for (const d of dirs) walk(path.join(root, d));
  return out;
}

/**
 * Source maps of the code tsx actually ran. tsx caches each transform (code and source map) in
 * `<tmpdir>/tsx-<uid>/`, one entry per version of a file, without the source text; so for each file
 * of the profile the candidate whose mapping puts the profile's named functions on lines of the
 * snapshot that contain those names is chosen. Without a map, positions are those of tsx's output
 * (whole files on a few lines), which do not tell closures apart.
 */
export function tsxSourceMaps(profile: CpuProfile, snapshot: SourceSnapshot): Map<string, SourceMap> {
  const candidates = new Map<string, SourceMap[]>();
  const dir = path.join(tmpdir(), `tsx-${process.getuid?.() ?? 0}`);
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return new Map();
  }
  for (const f of files) {
    const file = path.join(dir, f);
    try {
      if (statSync(file).size > 5_000_000) continue;
      const entry = JSON.parse(readFileSync(file, 'utf8')) as { map?: SourceMapPayload };
      const source = entry.map?.sources?.[0];
      if (!source || !snapshot.has(source)) continue;
      const url = `file://${source}`;
      if (!candidates.has(url)) candidates.set(url, []);
      candidates.get(url)!.push(new SourceMap(entry.map!));
    } catch {
      /* not a transform entry */
    }
  }
  const framesByUrl = new Map<string, CallFrame[]>();
  for (const n of profile.nodes) {
    const f = n.callFrame;
    if (!f.functionName || !candidates.has(f.url)) continue;
    if (!framesByUrl.has(f.url)) framesByUrl.set(f.url, []);
    framesByUrl.get(f.url)!.push(f);
  }
  const maps = new Map<string, SourceMap>();
  for (const [url, frames] of framesByUrl) {
    const lines = snapshot.get(url.slice('file://'.length))!.split('\n');
    let best: { map: SourceMap; score: number } | null = null;
    for (const map of candidates.get(url)!) {
      let score = 0;
      for (const f of frames) {
        const e = map.findEntry(f.lineNumber, f.columnNumber) as { originalLine?: number };
        if (typeof e.originalLine === 'number' && lines[e.originalLine]?.includes(f.functionName)) score++;
      }
      if (!best || score > best.score) best = { map, score };
    }
    if (best && best.score >= frames.length * 0.8) maps.set(url, best.map);
  }
  return maps;
}

/** A frame's position in its source (through `map`): file URL and 0-based line; null when unmapped. */
function original(map: SourceMap, f: CallFrame): { url: string; line: number } | null {
  const e = map.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string; originalLine?: number };
  if (typeof e.originalLine !== 'number') return null;
  // tsx's maps name the absolute path, esbuild's a path relative to the bundle (beside its map).
  return { url: e.originalSource ? new URL(e.originalSource, f.url).href : f.url, line: e.originalLine };
}

/**
 * Source maps of esbuild bundles (scripts/build.ts): for each file URL of the profile outside
 * node_modules that has a `<file>.map` beside it. As for tsx's maps, a map is used only when it puts
 * at least 80 % of the profile's named functions of that file on source lines containing their
 * names (a number esbuild appended to a clashing name is ignored), so a bundle rebuilt from changed
 * sources since the profile was taken is not trusted. Sources outside `snapshot` are read from disk.
 */
export function bundleSourceMaps(profile: CpuProfile, snapshot: SourceSnapshot): Map<string, SourceMap> {
  const framesByUrl = new Map<string, CallFrame[]>();
  for (const n of profile.nodes) {
    const f = n.callFrame;
    if (!f.url.startsWith('file://') || f.url.includes('/node_modules/')) continue;
    if (!framesByUrl.has(f.url)) framesByUrl.set(f.url, []);
    if (f.functionName && !SPECIAL.has(f.functionName)) framesByUrl.get(f.url)!.push(f);
  }
  const sourceLines = new Map<string, string[] | null>();
  const linesOf = (url: string): string[] | null => {
    if (!sourceLines.has(url)) {
      const file = fileURLToPath(url);
      let text = snapshot.get(file) ?? null;
      if (text === null) {
        try {
          text = readFileSync(file, 'utf8');
        } catch {
          /* a source that is gone */
        }
      }
      sourceLines.set(url, text === null ? null : text.split('\n'));
    }
    return sourceLines.get(url)!;
  };
  const maps = new Map<string, SourceMap>();
  for (const [url, frames] of framesByUrl) {
    let map: SourceMap;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      continue; // no map beside it: not a bundle
    }
    let score = 0;
    for (const f of frames) {
      const o = original(map, f);
      const line = o ? linesOf(o.url)?.[o.line] : undefined;
      if (line !== undefined && (line.includes(f.functionName) || line.includes(f.functionName.replace(/(\D)\d+$/, '$1')))) score++;
    }
    if (score >= frames.length * 0.8) maps.set(url, map);
  }
  return maps;
}

/** The source maps for a profile: esbuild bundles' ({@link bundleSourceMaps}) and tsx's ({@link tsxSourceMaps}). */
export function sourceMaps(profile: CpuProfile, snapshot: SourceSnapshot): Map<string, SourceMap> {
  return new Map([...tsxSourceMaps(profile, snapshot), ...bundleSourceMaps(profile, snapshot)]);
}

/** Keys a frame by function and source position (`name file:line`), and names its source file. */
function locator(maps: Map<string, SourceMap>): (f: CallFrame) => { key: string; file: string } {
  const cache = new Map<CallFrame, { key: string; file: string }>();
  return (f) => {
    let loc = cache.get(f);
    if (!loc) {
      if (SPECIAL.has(f.functionName)) loc = { key: f.functionName, file: f.functionName };
      else {
        let url = f.url;
        let line = f.lineNumber + 1;
        const sm = maps.get(f.url);
        const o = sm ? original(sm, f) : null;
        if (o) {
          url = o.url;
          line = o.line + 1;
        }
        const file = shortUrl(url);
        loc = { key: `${f.functionName || '(anonymous)'} ${file}:${line}`, file };
      }
      cache.set(f, loc);
    }
    return loc;
  };
}

/** Computes the {@link ProfileSummary} of a profile. */
export function summarize(p: CpuProfile, maps: Map<string, SourceMap> = new Map()): ProfileSummary {
  const locate = locator(maps);
  const key = (f: CallFrame) => locate(f).key;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) byId.set(n.id, n);
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const s: ProfileSummary = { busyUs: 0, idleUs: 0, gcUs: 0, self: new Map(), inclusive: new Map(), byFile: new Map() };
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0; // a sample's time is the gap to the next one
    const node = byId.get(p.samples[i]!)!;
    const f = node.callFrame;
    if (f.functionName === '(idle)') {
      s.idleUs += dt;
      continue;
    }
    s.busyUs += dt;
    if (f.functionName === '(garbage collector)') s.gcUs += dt;
    add(s.self, key(f), dt);
    add(s.byFile, locate(f).file, dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = key(byId.get(id)!.callFrame);
      if (!seen.has(k)) {
        seen.add(k);
        add(s.inclusive, k, dt);
      }
    }
  }
  return s;
}

function top(m: Map<string, number>, n: number, busy: number, perRequest: number | undefined, filter?: (k: string) => boolean): string[][] {
  return [...m.entries()]
    .filter(([k]) => !filter || filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => [k, `${(v / 1000).toFixed(0)}`, `${((v / busy) * 100).toFixed(1)}`, ...(perRequest ? [(v / perRequest).toFixed(2)] : [])]);
}

/**
 * Prints the summary of a profile: top self time, inclusive time of functions whose location
 * contains `own` (e.g. `proxy/`), and self time by file. With `requests`, adds µs per request.
 */
export function report(s: ProfileSummary, opts: { top?: number; own?: string; requests?: number } = {}): void {
  const n = opts.top ?? 25;
  const own = opts.own ?? 'proxy/';
  const cols = (first: string) => [first, 'ms', '% busy', ...(opts.requests ? ['µs/req'] : [])];
  console.log(
    `busy ${(s.busyUs / 1e6).toFixed(2)} s, idle ${(s.idleUs / 1e6).toFixed(2)} s, GC ${((s.gcUs / s.busyUs) * 100).toFixed(1)} % of busy` +
      (opts.requests ? `; ${opts.requests} requests → ${(s.busyUs / opts.requests).toFixed(1)} µs busy per request (start-up included)` : '') +
      '\n',
  );
  console.log('self time (top functions)');
  console.log(table(cols('function'), top(s.self, n, s.busyUs, opts.requests)));
  console.log(`\ninclusive time, functions in ${own}`);
  console.log(table(cols('function'), top(s.inclusive, n, s.busyUs, opts.requests, (k) => k.includes(` ${own}`))));
  console.log('\nself time by file / package');
  console.log(table(cols('file'), top(s.byFile, n, s.busyUs, opts.requests)));
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, filter: { type: 'string' }, requests: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) {
    console.error('usage: node --import tsx bench/profile.ts <file.cpuprofile> [--top=25] [--filter=proxy/] [--requests=N]');
    process.exit(2);
  }
  console.log(file);
  // The repository's files as they are now (right for a profile taken since the last edit).
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const maps = sourceMaps(profile, snapshotSources(path.resolve(fileURLToPath(new URL('../', import.meta.url))), ['proxy', 'shared']));
  report(summarize(profile, maps), {
    top: Number(values.top ?? 25),
    own: values.filter ?? 'proxy/',
    requests: values.requests ? Number(values.requests) : undefined,
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) main();
