/**
 * `npm run build`: bundles the processes that run as compiled JavaScript (plain `node`, no tsx) into
 * `dist/` (git-ignored) with esbuild:
 *
 * - `proxy/main.ts` → `dist/proxy.mjs`, what `npm start` and `npm run proxy` run;
 * - the web console, `admin/console/main.tsx` → `dist/console/` (index.html, app.js, app.css and the
 *   pages' chunk-*.js, each with .br and .gz copies), for browsers, minified, every package inlined;
 *   admin serves it at `/` (admin/console-static.ts);
 * - the benchmark's own processes under load, so they compare fairly with the gateway:
 *   `bench/forward-node.ts`, `bench/forward-http-proxy3.ts`, `bench/stub-hold.ts` and
 *   `test/support/stub-upstream.ts` → `dist/bench/<name>.mjs`.
 *
 * Packages stay external (imported from node_modules at run time); the repository's own modules,
 * and JSON they import (shared/data/models.json), are inlined. Each bundle gets a linked source map
 * (`<file>.mjs.map`, read by bench/profile.ts). No `keepNames`: tsx's `__name` wrappers are what
 * this avoids. Run: `node --import tsx scripts/build.ts` (about 20 ms per bundle).
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlibConstants } from 'node:zlib';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The bundles: source entry → output file, both relative to the repository root. */
export const BUNDLES = {
  proxy: { entry: 'proxy/main.ts', outfile: 'dist/proxy.mjs' },
  forwardNode: { entry: 'bench/forward-node.ts', outfile: 'dist/bench/forward-node.mjs' },
  forwardHttpProxy3: { entry: 'bench/forward-http-proxy3.ts', outfile: 'dist/bench/forward-http-proxy3.mjs' },
  stubUpstream: { entry: 'test/support/stub-upstream.ts', outfile: 'dist/bench/stub-upstream.mjs' },
  stubHold: { entry: 'bench/stub-hold.ts', outfile: 'dist/bench/stub-hold.mjs' },
} as const;

/** The console: its entry, its TypeScript settings and where it is written. */
export const CONSOLE = { entry: 'admin/console/main.tsx', tsconfig: 'admin/console/tsconfig.json', outdir: 'dist/console' } as const;

/** The browsers the console's bundle is written for (evergreen browsers of 2023 onwards). */
const CONSOLE_TARGETS = ['chrome111', 'edge111', 'firefox113', 'safari16.4'];

/** The console's page: the bundle and its stylesheet, nothing from elsewhere. */
const CONSOLE_INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark">
<title>svc gateway console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body>
<div id="root"></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;

const COMMON: esbuild.BuildOptions = {
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  keepNames: false,
  minify: false,
  logLevel: 'warning',
};

/**
 * A bench process (a stub, a forwarder). Its `import.meta.url` is replaced by its source file's URL,
 * so URL-relative reads (the stub's fixtures, `../fixtures/providers/`) resolve as they do under tsx,
 * wherever the bundle lies. esbuild's `define` replaces it in every module of the bundle, so only the
 * entry may use `import.meta`: another module of the repository it imports (the stubs' shared
 * plumbing, test/support/scripted-stub.ts) must not, which the metafile check enforces.
 * @throws {Error} naming the module when one other than the entry uses `import.meta`.
 */
async function buildBenchProcess(entry: string, outfile: string): Promise<void> {
  const result = await esbuild.build({
    ...COMMON,
    entryPoints: [entry],
    outfile,
    metafile: true,
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(ROOT, entry)).href) },
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    if (input === entry) continue;
    if ((await readFile(path.join(ROOT, input), 'utf8')).includes('import.meta')) {
      throw new Error(`${entry}: ${input} uses import.meta, which a bench bundle fixes to its entry's URL (${entry})`);
    }
  }
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Writes a Brotli and a gzip copy beside each script and stylesheet of `out`, which @koa/send
 * serves to browsers that accept them (a third of the bytes, compressed once at build time).
 */
async function precompress(out: string): Promise<void> {
  const files = (await readdir(out)).filter((f) => f.endsWith('.js') || f.endsWith('.css'));
  await Promise.all(
    files.map(async (f) => {
      const data = await readFile(path.join(out, f));
      // Brotli quality 5: within 10 % of the size of 11 at a fiftieth of its time (npm start waits for it).
      const [br, gz] = await Promise.all([brotliAsync(data, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }), gzipAsync(data)]);
      await Promise.all([writeFile(path.join(out, `${f}.br`), br), writeFile(path.join(out, `${f}.gz`), gz)]);
    }),
  );
}

/**
 * Bundles the console into `outdir` (relative to the repository root, or absolute) and writes its
 * index.html. Pages load their heavy libraries as they open (chart.js with the Dashboard, the
 * markdown and diff libraries with a request or a prompt), split into `chunk-*.js` files, so the
 * Requests page starts on the smallest script.
 */
async function bundleConsole(outdir: string): Promise<void> {
  const out = path.resolve(ROOT, outdir);
  // A previous build's chunks (their names carry hashes) would pile up: start from an empty folder.
  await rm(out, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { app: CONSOLE.entry },
    outdir: out,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: CONSOLE_TARGETS,
    tsconfig: CONSOLE.tsconfig,
    jsx: 'automatic',
    // React's production build: without this the bundle carries its development checks.
    define: { 'process.env.NODE_ENV': '"production"' },
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
  });
  await writeFile(path.join(out, 'index.html'), CONSOLE_INDEX);
  await precompress(out);
}

// esbuild's service process is stopped once no build of this module is running any more.
let active = 0;
async function withEsbuild<T>(work: () => Promise<T>): Promise<T> {
  active++;
  try {
    return await work();
  } finally {
    if (--active === 0) await esbuild.stop();
  }
}

/**
 * Builds the web console into `outdir` (default `dist/console`, emptied first): `index.html`,
 * `app.js`, `app.css` and the chunks (with source maps and compressed copies). Tests call it to
 * serve a real console.
 * @throws when esbuild reports an error (printed as well).
 */
export function buildConsole(outdir: string = CONSOLE.outdir): Promise<void> {
  return withEsbuild(() => bundleConsole(outdir));
}

let running: Promise<void> | null = null;

/**
 * Builds every bundle of {@link BUNDLES} and the console ({@link CONSOLE}) into `dist/`, then
 * stops esbuild's service process (it would otherwise idle for the life of a long-running caller
 * such as `npm start`). Concurrent calls share one build.
 * @throws when esbuild reports an error (printed as well), or a bench bundle pulls in a second
 * module of the repository.
 */
export function build(): Promise<void> {
  running ??= withEsbuild(async () => {
    const { proxy, ...bench } = BUNDLES;
    await Promise.all([
      esbuild.build({ ...COMMON, entryPoints: [proxy.entry], outfile: proxy.outfile }),
      ...Object.values(bench).map((b) => buildBenchProcess(b.entry, b.outfile)),
      bundleConsole(CONSOLE.outdir),
    ]);
  }).finally(() => {
    running = null;
  });
  return running;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const started = performance.now();
  await build();
  console.log(`built ${[...Object.values(BUNDLES).map((b) => b.outfile), CONSOLE.outdir].join(', ')} in ${Math.round(performance.now() - started)} ms`);
}
