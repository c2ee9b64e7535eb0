/**
 * The control plane under failure: key changes pushed to running gateways (also through a second
 * admin process on the same database), a gateway that outlives admin and reconnects by itself, a
 * gateway started while admin is down, /health, malformed messages, and `wss://` with a private CA.
 *
 * Real processes (stub upstream, admin on a fresh PostgreSQL database, proxies) as in
 * e2e-main.test.ts; the client-level cases run a local WebSocket server in this process.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { createApiKey, findKey } from '../admin/resources/api-keys/store.ts';
import { generateApiKey, hashApiKey } from '../shared/apikey.ts';
import { ControlPlaneClient, type LinkHealth } from '../proxy/controlplane.ts';
import { decodeBatch } from '../shared/record-batch.ts';
import { defaultConfig, fetchRecord, startLinkedProxy, startProcess, startStack, stopProcess, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] };
const PROVIDER_ENV = {
  OPENAI_API_KEY: 'sk-provider-openai-secret',
  GROQ_API_KEY: 'gsk-provider-groq-secret',
  ANTHROPIC_API_KEY: 'sk-ant-provider-secret',
};

/** A logger that records warnings and errors (the client under test logs what it drops). */
function captureLogger(): { logger: Logger; lines: Array<{ level: string; msg: string; obj: unknown }> } {
  const lines: Array<{ level: string; msg: string; obj: unknown }> = [];
  const at = (level: string) => (obj: unknown, msg?: string) => {
    lines.push({ level, msg: typeof obj === 'string' ? obj : (msg ?? ''), obj });
  };
  const logger = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') } as Record<string, unknown>;
  logger.child = () => logger;
  return { logger: logger as unknown as Logger, lines };
}

const clientOptions = (url: string, logger: Logger, extra: Partial<Parameters<typeof ControlPlaneClient.start>[0]> = {}) => ({
  url,
  apiKey: 'sk-svc-test-link',
  queue: { maxRecords: 100, maxBytes: 1 << 20, batchSize: 10 },
  flushIntervalMs: 50,
  logger,
  ...extra,
});

/** A free TCP port on 127.0.0.1 (nothing listens on it when this resolves). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function health(gatewayUrl: string): Promise<{ status: string; controlPlane: LinkHealth }> {
  return (await (await fetch(`${gatewayUrl}/health`)).json()) as never;
}

/** POSTs a chat completion with `key`; returns the status (body consumed). */
async function chatStatus(gatewayUrl: string, key: string): Promise<number> {
  const res = await fetch(`${gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(CHAT),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Polls until `key` gets `status` from the gateway. */
const waitForStatus = (gatewayUrl: string, key: string, status: number, timeoutMs: number) =>
  waitFor(async () => (await chatStatus(gatewayUrl, key)) === status, timeoutMs, 10);

describe('control-plane client against a local WebSocket server', () => {
  const servers: WebSocketServer[] = [];
  const clients: ControlPlaneClient[] = [];
  after(async () => {
    await Promise.all(clients.map((c) => c.close(100)));
    for (const s of servers) {
      for (const ws of s.clients) ws.terminate();
      await new Promise((r) => s.close(r));
    }
  });

  async function wsServer(onConnection: (ws: WebSocket, headers: IncomingHttpHeaders) => void): Promise<{ server: WebSocketServer; url: string }> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(server);
    await new Promise<void>((resolve) => server.once('listening', resolve));
    server.on('connection', (ws, req) => onConnection(ws, req.headers));
    return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/control-plane` };
  }

  test('malformed messages are logged and dropped; the link stays up and a valid snapshot then makes it ready', async () => {
    const hash = hashApiKey(generateApiKey());
    let connections = 0;
    const { url } = await wsServer((ws) => {
      connections++;
      ws.send('not json at all');
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [{ hash: 42 }] }));
      ws.send(JSON.stringify({ type: 'keys.nuke' }));
      ws.send(JSON.stringify({ type: 'keys.revoke', hashes: 'all' }));
      ws.send(Buffer.from([1, 2, 3]), { binary: true });
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [{ hash, keyId: 'k1', organizationId: 'o1' }] }));
    });
    const { logger, lines } = captureLogger();
    const client = ControlPlaneClient.start(clientOptions(url, logger));
    clients.push(client);
    assert.equal(client.ready, false, 'not ready before the first snapshot');
    await waitFor(() => client.ready, 5_000);
    assert.deepEqual(client.lookup(hash), { hash, keyId: 'k1', organizationId: 'o1' });
    assert.equal(client.lookup(hashApiKey('sk-svc-unknown')), undefined);
    const dropped = lines.filter((l) => l.level === 'warn' && /dropped a (malformed|binary) control-plane message/.test(l.msg));
    assert.equal(dropped.length, 5, JSON.stringify(lines));
    assert.equal(connections, 1, 'garbage never closes the link');
    const h = client.health();
    assert.equal(h.connected, true);
    assert.equal(h.keysHeld, 1);
  });

  test('link lost: cached keys stay, the client reconnects by itself and resyncs', async () => {
    const hashA = hashApiKey(generateApiKey());
    const hashB = hashApiKey(generateApiKey());
    let connections = 0;
    const { url } = await wsServer((ws, headers) => {
      connections++;
      assert.equal(headers.authorization, 'Bearer sk-svc-test-link');
      const keys = connections === 1 ? [hashA] : [hashA, hashB];
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: keys.map((hash) => ({ hash, keyId: hash.slice(0, 8), organizationId: 'o1' })) }));
      if (connections === 1) setTimeout(() => ws.terminate(), 100);
    });
    const { logger } = captureLogger();
    const client = ControlPlaneClient.start(clientOptions(url, logger, { backoffStartMs: 50, backoffCapMs: 200 }));
    clients.push(client);
    await waitFor(() => client.ready, 5_000);
    assert.ok(client.lookup(hashA));
    assert.equal(client.lookup(hashB), undefined);
    await waitFor(() => connections === 2 && client.lookup(hashB) !== undefined, 5_000);
    assert.ok(client.lookup(hashA), 'still held');
    assert.ok(client.health().reconnectAttempts >= 1);
  });

  test('a silent link (no ping, no message) is replaced after the liveness timeout', async () => {
    let connections = 0;
    const { url } = await wsServer((ws) => {
      connections++;
      if (connections === 1) ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [] }));
      // then silence: this server never pings
    });
    const { logger, lines } = captureLogger();
    const client = ControlPlaneClient.start(clientOptions(url, logger, { livenessTimeoutMs: 300, backoffStartMs: 50 }));
    clients.push(client);
    await waitFor(() => connections >= 2, 5_000);
    assert.ok(lines.some((l) => /link silent/.test(l.msg)));
    assert.equal(client.ready, true, 'stays ready across the reconnect');
  });
});

describe('wss:// with a private CA (control-plane.ca-file)', () => {
  let dir: string;
  let https_: https.Server;
  let wss: WebSocketServer;
  let stub: Started | undefined;
  let proxy: Started | undefined;
  const linkKey = generateApiKey();
  const callerKey = generateApiKey();
  const upgrades: IncomingHttpHeaders[] = [];
  const received: string[] = [];
  let url: string;
  const clients: ControlPlaneClient[] = [];

  before(async () => {
    // A throwaway CA and a server certificate for 127.0.0.1 signed by it (nothing committed).
    dir = mkdtempSync(path.join(tmpdir(), 'svc-tls-'));
    const f = (name: string) => path.join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=svc test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
    writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    openssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '1', '-extfile', f('ext.cnf'));

    // A stand-in control plane over TLS: checks the link key, sends a snapshot, acknowledges records.
    https_ = https.createServer({ key: readFileSync(f('server.key')), cert: readFileSync(f('server.pem')) });
    wss = new WebSocketServer({ server: https_, path: '/v1/control-plane' });
    wss.on('connection', (ws, req) => {
      upgrades.push(req.headers);
      if (req.headers.authorization !== `Bearer ${linkKey}`) return ws.close(1008, 'bad key');
      ws.send(JSON.stringify({ type: 'keys.snapshot', keys: [{ hash: hashApiKey(callerKey), keyId: randomUUID(), organizationId: randomUUID() }] }));
      ws.on('message', (data, isBinary) => {
        // Everything the link carried, as text: a binary message is a record batch, whose bytes are
        // kept as latin1 so that any byte of a key would show.
        const text = (data as Buffer).toString(isBinary ? 'latin1' : 'utf8');
        received.push(text);
        if (!isBinary) return;
        const batch = decodeBatch(data as Buffer);
        ws.send(JSON.stringify({ type: 'records.ack', batchId: batch.batchId, stored: batch.records.length }));
      });
    });
    await new Promise<void>((resolve) => https_.listen(0, '127.0.0.1', resolve));
    url = `wss://127.0.0.1:${(https_.address() as AddressInfo).port}/v1/control-plane`;
  });
  after(async () => {
    await stopProcess(proxy);
    await stopProcess(stub);
    await Promise.all(clients.map((c) => c.close(100)));
    for (const ws of wss?.clients ?? []) ws.terminate();
    await new Promise((r) => wss?.close(r));
    https_?.closeAllConnections();
    await new Promise((r) => https_?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the client verifies the certificate: refused without the CA, connected with it', async () => {
    const without = captureLogger();
    const bad = ControlPlaneClient.start({ ...clientOptions(url, without.logger, { backoffStartMs: 50, backoffCapMs: 100 }), apiKey: linkKey });
    clients.push(bad);
    await waitFor(() => without.lines.some((l) => l.msg === 'control plane link error'), 5_000);
    assert.equal(bad.ready, false);
    assert.equal(bad.health().connected, false);
    assert.match(JSON.stringify(without.lines), /certificate/i);

    const withCa = captureLogger();
    const good = ControlPlaneClient.start({ ...clientOptions(url, withCa.logger), apiKey: linkKey, caFile: path.join(dir, 'ca.pem') });
    clients.push(good);
    await waitFor(() => good.ready, 5_000);
    assert.ok(good.lookup(hashApiKey(callerKey)));
  });

  test('an unreadable ca-file is reported clearly', () => {
    assert.throws(() => new ControlPlaneClient({ ...clientOptions(url, captureLogger().logger), caFile: path.join(dir, 'missing.pem') }), /control-plane\.ca-file: cannot read/);
  });

  test('a proxy process with control-plane.ca-file serves over the wss:// link; provider keys never travel on it', async () => {
    stub = await startProcess('test/support/stub-upstream.ts', { STUB_PORT: '0' }, 'stub.ready');
    const stubUrl = `http://127.0.0.1:${stub.port}`;
    const configFile = writeConfig({ ...defaultConfig(stubUrl), 'control-plane': { url, 'ca-file': path.join(dir, 'ca.pem') } });
    proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', SVC_CONTROL_PLANE_API_KEY: linkKey, ...PROVIDER_ENV }, 'proxy.ready', ['--config', configFile]);
    const gatewayUrl = `http://127.0.0.1:${proxy.port}`;
    await waitFor(async () => (await health(gatewayUrl)).controlPlane.ready, 10_000);
    const client = new OpenAI({ baseURL: `${gatewayUrl}/ai`, apiKey: callerKey, maxRetries: 0 });
    const { response } = await client.chat.completions.create(CHAT).withResponse();
    const id = response.headers.get('svc-id')!;
    await waitFor(() => received.some((m) => m.includes(id)), 10_000);
    const everything = JSON.stringify({ upgrades, received });
    for (const secret of Object.values(PROVIDER_ENV)) assert.ok(!everything.includes(secret), `${secret} reached the control plane`);
    assert.ok(!everything.includes(callerKey), 'the caller key itself never travels either');
    assert.ok(upgrades.every((h) => h.authorization === `Bearer ${linkKey}`));
  });
  test('a provider over https: its certificate is verified (NODE_EXTRA_CA_CERTS), answers and streams pass through; an unknown CA is a 502', async () => {
    const fixtures = new URL('./fixtures/providers/openai/', import.meta.url);
    const chatBody = readFileSync(new URL('chat-completion.json', fixtures));
    const streamBody = readFileSync(new URL('chat-completion-stream.sse', fixtures));
    const seen: Array<string | undefined> = [];
    const provider = https.createServer({ key: readFileSync(path.join(dir, 'server.key')), cert: readFileSync(path.join(dir, 'server.pem')) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(req.headers.authorization);
        const stream = (JSON.parse(Buffer.concat(chunks).toString()) as { stream?: boolean }).stream === true;
        res.writeHead(200, { 'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json' });
        res.end(stream ? streamBody : chatBody);
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const proxies: Started[] = [];
    try {
      const base = `https://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
      const configFile = writeConfig({ svc: { features: 'none' }, providers: { openai: { 'base-url': base } } });
      const start = (env: Record<string, string>) => startProcess('proxy/main.ts', { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', ...PROVIDER_ENV, ...env }, 'proxy.ready', ['--config', configFile]);
      const trusting = await start({ NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem') });
      proxies.push(trusting);
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${trusting.port}/ai`, apiKey: 'unused', maxRetries: 0 });
      const completion = await client.chat.completions.create(CHAT);
      assert.equal(completion.choices[0]!.message.content, (JSON.parse(chatBody.toString()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content);
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ ...CHAT, stream: true })) streamed += chunk.choices[0]?.delta?.content ?? '';
      assert.ok(streamed.length > 0, 'the stream carried content');
      assert.deepEqual(seen, [`Bearer ${PROVIDER_ENV.OPENAI_API_KEY}`, `Bearer ${PROVIDER_ENV.OPENAI_API_KEY}`]);

      // Without the CA the TLS handshake fails: a 502 naming the cause, and nothing reached the provider.
      const distrusting = await start({});
      proxies.push(distrusting);
      const res = await fetch(`http://127.0.0.1:${distrusting.port}/ai/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });
      assert.equal(res.status, 502);
      const err = ((await res.json()) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'upstream_unreachable');
      assert.match(err.message, /CERT|certificate|SIGNATURE/i);
      assert.equal(seen.length, 2);
    } finally {
      for (const p of proxies) await stopProcess(p);
      provider.closeAllConnections();
      await new Promise((r) => provider.close(r));
    }
  });
});

describe('control plane and running gateways (real admin processes)', () => {
  let stack: Stack;
  let organizationId: string;
  /** Extra processes started by these tests, stopped in reverse order (proxies before admins). */
  const extra: Started[] = [];
  const adminEnv = () => ({ DATABASE_URL: stack.db.url, SVC_BOOTSTRAP_API_KEY: stack.apiKey });

  before(async () => {
    stack = await startStack();
    organizationId = (await findKey(stack.db.sql, hashApiKey(stack.apiKey)))!.organizationId;
  });
  after(async () => {
    for (const p of extra.reverse()) await stopProcess(p);
    await stack?.stop();
  });

  const startAdmin = async (port: number | string = 0) => {
    const p = await startProcess('admin/main.ts', { ...adminEnv(), ADMIN_PORT: String(port) }, 'admin.ready', ['--config', stack.configFile]);
    extra.push(p);
    return p;
  };
  const startProxy = async (adminPort: number, waitReady = true) => {
    const p = await startLinkedProxy({ adminPort, apiKey: stack.apiKey, configFile: stack.configFile, env: PROVIDER_ENV, waitReady });
    extra.push(p);
    return { process: p, url: p.url };
  };
  const rest = (adminUrl: string, method: string, p: string, body?: unknown) =>
    fetch(`${adminUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  test('/health reports the control-plane link', async () => {
    const h = await health(stack.gatewayUrl);
    assert.equal(h.status, 'ok');
    const cp = h.controlPlane;
    assert.equal(cp.connected, true);
    assert.equal(cp.ready, true);
    assert.ok(!Number.isNaN(Date.parse(cp.since)) && Date.parse(cp.since) <= Date.now(), `since ${cp.since}`);
    assert.equal(typeof cp.reconnectAttempts, 'number');
    assert.ok(cp.keysHeld >= 1, `keysHeld ${cp.keysHeld}`);
  });

  test('revocation through REST reaches the running gateway within 1 s', async () => {
    const created = (await (await rest(stack.adminUrl, 'POST', '/v1/api-keys', { name: 'revoke-me' })).json()) as { data: { id: string; key: string } };
    await waitForStatus(stack.gatewayUrl, created.data.key, 200, 1_000);
    assert.equal((await rest(stack.adminUrl, 'DELETE', `/v1/api-keys/${created.data.id}`)).status, 200);
    await waitForStatus(stack.gatewayUrl, created.data.key, 401, 1_000);
  });

  test('two admin processes on one database: changes made through admin 2 reach a proxy connected to admin 1 within 1 s', async () => {
    const admin2 = await startAdmin();
    const admin2Url = `http://127.0.0.1:${admin2.port}`;
    const proxyB = await startProxy(admin2.port); // connected to admin 2, for symmetry

    const res = await rest(admin2Url, 'POST', '/v1/api-keys', { name: 'via-admin-2' });
    assert.equal(res.status, 200);
    const { data } = (await res.json()) as { data: { id: string; key: string } };
    await waitForStatus(stack.gatewayUrl, data.key, 200, 1_000); // proxy A, on admin 1
    await waitForStatus(proxyB.url, data.key, 200, 1_000);

    assert.equal((await rest(admin2Url, 'DELETE', `/v1/api-keys/${data.id}`)).status, 200);
    await waitForStatus(stack.gatewayUrl, data.key, 401, 1_000);
    await waitForStatus(proxyB.url, data.key, 401, 1_000);
    // and the other way round: revoked through admin 1, refused by proxy B on admin 2
    const other = (await (await rest(stack.adminUrl, 'POST', '/v1/api-keys', { name: 'via-admin-1' })).json()) as { data: { id: string; key: string } };
    await waitForStatus(proxyB.url, other.data.key, 200, 1_000);
    assert.equal((await rest(stack.adminUrl, 'DELETE', `/v1/api-keys/${other.data.id}`)).status, 200);
    await waitForStatus(proxyB.url, other.data.key, 401, 1_000);

    await stopProcess(proxyB.process);
    await stopProcess(admin2);
  });

  test("admin's LISTEN connection lost: it re-subscribes and the proxies resync", async () => {
    const before = await health(stack.gatewayUrl);
    const killed = await stack.db.sql<{ pid: number }[]>`
      select pg_terminate_backend(pid) as pid from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen %'`;
    assert.ok(killed.length >= 1, 'found the LISTEN connection');
    // The proxy is asked to reconnect and receives a fresh snapshot.
    await waitFor(async () => {
      const h = await health(stack.gatewayUrl);
      return h.controlPlane.connected && h.controlPlane.since !== before.controlPlane.since;
    }, 15_000);
    const created = (await (await rest(stack.adminUrl, 'POST', '/v1/api-keys', { name: 'after-relisten' })).json()) as { data: { id: string; key: string } };
    await waitForStatus(stack.gatewayUrl, created.data.key, 200, 1_000);
    await rest(stack.adminUrl, 'DELETE', `/v1/api-keys/${created.data.id}`);
    await waitForStatus(stack.gatewayUrl, created.data.key, 401, 1_000);
  });

  test('a proxy started while admin is down answers 503 "auth data not ready", then serves once admin is up', async () => {
    const port = await freePort();
    const proxyC = await startProxy(port, false);
    const res = await fetch(`${proxyC.url}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(CHAT),
    });
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { error: { message: 'auth data not ready', type: 'server_error', param: null, code: 'auth_not_ready' } });
    // never admits an unknown key either
    assert.equal(await chatStatus(proxyC.url, 'sk-svc-unknown'), 503);
    await assert.rejects(
      new OpenAI({ baseURL: `${proxyC.url}/ai`, apiKey: stack.apiKey, maxRetries: 0 }).chat.completions.create(CHAT),
      (err: any) => err.status === 503 && err.message.includes('auth data not ready'),
    );
    await waitFor(async () => (await health(proxyC.url)).controlPlane.reconnectAttempts >= 2, 10_000);
    const h = await health(proxyC.url);
    assert.equal(h.controlPlane.connected, false);
    assert.equal(h.controlPlane.ready, false);
    assert.equal(h.controlPlane.keysHeld, 0);

    const admin3 = await startAdmin(port);
    await waitForStatus(proxyC.url, stack.apiKey, 200, 30_000);
    assert.equal(await chatStatus(proxyC.url, 'sk-svc-unknown'), 401);
    assert.equal((await health(proxyC.url)).controlPlane.connected, true);
    await stopProcess(proxyC.process);
    await stopProcess(admin3);
  });

  test('admin killed: cached keys keep working, unknown keys get 401, the gateway stays up; admin back: a key created meanwhile works', async () => {
    const adminPort = stack.admin.port;
    stack.admin.child.kill('SIGKILL');
    await waitFor(async () => !(await health(stack.gatewayUrl)).controlPlane.connected, 5_000);

    // The cached key still works (its record waits in the queue), an unknown key is refused.
    const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create(CHAT).withResponse();
    assert.equal(data.object, 'chat.completion');
    const outageRequestId = response.headers.get('svc-id')!;
    assert.equal(await chatStatus(stack.gatewayUrl, 'sk-svc-unknown'), 401);

    // A key created while admin is away is not known yet.
    const meanwhile = await createApiKey(stack.db.sql, organizationId, 'created-during-outage');
    assert.equal(await chatStatus(stack.gatewayUrl, meanwhile.key), 401);

    await waitFor(async () => (await health(stack.gatewayUrl)).controlPlane.reconnectAttempts >= 2, 10_000);
    const h = await health(stack.gatewayUrl);
    assert.equal(h.controlPlane.connected, false);
    assert.equal(h.controlPlane.ready, true, 'the cached keys stay valid');
    assert.ok(h.controlPlane.keysHeld >= 1);
    assert.equal(stack.proxy.child.exitCode, null, 'the gateway never exits because admin is away');
    assert.equal(await chatStatus(stack.gatewayUrl, stack.apiKey), 200);

    // Admin returns on the same port; the gateway reconnects by itself.
    const restarted = await startAdmin(adminPort);
    await waitForStatus(stack.gatewayUrl, meanwhile.key, 200, 30_000);
    assert.equal((await health(stack.gatewayUrl)).controlPlane.connected, true);
    assert.equal(stack.proxy.child.exitCode, null);
    // The record of the request served during the outage arrives once the link is back.
    const rec = await fetchRecord(stack, outageRequestId, 15_000);
    assert.equal(rec.request_id, outageRequestId);
    // Stop the gateway while its admin is still there (it flushes its queue on the way out).
    await stopProcess(stack.proxy);
    await stopProcess(restarted);
  });
});
