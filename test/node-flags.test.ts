/**
 * The proxy's Node.js flags (proxy/node-flags.ts) reach every way the proxy is started outside the
 * tests: `npm start` (scripts/start.ts through the supervisor's ChildSpec.nodeFlags) and `npm run
 * proxy` (package.json, which cannot import them). And V8 takes them: a process started with them
 * grows its heap further before a full collection.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { PROXY_NODE_FLAGS } from '../proxy/node-flags.ts';

const ROOT = new URL('../', import.meta.url);

test('npm run proxy passes every flag of PROXY_NODE_FLAGS to node before the bundle', () => {
  const scripts = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.ok(PROXY_NODE_FLAGS.length > 0);
  assert.ok(scripts.proxy!.endsWith(`exec node ${PROXY_NODE_FLAGS.join(' ')} dist/proxy.mjs`), scripts.proxy);
});

test('npm start gives the proxy child PROXY_NODE_FLAGS', () => {
  const start = readFileSync(new URL('scripts/start.ts', ROOT), 'utf8');
  assert.match(start, /name: 'proxy',[\s\S]*?nodeFlags: PROXY_NODE_FLAGS,[\s\S]*?name: 'admin'/);
});

/** Retains `count` small objects, a step at a time as a server would, and prints how many full (mark-compact) collections ran. */
const RETAIN = `
const { PerformanceObserver, constants } = require('node:perf_hooks');
let majors = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
const keep = [];
let i = 0;
(function step() {
  for (let k = 0; k < 20000; k++) keep.push({ a: i++, b: 'x' + i });
  if (keep.length < 700000) setImmediate(step); else setTimeout(() => process.stdout.write(String(majors)), 50);
})();`;

test('with the flags, a heap grown to ~45 MB of live objects needs no full collection; without them it does', () => {
  const majors = (flags: readonly string[]) => Number(execFileSync(process.execPath, [...flags, '-e', RETAIN], { encoding: 'utf8' }));
  assert.equal(majors(PROXY_NODE_FLAGS), 0);
  assert.ok(majors([]) >= 1, 'without the flags V8 collects the old generation at this size (else the flag buys nothing)');
});
