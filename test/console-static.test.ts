/**
 * The web console's serving by admin (admin/console-static.ts, mounted in admin/app.ts): index.html
 * at `/`, files with their content types, client-side routes answered with index.html, `/v1` and
 * `/health` left to the API, a 503 page saying to build when `dist/console` is missing, and a real
 * build by scripts/build.ts's `buildConsole`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { createApp } from '../admin/app.ts';
import type { Sql } from '../admin/db.ts';
import { buildConsole } from '../scripts/build.ts';
import { buildConfig } from '../shared/config.ts';

const INDEX = '<!doctype html><html><head><script type="module" src="/app.js"></script></head><body><div id="root"></div></body></html>';

const dirs: string[] = [];
const servers: http.Server[] = [];

/** A temporary directory, removed after the tests. */
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-console-'));
  dirs.push(dir);
  return dir;
}

/**
 * Admin's app serving the console from `consoleDir`. No route here reaches the database: `/v1`
 * requests are sent without a key, which authentication answers 401 before any query.
 */
async function startAdmin(consoleDir: string): Promise<string> {
  const sql = {} as Sql;
  const app = createApp({ sql, config: buildConfig({}), logger: pino({ level: 'silent' }), health: () => ({}), consoleDir });
  const server = http.createServer(app.callback());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw GET of `rawPath` as written (fetch would normalize `..` away). */
function rawGet(base: string, rawPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(base + rawPath, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

let built: string;
let missing: string;

before(async () => {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'app.js'), 'console.log("console");\n');
  writeFileSync(path.join(dir, 'app.css'), 'body { color: red; }\n');
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  built = await startAdmin(dir);
  missing = await startAdmin(path.join(tempDir(), 'not-built'));
});

after(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('GET / answers index.html as HTML, with a policy allowing only its own scripts', async () => {
  const res = await fetch(`${built}/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(await res.text(), INDEX);
  assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const head = await fetch(`${built}/`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
});

test('files are sent with their content types', async () => {
  const js = await fetch(`${built}/app.js`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  assert.equal(await js.text(), 'console.log("console");\n');
  const css = await fetch(`${built}/app.css`);
  assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
  const svg = await fetch(`${built}/assets/logo.svg`);
  assert.match(svg.headers.get('content-type') ?? '', /^image\/svg\+xml/);
});

test('a client-side route (no file, no extension) answers index.html', async () => {
  for (const p of ['/requests', '/requests/3f0c6a4e-1c9e-4a59-9d1b-0e1a2b3c4d5e', '/prompts/', '/keys?x=1']) {
    const res = await fetch(built + p);
    assert.equal(res.status, 200, p);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/, p);
    assert.equal(await res.text(), INDEX, p);
  }
});

test('a missing file with an extension is a 404, not index.html', async () => {
  const res = await fetch(`${built}/missing.js`);
  assert.equal(res.status, 404);
  assert.doesNotMatch(await res.text(), /<!doctype/i);
});

test('/v1, /health and non-GET methods are left to the API', async () => {
  const v1 = await fetch(`${built}/v1/api-keys`);
  assert.equal(v1.status, 401);
  assert.match(v1.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(((await v1.json()) as { data: unknown }).data, null);
  const unknown = await fetch(`${built}/v1/no-such-route`);
  assert.match(unknown.headers.get('content-type') ?? '', /application\/json/);
  const health = await fetch(`${built}/health`);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');
  const post = await fetch(`${built}/`, { method: 'POST', body: '{}' });
  assert.equal(post.status, 404);
  assert.match(post.headers.get('content-type') ?? '', /application\/json/);
});

test('paths leaving the console folder are refused', async () => {
  for (const p of ['/%2e%2e/package.json', '/..%2fpackage.json', '/.hidden']) {
    const status = await rawGet(built, p);
    assert.ok(status >= 400 && status < 500, `${p}: ${status}`);
  }
});

test('without a build, the console answers 503 saying to run npm run build; the API still answers', async () => {
  for (const p of ['/', '/requests', '/app.js']) {
    const res = await fetch(missing + p);
    assert.equal(res.status, 503, p);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /npm run build/);
  }
  const v1 = await fetch(`${missing}/v1/api-keys`);
  assert.equal(v1.status, 401);
});

test('buildConsole writes index.html, app.js and app.css that admin serves', async () => {
  const out = path.join(tempDir(), 'console');
  await buildConsole(out);
  const index = readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(index, /src="\/app\.js"/);
  assert.match(index, /href="\/app\.css"/);
  // Offline: the page and the bundle load nothing from another origin.
  assert.doesNotMatch(index, /https?:\/\//);
  assert.ok(readFileSync(path.join(out, 'app.css'), 'utf8').length > 0);
  const base = await startAdmin(out);
  const js = await fetch(`${base}/app.js`, { headers: { 'accept-encoding': 'br' } });
  assert.equal(js.status, 200);
  assert.equal(js.headers.get('content-encoding'), 'br', 'the precompressed copy');
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  const code = await js.text();
  assert.ok(code.length > 10_000, 'the bundle holds React and the pages');
  assert.doesNotMatch(code, /fonts\.googleapis|cdn\.jsdelivr|unpkg\.com/);
  // The pages' heavy libraries are chunks of their own, loaded from admin as pages open.
  const chunks = [...code.matchAll(/"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map((m) => m[1]!);
  assert.ok(chunks.length > 0, 'app.js imports its chunks');
  for (const chunk of chunks) assert.equal((await fetch(`${base}/${chunk}`)).status, 200, chunk);
  const plain = await fetch(`${base}/app.js`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.headers.get('content-encoding'), null);
  assert.equal(await plain.text(), code);
});
