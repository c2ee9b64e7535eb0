/**
 * A configuration mistake stops the process at start: exit code 2 (what `npm start` takes for an
 * invalid configuration, scripts/start.ts, and does not restart), one line naming the key, no stack
 * trace, and never a listening gateway first. Also `metrics.enabled: false`, which both processes honour
 * (`GET /metrics` answers 404).
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from './support/db.ts';
import { startProcess, stopProcess, writeConfig } from './support/stack.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Runs `entry` with `config` until it exits; its code, output, and whether it ever reported ready. */
function runToExit(entry: string, config: unknown, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; ready: boolean }> {
  const child = fork(path.join(ROOT, entry), ['--config', writeConfig(config)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', GATEWAY_PORT: '0', ADMIN_PORT: '0', ...env },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  let ready = false;
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  child.on('message', () => (ready = true));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ready });
    }),
  );
}

const observability = { svc: { features: 'observability' } };
const withKey = { SVC_CONTROL_PLANE_API_KEY: 'svc-test-key' };

for (const [name, config, message] of [
  ['control-plane.url "garbage"', { ...observability, 'control-plane': { url: 'garbage' } }, /proxy: invalid configuration: .*control-plane\.url: expected an absolute ws: or wss:/],
  ['control-plane.ca-file missing', { ...observability, 'control-plane': { url: 'wss://127.0.0.1:1/v1/control-plane', 'ca-file': '/nonexistent/ca.pem' } }, /proxy: invalid configuration: control-plane\.ca-file: cannot read \/nonexistent\/ca\.pem/],
  ['control-plane.ca-file not a certificate', { ...observability, 'control-plane': { url: 'wss://127.0.0.1:1/v1/control-plane', 'ca-file': fileURLToPath(import.meta.url) } }, /proxy: invalid configuration: control-plane\.ca-file: .* holds no PEM certificate/],
  ['providers.openai.base-url without a scheme', { svc: { features: 'none' }, providers: { openai: { 'base-url': '127.0.0.1:18393/v1' } } }, /proxy: invalid configuration: .*providers\.openai\.base-url/],
] as const) {
  test(`the proxy refuses ${name}: exit 2, the key named, no stack trace, never ready`, { timeout: 40_000 }, async () => {
    const { code, out, ready } = await runToExit('proxy/main.ts', config, withKey);
    assert.equal(code, 2, out);
    assert.match(out, message);
    assert.doesNotMatch(out, /\n\s+at /, 'no stack trace');
    assert.equal(ready, false, 'it never reported ready (npm start would have restarted it)');
  });
}

test('metrics.enabled: false: the proxy answers GET /metrics 404; by default 200', { timeout: 60_000 }, async () => {
  for (const [enabled, status] of [[false, 404], [true, 200]] as const) {
    const proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0' }, 'proxy.ready', ['--config', writeConfig({ svc: { features: 'none' }, metrics: { enabled } })]);
    try {
      const res = await fetch(`http://127.0.0.1:${proxy.port}/metrics`);
      await res.arrayBuffer();
      assert.equal(res.status, status, `metrics.enabled: ${enabled}`);
    } finally {
      await stopProcess(proxy);
    }
  }
});

test('metrics.enabled: false: admin answers GET /metrics 404', { timeout: 60_000 }, async () => {
  const db = await createTestDatabase();
  const admin = await startProcess('admin/main.ts', { DATABASE_URL: db.url, ADMIN_PORT: '0' }, 'admin.ready', ['--config', writeConfig({ metrics: { enabled: false } })]);
  try {
    const res = await fetch(`http://127.0.0.1:${admin.port}/metrics`);
    await res.arrayBuffer();
    assert.equal(res.status, 404);
  } finally {
    await stopProcess(admin);
    await db.drop();
  }
});
