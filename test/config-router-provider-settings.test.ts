/**
 * A router member that can never answer stops the start: Azure without `providers.azure.base-url` (it has
 * no default host), Bedrock without a region (`providers.bedrock.region`, else `AWS_REGION`, else
 * `AWS_DEFAULT_REGION`, as the transport reads them). Before, such a router started and answered every
 * request routed to that member with a 500. Checked on `buildConfig` (the message names the key path)
 * and on the proxy process (exit 2, the key named, no stack trace, never ready). A member without its
 * API key stays accepted: a client may bring its own credential (`Svc-Auth`), and the proxy answers
 * 503 `provider_key_missing` otherwise.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildConfig, ConfigError } from '../shared/config.ts';
import { writeConfig } from './support/stack.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const AZURE_NEEDS = "provider azure needs providers.azure.base-url (the resource's endpoint, e.g. https://<resource>.openai.azure.com)";
const BEDROCK_NEEDS = 'provider bedrock needs a region: providers.bedrock.region, or AWS_REGION or AWS_DEFAULT_REGION in the environment';

const router = (providers: unknown[], embeddings?: unknown[]) => ({
  routers: {
    main: {
      'load-balance': {
        chat: { strategy: 'latency', providers },
        ...(embeddings ? { embeddings: { strategy: 'latency', providers: embeddings } } : {}),
      },
    },
  },
});

function refused(doc: unknown, env: NodeJS.ProcessEnv, message: string): void {
  assert.throws(() => buildConfig(doc, env), (e: unknown) => e instanceof ConfigError && e.message === message);
}

test('azure without a base URL in a router: refused, naming the member and the key to set', () => {
  refused(router(['openai', 'azure']), {}, `gateway.yaml: routers.main.load-balance.chat.providers.1: ${AZURE_NEEDS}`);
  refused(
    { ...router(['openai'], ['openai', 'azure']), providers: { bedrock: { region: 'eu-west-1' } } },
    {},
    `gateway.yaml: routers.main.load-balance.embeddings.providers.1: ${AZURE_NEEDS}`,
  );
  // Weighted entries are named by their index the same way.
  refused(
    { routers: { w: { 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'azure', weight: 2 }] } } } } },
    {},
    `gateway.yaml: routers.w.load-balance.chat.providers.0: ${AZURE_NEEDS}`,
  );
});

test('bedrock without a region in a router: refused; the region from the file or the environment is enough', () => {
  refused(router(['bedrock', 'openai']), {}, `gateway.yaml: routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`);
  refused(router(['bedrock']), { AWS_REGION: '', AWS_DEFAULT_REGION: '' }, `gateway.yaml: routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`);
  refused({ ...router(['bedrock']), providers: { bedrock: { region: '' } } }, {}, `gateway.yaml: routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`);
  // A base URL replaces the host, not the region: SigV4 signs with it.
  refused({ ...router(['bedrock']), providers: { bedrock: { 'base-url': 'http://127.0.0.1:9' } } }, {}, `gateway.yaml: routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`);
  for (const [doc, env] of [
    [{ ...router(['bedrock']), providers: { bedrock: { region: 'eu-west-1' } } }, {}],
    [router(['bedrock']), { AWS_REGION: 'us-east-1' }],
    [router(['bedrock']), { AWS_DEFAULT_REGION: 'us-west-2' }],
  ] as const) {
    assert.deepEqual(buildConfig(doc, env).routers.main!.chat.providers, [{ provider: 'bedrock', weight: 1 }], JSON.stringify([doc, env]));
  }
});

test('azure with a base URL, and members without their API key, are accepted', () => {
  const c = buildConfig({ ...router(['azure', 'openai', 'anthropic', 'ollama']), providers: { azure: { 'base-url': 'https://r.openai.azure.com' } } }, {});
  assert.deepEqual(c.routers.main!.chat.providers.map((p) => p.provider), ['azure', 'openai', 'anthropic', 'ollama']);
});

test('a provider outside every router needs nothing at start (a request to it is answered then)', () => {
  const c = buildConfig({ providers: { azure: { deployments: { 'gpt-4o': 'dep' } }, bedrock: {} }, ...router(['openai']) }, {});
  assert.equal(c.providers.azure.baseUrl, '');
  assert.equal(c.providers.bedrock.region, null);
});

/** Runs the proxy with `config` until it exits: its code, output, and whether it ever reported ready. */
function runToExit(config: unknown, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; ready: boolean }> {
  const child = fork(path.join(ROOT, 'proxy/main.ts'), ['--config', writeConfig(config)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', GATEWAY_PORT: '0', AWS_REGION: '', AWS_DEFAULT_REGION: '', ...env },
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

for (const [name, providers, message] of [
  ['azure without providers.azure.base-url', ['openai', 'azure'], `routers.main.load-balance.chat.providers.1: ${AZURE_NEEDS}`],
  ['bedrock without a region', ['bedrock'], `routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`],
] as const) {
  test(`the proxy refuses a router member ${name}: exit 2, the key named, no stack trace, never ready`, { timeout: 40_000 }, async () => {
    const { code, out, ready } = await runToExit({ svc: { features: 'none' }, ...router([...providers]) }, {});
    assert.equal(code, 2, out);
    assert.ok(out.includes(`proxy: invalid configuration: `) && out.includes(message), out);
    assert.doesNotMatch(out, /\n\s+at /, 'no stack trace');
    assert.equal(ready, false, 'it never reported ready');
  });
}

test('the proxy starts with a bedrock router member whose region comes from AWS_REGION', { timeout: 40_000 }, async () => {
  const child = fork(path.join(ROOT, 'proxy/main.ts'), ['--config', writeConfig({ svc: { features: 'none' }, ...router(['bedrock']) })], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', GATEWAY_PORT: '0', AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: '' },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const outcome = await new Promise<string>((resolve) => {
    child.on('message', (m: { type?: string }) => m?.type === 'proxy.ready' && resolve('ready'));
    child.once('exit', (code) => resolve(`exited ${code}`));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.exitCode === null) child.kill('SIGTERM');
  await exited;
  assert.equal(outcome, 'ready', out);
});

test("admin's load (checkRouterMembers: false) accepts a router member the proxy would refuse: admin routes nothing and may run without the proxy's AWS_REGION", () => {
  const config = buildConfig(router(['bedrock', 'azure']), {}, 'gateway.yaml', { checkRouterMembers: false });
  assert.deepEqual(
    config.routers.main!.chat.providers.map((p) => p.provider),
    ['bedrock', 'azure'],
  );
  refused(router(['bedrock', 'azure']), {}, `gateway.yaml: routers.main.load-balance.chat.providers.0: ${BEDROCK_NEEDS}`);
});
