/**
 * Starts the real processes for end-to-end tests: the stub upstream, admin (on a fresh database of
 * the real PostgreSQL) and the proxy, each its own Node process on a free port, and stops them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { generateApiKey } from '../../shared/apikey.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A started child process and the port it reported. */
export interface Started {
  child: ChildProcess;
  port: number;
  /** Output of the process (stdout + stderr), for diagnosing failures. */
  output: () => string;
}

/**
 * Forks `entry` (relative to the repo root; a .ts file runs with tsx, a .mjs bundle from `dist/`
 * with plain node) plus `nodeArgs` (e.g. `--cpu-prof`), and waits for its `<type>` IPC message
 * carrying its port.
 * @throws when the process exits first or does not report within `timeoutMs`.
 */
export function startProcess(entry: string, env: NodeJS.ProcessEnv, readyType: string, args: string[] = [], timeoutMs = 30_000, nodeArgs: string[] = []): Promise<Started> {
  const child = fork(path.join(ROOT, entry), args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn', ...env },
    execArgv: entry.endsWith('.mjs') ? nodeArgs : ['--import', 'tsx', ...nodeArgs],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not become ready in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type === readyType) {
        clearTimeout(timer);
        resolve({ child, port: m.port!, output: () => out });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with code ${code} before it was ready:\n${out}`));
    });
  });
}

/** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
export async function stopProcess(p: Started | null | undefined, graceMs = 15_000): Promise<number | null> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return p?.child.exitCode ?? null;
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
    p.child.once('exit', (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    p.child.kill('SIGTERM');
  });
}

/** Writes a gateway config to a temp file and returns its path. */
export function writeConfig(config: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-gw-'));
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, YAML.stringify(config));
  return file;
}

/** A running stack. */
export interface Stack {
  db: TestDatabase;
  stub: Started;
  admin: Started;
  proxy: Started;
  /** An API key of the stack's organization (also the proxy's control-plane key). */
  apiKey: string;
  gatewayUrl: string;
  adminUrl: string;
  stubUrl: string;
  configFile: string;
  stop(): Promise<void>;
}

/** Options of {@link startStack}: extra config merged over the default and extra env. */
export interface StackOptions {
  /** Builds the gateway config from the stub's URL (default: observability, openai → stub, router `default`). */
  config?: (stubUrl: string) => Record<string, unknown>;
  proxyEnv?: NodeJS.ProcessEnv;
  adminEnv?: NodeJS.ProcessEnv;
}

/** The default test config: observability on, every OpenAI-compatible test provider pointed at the stub. */
export function defaultConfig(stubUrl: string): Record<string, unknown> {
  return {
    svc: { features: 'observability' },
    providers: {
      openai: { 'base-url': `${stubUrl}/v1` },
      groq: { 'base-url': `${stubUrl}/openai/v1` },
      deepseek: { 'base-url': stubUrl },
      anthropic: { 'base-url': `${stubUrl}/v1` },
    },
    routers: {
      default: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } } },
    },
    'log-queue': { 'flush-interval': '20ms' },
  };
}

/**
 * The provider keys a test stack's proxy gets: one per provider the tests point at the stub (the
 * proxy refuses to route to a provider without its key). Azure and Bedrock come from the tests that use them.
 */
export const PROVIDER_KEYS: Readonly<Record<string, string>> = {
  OPENAI_API_KEY: 'sk-provider-openai-secret',
  GROQ_API_KEY: 'gsk-provider-groq-secret',
  ANTHROPIC_API_KEY: 'sk-ant-provider-secret',
  DEEPSEEK_API_KEY: 'sk-provider-deepseek-secret',
  MISTRAL_API_KEY: 'provider-mistral-secret',
  XAI_API_KEY: 'xai-provider-secret',
  TOGETHER_API_KEY: 'provider-together-secret',
  FIREWORKS_API_KEY: 'fw-provider-secret',
  OPENROUTER_API_KEY: 'sk-or-provider-secret',
  GEMINI_API_KEY: 'provider-gemini-secret',
};

/** The AWS credentials a test proxy signs Bedrock requests with (AWS's documented example key; the stubs do not check the signature). */
export const AWS_TEST_ENV: Readonly<Record<string, string>> = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', AWS_REGION: 'us-east-1' };

/** Starts stub, admin and proxy. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const db = await createTestDatabase();
  const apiKey = generateApiKey();
  let stub: Started | undefined;
  let admin: Started | undefined;
  let proxy: (Started & { url: string }) | undefined;
  try {
    stub = await startProcess('test/support/stub-upstream.ts', { STUB_PORT: '0' }, 'stub.ready');
    const stubUrl = `http://127.0.0.1:${stub.port}`;
    const configFile = writeConfig((options.config ?? defaultConfig)(stubUrl));
    admin = await startProcess('admin/main.ts', { DATABASE_URL: db.url, ADMIN_PORT: '0', SVC_BOOTSTRAP_API_KEY: apiKey, ...options.adminEnv }, 'admin.ready', ['--config', configFile]);
    const adminUrl = `http://127.0.0.1:${admin.port}`;
    proxy = await startLinkedProxy({
      adminPort: admin.port,
      apiKey,
      configFile,
      env: { ...PROVIDER_KEYS, ...options.proxyEnv },
    });
    const gatewayUrl = proxy.url;
    return {
      db,
      stub,
      admin,
      proxy,
      apiKey,
      gatewayUrl,
      adminUrl,
      stubUrl,
      configFile,
      async stop() {
        await stopProcess(proxy);
        await stopProcess(admin);
        await stopProcess(stub);
        await db.drop();
      },
    };
  } catch (err) {
    await stopProcess(proxy);
    await stopProcess(admin);
    await stopProcess(stub);
    await db.drop();
    throw err;
  }
}

/**
 * Starts a proxy process linked to the admin on `adminPort` (control-plane key `apiKey`) with the
 * config file `configFile` and extra environment `env` (provider keys), and unless `waitReady` is
 * false waits until it holds its first key snapshot.
 * @returns the process and its base URL.
 */
export async function startLinkedProxy(o: { adminPort: number; apiKey: string; configFile: string; env?: NodeJS.ProcessEnv; waitReady?: boolean }): Promise<Started & { url: string }> {
  const p = await startProcess(
    'proxy/main.ts',
    {
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      SVC_CONTROL_PLANE_API_KEY: o.apiKey,
      SVC_CONTROL_PLANE_URL: `ws://127.0.0.1:${o.adminPort}/v1/control-plane`,
      ...o.env,
    },
    'proxy.ready',
    ['--config', o.configFile],
  );
  const url = `http://127.0.0.1:${p.port}`;
  if (o.waitReady !== false) {
    try {
      await waitFor(async () => ((await (await fetch(`${url}/health`)).json()) as { controlPlane: { ready: boolean } | null }).controlPlane?.ready === true, 15_000);
    } catch (err) {
      await stopProcess(p);
      throw err;
    }
  }
  return { ...p, url };
}

/**
 * Polls `check` until it returns true.
 * @throws after `timeoutMs` with the last error.
 */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

/** GETs a logged request from admin's REST API, waiting until it has been stored. */
export async function fetchRecord(stack: Pick<Stack, 'adminUrl' | 'apiKey'>, requestId: string, timeoutMs = 10_000): Promise<Record<string, any>> {
  let record: Record<string, any> | null = null;
  await waitFor(async () => {
    const res = await fetch(`${stack.adminUrl}/v1/request/${requestId}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    if (res.status !== 200) return false;
    record = ((await res.json()) as { data: Record<string, any> }).data;
    return true;
  }, timeoutMs);
  return record!;
}

/** A random suffix for unique names in tests. */
export const uniq = (): string => randomBytes(4).toString('hex');

/** A scripted stub of test/support in its own process, and a stack (observability on) whose providers point at it. */
export interface StubbedStack {
  stubUrl: string;
  stack: Stack;
  /** Ends the stack, then the stub. */
  stop(): Promise<void>;
}

/**
 * Starts the stub `entry` (e.g. `test/support/responses-stub.ts`), then a stack whose config is
 * `config(stubUrl, stackStubUrl)` over observability on and a 20 ms log flush (what the real-client
 * tests use); `stackStubUrl` is the stack's own test/support/stub-upstream.ts.
 */
export async function startStubbedStack(
  entry: string,
  config: (stubUrl: string, stackStubUrl: string) => Record<string, unknown>,
  proxyEnv?: NodeJS.ProcessEnv,
): Promise<StubbedStack> {
  const stub = await startProcess(entry, { STUB_PORT: '0' }, 'stub.ready');
  const stubUrl = `http://127.0.0.1:${stub.port}`;
  try {
    const stack = await startStack({ config: (stackStubUrl) => ({ svc: { features: 'observability' }, 'log-queue': { 'flush-interval': '20ms' }, ...config(stubUrl, stackStubUrl) }), proxyEnv });
    return {
      stubUrl,
      stack,
      async stop() {
        await stack.stop();
        await stopProcess(stub);
      },
    };
  } catch (err) {
    await stopProcess(stub);
    throw err;
  }
}

/** The requests a stub process recorded since they were last cleared (`GET <stub>/__requests`; every stub of test/support serves it). */
export async function stubRequests(stubUrl: string): Promise<Array<Record<string, any>>> {
  return (await (await fetch(`${stubUrl}/__requests`)).json()) as Array<Record<string, any>>;
}

/** Forgets the requests a stub process recorded (`DELETE <stub>/__requests`). */
export async function clearStubRequests(stubUrl: string): Promise<void> {
  await (await fetch(`${stubUrl}/__requests`, { method: 'DELETE' })).arrayBuffer();
}

/** What {@link readChatStream} read: the concatenated content deltas, the chunk count, the final usage. */
export interface ChatStreamRead {
  text: string;
  chunks: number;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/**
 * Reads an `openai` client chat-completion stream to its end.
 * @param stream the client's stream (any async iterable of chat-completion chunks).
 */
export async function readChatStream(
  stream: AsyncIterable<{ choices: Array<{ delta?: { content?: string | null } }>; usage?: ChatStreamRead['usage'] | null }>,
): Promise<ChatStreamRead> {
  const out: ChatStreamRead = { text: '', chunks: 0, usage: null };
  for await (const chunk of stream) {
    out.chunks++;
    out.text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) out.usage = chunk.usage;
  }
  return out;
}
