/**
 * End-to-end fault suite: upstream failures (refused, hanging, reset mid-stream, 500/429), a client
 * that aborts mid-stream, admin down under load, PostgreSQL connections killed under load, SIGTERM
 * under load, and operability (/metrics on both processes; JSON logs without bodies or keys).
 *
 * Real processes as in e2e-main.test.ts: stub upstream, admin on a fresh PostgreSQL database, and
 * proxies. Extra processes a test starts (a restarted admin, extra proxies) are stopped in `after`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { TEST_DATABASE_URL } from './support/db.ts';
import { defaultConfig, fetchRecord, startLinkedProxy, startProcess, startStack, stopProcess, uniq, waitFor, writeConfig, type Stack, type Started } from './support/stack.ts';

const UPSTREAM_TIMEOUT_MS = 1000;
/** How long admin stays down under load (the 30 s). */
const ADMIN_OUTAGE_MS = 30_000;
const PROVIDER_ENV = { OPENAI_API_KEY: 'sk-provider-openai-secret', GROQ_API_KEY: 'gsk-provider-groq-secret', ANTHROPIC_API_KEY: 'sk-ant-provider-secret' };

const faultConfig = (stubUrl: string, extra: Record<string, unknown> = {}) => ({
  ...defaultConfig(stubUrl),
  providers: { ...(defaultConfig(stubUrl).providers as object), mistral: { 'base-url': 'http://127.0.0.1:1/v1' } },
  server: { 'upstream-timeout': `${UPSTREAM_TIMEOUT_MS}ms`, 'shutdown-timeout': '10s' },
  ...extra,
});

let stack: Stack;
/** Processes the tests start themselves (restarted admins, extra proxies), stopped in `after`. */
const started: Started[] = [];

before(async () => {
  stack = await startStack({ config: (stubUrl) => faultConfig(stubUrl) });
});
after(async () => {
  for (const p of started.reverse()) await stopProcess(p);
  await stack?.stop();
});

const CHAT_PATH = '/ai/chat/completions';

function chat(gatewayUrl: string, body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gatewayUrl}${CHAT_PATH}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    ...init,
  });
}

const simple = (content = 'hello') => ({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] });

/** The `data:` payloads of an SSE text, parsed (non-JSON payloads such as `[DONE]` skipped). */
function sseEvents(text: string): any[] {
  const out: any[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    try {
      out.push(JSON.parse(line.slice(5).trim()));
    } catch {
      /* [DONE] */
    }
  }
  return out;
}
const streamedText = (events: any[]) => events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('');

/** Starts another proxy on the stack's admin (its own config); stopped in `after`. */
async function startProxy(configExtra: Record<string, unknown> = {}): Promise<Started & { url: string }> {
  const p = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: writeConfig(faultConfig(stack.stubUrl, configExtra)), env: PROVIDER_ENV });
  started.push(p);
  return p;
}

/** The current admin (replaced when a test restarts it). */
let admin: Started;

/** Restarts admin on the same port, database and bootstrap key. */
async function restartAdmin(): Promise<void> {
  admin = await startProcess(
    'admin/main.ts',
    { DATABASE_URL: stack.db.url, ADMIN_PORT: String(stack.admin.port), SVC_BOOTSTRAP_API_KEY: stack.apiKey },
    'admin.ready',
    ['--config', stack.configFile],
  );
  started.push(admin);
}

/** Ids of `ids` stored in request_log (each id is the primary key: stored at most once). */
async function storedIds(ids: string[]): Promise<Set<string>> {
  const rows = await stack.db.sql<{ id: string }[]>`select id::text as id from request_log where id = any(${ids}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** How many request_log rows hold one of `ids` (equal to `ids.length` when each is stored once). */
async function storedRows(ids: string[]): Promise<number> {
  const [{ count }] = await stack.db.sql<{ count: number }[]>`select count(*)::int as count from request_log where id = any(${ids}::uuid[])`;
  return count;
}

/** Waits until every id is stored; fails naming how many are missing. */
/**
 * Terminates every backend connected to the stack's database except `sql`'s own (as an operator's
 * `pg_terminate_backend` does); `sql` is connected elsewhere. Returns how many were terminated.
 */
async function terminateBackends(sql: postgres.Sql): Promise<number> {
  const dbName = new URL(stack.db.url).pathname.slice(1);
  const rows = await sql`select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
  return rows.filter((r) => r.ok).length;
}

async function waitStored(ids: string[], timeoutMs: number): Promise<void> {
  let missing = ids.length;
  try {
    await waitFor(async () => {
      missing = ids.length - (await storedIds(ids)).size;
      return missing === 0;
    }, timeoutMs, 200);
  } catch {
    assert.fail(`${missing} of ${ids.length} records were not stored within ${timeoutMs} ms`);
  }
}

/**
 * Sends requests with `workers` concurrent loops until `stop()` returns true; every answer must be
 * a 200. Returns the request ids (svc-id).
 */
async function load(gatewayUrl: string, workers: number, stop: () => boolean, body: Record<string, unknown> = simple('load')): Promise<string[]> {
  const ids: string[] = [];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stop()) {
        const res = await chat(gatewayUrl, body);
        const text = await res.text();
        if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
        ids.push(res.headers.get('svc-id')!);
      }
    }),
  );
  assert.deepEqual(failures, [], 'every response under load is a 200');
  return ids;
}

const metricValue = (text: string, series: string): number | null => {
  for (const line of text.split('\n')) if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  return null;
};

describe('upstream faults', () => {
  test('the provider refuses the connection → 502 upstream_unreachable, recorded', async () => {
    const res = await chat(stack.gatewayUrl, { model: 'mistral/mistral-large-latest', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as any).error.code, 'upstream_unreachable');
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.response_status, 502);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /unreachable/);
  });

  test(`the provider hangs → 504 upstream_timeout after the configured ${UPSTREAM_TIMEOUT_MS} ms, recorded`, async () => {
    const t0 = Date.now();
    const res = await chat(stack.gatewayUrl, { model: 'openai/hang', messages: [{ role: 'user', content: 'x' }] });
    const elapsed = Date.now() - t0;
    assert.equal(res.status, 504);
    assert.equal(((await res.json()) as any).error.code, 'upstream_timeout');
    assert.ok(elapsed >= UPSTREAM_TIMEOUT_MS - 20, `answered after ${elapsed} ms, before the timeout`);
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.response_status, 504);
  });

  for (const model of ['openai/reset-mid-stream', 'anthropic/reset-mid-stream']) {
    test(`${model}: the provider resets mid-stream → SSE error event; the record keeps the partial output and the error`, async () => {
      const res = await chat(stack.gatewayUrl, { model, messages: [{ role: 'user', content: 'x' }], stream: true, max_tokens: 16 });
      assert.equal(res.status, 200);
      const text = await res.text();
      const events = sseEvents(text);
      const last = events.at(-1);
      assert.equal(last?.error?.code, 'upstream_disconnected', text);
      const partial = streamedText(events);
      assert.ok(partial.length > 0, 'some output arrived before the reset');
      const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
      assert.equal(rec.llmSchema.response.messages[0].content, partial);
      assert.match(JSON.stringify(rec.llmSchema.response.error), /connection lost mid-response/);
      assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
    });
  }

  // A mapped (non-passthrough) answer is collected before anything goes to the client: losing the
  // provider then is still an ordinary error response, never a client left waiting.
  for (const [model, status, code] of [['anthropic/reset-mid-body', 502, 'upstream_disconnected'], ['anthropic/stall-mid-body', 504, 'upstream_timeout']] as const) {
    test(`${model}: the provider fails halfway through a JSON answer → ${status} ${code}, recorded`, async () => {
      const res = await chat(stack.gatewayUrl, { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 16 });
      assert.equal(res.status, status);
      assert.equal(((await res.json()) as any).error.code, code);
      const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
      assert.equal(rec.response_status, status);
      assert.match(JSON.stringify(rec.llmSchema.response.error), /mid-response/);
      assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
    });
  }

  test('the provider answers 500 or 429 → passed through with its body (and Retry-After), recorded', async () => {
    const r500 = await chat(stack.gatewayUrl, { model: 'openai/error-500', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(r500.status, 500);
    assert.equal(((await r500.json()) as any).error.message, 'The server had an error while processing your request.');
    const r429 = await chat(stack.gatewayUrl, { model: 'openai/error-429', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(r429.status, 429);
    assert.equal(r429.headers.get('retry-after'), '1');
    assert.equal(((await r429.json()) as any).error.code, 'rate_limit_exceeded');
    assert.equal((await fetchRecord(stack, r500.headers.get('svc-id')!)).response_status, 500);
    assert.equal((await fetchRecord(stack, r429.headers.get('svc-id')!)).response_status, 429);
  });
});

describe('client aborts mid-stream', () => {
  test('the upstream request is aborted within 100 ms (asserted with a 500 ms tolerance); the record keeps what was received, status 499', async () => {
    const tag = `abort-${uniq()}`;
    const controller = new AbortController();
    const res = await chat(stack.gatewayUrl, { model: 'openai/endless-stream', messages: [{ role: 'user', content: tag }], stream: true }, { signal: controller.signal });
    assert.equal(res.status, 200);
    const id = res.headers.get('svc-id')!;
    const reader = res.body!.getReader();
    let received = '';
    while (sseEvents(received).length < 5) received += new TextDecoder().decode((await reader.read()).value);
    const abortedAt = Date.now();
    controller.abort();
    await reader.cancel().catch(() => {});

    let closed: { closedAt: number; finished: boolean } | undefined;
    await waitFor(async () => {
      closed = ((await (await fetch(`${stack.stubUrl}/__closed`)).json()) as Record<string, { closedAt: number; finished: boolean }>)[tag];
      return closed !== undefined;
    }, 5_000);
    assert.equal(closed!.finished, false, 'the stub did not end the stream itself');
    const lag = closed!.closedAt - abortedAt;
    assert.ok(lag < 500, `the upstream connection closed ${lag} ms after the client aborted`);

    const rec = await fetchRecord(stack, id);
    assert.equal(rec.response_status, 499);
    const content = rec.llmSchema.response.messages[0].content as string;
    assert.ok(content.startsWith(streamedText(sseEvents(received)).slice(0, 20)), `recorded: ${content.slice(0, 80)}`);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /client closed/);
  });
});

describe('admin down under load', () => {
  test(`admin down for ${ADMIN_OUTAGE_MS / 1000} s: responses unaffected, queued records bounded, all delivered once admin is back, each stored once`, async () => {
    admin = stack.admin;
    // A second proxy with a tiny queue shows the bound: the oldest are dropped and counted.
    const small = await startProxy({ 'log-queue': { 'flush-interval': '20ms', 'max-records': 20 } });
    // Let earlier records drain so the counts below are exact.
    await waitFor(async () => {
      const h = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { logQueue: { queued: number; inFlight: number } };
      return h.logQueue.queued === 0 && h.logQueue.inFlight === 0;
    });

    await stopProcess(admin);
    const outageStart = Date.now();
    await waitFor(async () => ((await (await fetch(`${stack.gatewayUrl}/health`)).json()) as any).controlPlane.connected === false);

    const smallIds: string[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await chat(small.url, simple(`small ${i}`));
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      smallIds.push(res.headers.get('svc-id')!);
    }
    const ids = await load(stack.gatewayUrl, 4, () => Date.now() - outageStart > ADMIN_OUTAGE_MS);
    assert.ok(ids.length > 20, `only ${ids.length} requests during the outage`);

    const health = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as any;
    assert.equal(health.controlPlane.connected, false);
    assert.ok(health.logQueue.queued >= ids.length, `queued ${health.logQueue.queued} of ${ids.length}`);
    const smallHealth = (await (await fetch(`${small.url}/health`)).json()) as any;
    assert.equal(smallHealth.logQueue.queued, 20);
    assert.equal(smallHealth.logQueue.dropped, 30);
    const smallMetrics = await (await fetch(`${small.url}/metrics`)).text();
    assert.equal(metricValue(smallMetrics, 'svc_proxy_log_queue_dropped_total'), 30);
    assert.equal(metricValue(smallMetrics, 'svc_proxy_log_queue_depth'), 20);
    assert.equal(metricValue(smallMetrics, 'svc_proxy_control_plane_connected'), 0);

    await restartAdmin();
    // The proxies reconnect by themselves (exponential backoff with jitter, capped at 30 s).
    await waitStored(ids, 60_000);
    const stored = await storedIds(ids);
    assert.equal(stored.size, new Set(ids).size, 'every request sent during the outage is stored');
    assert.equal(await storedRows(ids), ids.length, 'each stored exactly once');

    await waitStored(smallIds.slice(30), 60_000);
    assert.equal((await storedIds(smallIds.slice(0, 30))).size, 0, 'the 30 oldest were dropped');
    await stopProcess(small);
  });
});

describe('PostgreSQL connections terminated under load', () => {
  test('admin reconnects; records are acknowledged only after commit, so none is lost', async () => {
    const killer = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    let terminated = 0;
    let loading = true;
    const kills = (async () => {
      while (loading) {
        await new Promise((r) => setTimeout(r, 300));
        terminated += await terminateBackends(killer);
      }
    })();
    const start = Date.now();
    let ids: string[];
    try {
      ids = await load(stack.gatewayUrl, 4, () => Date.now() - start > 4_000);
    } finally {
      loading = false;
      await kills;
      await killer.end({ timeout: 2 });
    }
    assert.ok(terminated > 0, "backends were terminated");
    await waitStored(ids, 60_000);
    assert.equal(await storedRows(ids), ids.length);
    // Admin serves its REST API again.
    await fetchRecord({ adminUrl: stack.adminUrl, apiKey: stack.apiKey }, ids.at(-1)!, 20_000);
  });
});

describe('a new PostgreSQL connection whose first query fails (porsager/postgres#1192)', () => {
  test('admin stays up: the driver reconnects, and once the server is well admin answers again', async () => {
    const dbName = new URL(stack.db.url).pathname.slice(1);
    const server = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    const terminate = () => terminateBackends(server);
    const adminGet = () => fetch(`${stack.adminUrl}/v1/request/${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    // The admin of this file's stack, or the one an earlier test restarted in its place.
    const current = (admin as Started | undefined) ?? stack.admin;
    const faultLogged = () => current.output().includes('"fault":"array-type-fetch"');
    try {
      // New connections to the stack's database now run with a 1 ms statement timeout, which
      // cancels postgres.js's own first query on each (its array-type fetch, slower than 1 ms on a
      // new backend) nearly always; its dropped promise then rejects unhandled in admin.
      await server`alter database ${server(dbName)} set statement_timeout = 1`;
      for (let i = 0; i < 20 && !faultLogged() && current.child.exitCode === null; i++) {
        await terminate();
        await adminGet().then((res) => res.text(), () => '');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(current.child.exitCode, null, `admin is still running:\n${current.output().slice(-2000)}`);
      assert.ok(faultLogged(), 'the fault happened, and admin logged it as the known driver fault');
    } finally {
      await server`alter database ${server(dbName)} reset statement_timeout`;
      await terminate();
      await server.end({ timeout: 2 });
    }
    await waitFor(async () => (await adminGet()).status === 404, 20_000);
  });
});

/**
 * The command that restarts the PostgreSQL server the tests use: `TEST_PG_RESTART` (run by a shell),
 * or on Debian's packaging, as on this project's machines and CI, `pg_ctlcluster` on the newest
 * cluster version. There is no fallback: without a way to restart the server the test fails.
 */
function pgRestartCommand(): string {
  if (process.env.TEST_PG_RESTART) return process.env.TEST_PG_RESTART;
  const versions = readdirSync('/etc/postgresql').sort((a, b) => Number(a) - Number(b));
  return `pg_ctlcluster --skip-systemctl-redirect ${versions.at(-1)} main restart`;
}

describe('PostgreSQL restarted under load', () => {
  test('admin reconnects once the server is back; records are acknowledged only after commit, so none is lost', async () => {
    const startedAt = async () => (await stack.db.sql<{ t: Date }[]>`select pg_postmaster_start_time() as t`)[0]!.t.getTime();
    const before = await startedAt();
    const start = Date.now();
    let restarted: Promise<void> | null = null;
    let restartedAt = 0;
    let restartError: unknown = null;
    const ids = await load(stack.gatewayUrl, 4, () => {
      // A second into the load, restart the server (its clients lose their connections, and new
      // ones are refused until it is up); keep the load on for 4 s after the restart returned.
      if (!restarted && Date.now() - start > 1_000) {
        restarted = promisify(execFile)('sh', ['-c', pgRestartCommand()]).then(
          () => void (restartedAt = Date.now()),
          (err: unknown) => void (restartError = err),
        );
      }
      return restartError !== null || (restartedAt > 0 && Date.now() - restartedAt > 4_000);
    });
    await restarted;
    assert.equal(restartError, null, `restarting PostgreSQL failed (TEST_PG_RESTART can name the command): ${String(restartError)}`);
    assert.ok((await startedAt()) > before, 'the PostgreSQL server was restarted');
    await waitStored(ids, 60_000);
    assert.equal(await storedRows(ids), ids.length, 'every request made around the restart is stored, once');
    await fetchRecord({ adminUrl: stack.adminUrl, apiKey: stack.apiKey }, ids.at(-1)!, 20_000);
  });
});

describe('SIGTERM under load', () => {
  test('in-flight requests finish, queued records are flushed, then the proxy exits 0', async () => {
    const proxy = await startProxy();
    const full = streamedText(sseEvents(await (await chat(proxy.url, { ...simple('warm-up'), model: 'openai/slow-stream', stream: true })).text()));
    assert.equal(full, 'The capital of the UK is London.');

    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(proxy.url, { ...simple(`in flight ${i}`), model: 'openai/slow-stream', stream: true })));
    for (const r of responses) assert.equal(r.status, 200);
    const bodies = responses.map((r) => r.text());
    const exited = new Promise<number | null>((resolve) => proxy.child.once('exit', (code) => resolve(code)));
    proxy.child.kill('SIGTERM');

    const texts = await Promise.all(bodies);
    for (const t of texts) assert.equal(streamedText(sseEvents(t)), full, 'each in-flight stream finished completely');
    assert.equal(await exited, 0, proxy.output());
    await assert.rejects(fetch(`${proxy.url}/health`), 'no new connections after the stop');
    const ids = responses.map((r) => r.headers.get('svc-id')!);
    // Flushed before the exit: stored already, no proxy left to send them.
    assert.equal((await storedIds(ids)).size, ids.length);
  });
});

describe('operability: /metrics', () => {
  test('the proxy serves Prometheus metrics: requests, latency, TTFT, rate-limit denials, log queue, link state', async () => {
    const res = await fetch(`${stack.gatewayUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/plain/);
    const text = await res.text();
    assert.match(text, /svc_proxy_requests_total\{route="\/ai\/chat\/completions",router="",provider="openai",status="200"\} \d+/);
    assert.match(text, /svc_proxy_requests_total\{route="\/ai\/chat\/completions",router="",provider="openai",status="499"\} \d+/);
    for (const name of [
      'svc_proxy_request_duration_seconds_bucket',
      'svc_proxy_time_to_first_token_seconds_bucket',
      'svc_proxy_rate_limit_denials_total',
      'svc_proxy_log_queue_depth',
      'svc_proxy_log_queue_dropped_total',
      'svc_proxy_control_plane_connected',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(text.includes(name), `missing ${name}`);
    }
    assert.equal(metricValue(text, 'svc_proxy_control_plane_connected'), 1);
  });

  test('unknown paths share one route label', async () => {
    for (let i = 0; i < 3; i++) await (await fetch(`${stack.gatewayUrl}/nope-${uniq()}`, { method: 'POST', body: '{}' })).arrayBuffer();
    const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    assert.ok(!text.includes('nope-'), 'no per-path series');
    assert.match(text, /svc_proxy_requests_total\{route="unmatched",router="",provider="none",status="404"\} \d+/);
  });

  test('admin serves Prometheus metrics: HTTP requests by route and status, ingested/duplicate/rejected records, control-plane connections', async () => {
    await (await fetch(`${stack.adminUrl}/v1/request/00000000-0000-0000-0000-000000000000`, { headers: { authorization: `Bearer ${stack.apiKey}` } })).arrayBuffer();
    const res = await fetch(`${stack.adminUrl}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /svc_admin_http_requests_total\{route="\/v1\/request\/:requestId",status="404"\} \d+/);
    assert.match(text, /svc_admin_http_requests_total\{route="\/v1\/request\/:requestId",status="200"\} \d+/);
    for (const name of ['svc_admin_http_request_duration_seconds_bucket', 'svc_admin_records_duplicate_total', 'svc_admin_records_rejected_total', 'svc_admin_record_batches_failed_total']) {
      assert.ok(text.includes(name), `missing ${name}`);
    }
    assert.ok(metricValue(text, 'svc_admin_records_ingested_total')! > 0);
    assert.ok(metricValue(text, 'svc_admin_control_plane_connections')! >= 1);
  });
});

describe('operability: structured logs', () => {
  let logStack: Stack;
  before(async () => {
    logStack = await startStack({ config: (stubUrl) => faultConfig(stubUrl), proxyEnv: { LOG_LEVEL: 'trace' }, adminEnv: { LOG_LEVEL: 'trace' } });
  });
  after(async () => {
    await logStack?.stop();
  });

  test('JSON lines with the request id; no request or response bodies, no keys', async () => {
    const marker = `distinctive-body-${uniq()}`;
    const post = (body: string, key = logStack.apiKey, path = CHAT_PATH) =>
      fetch(`${logStack.gatewayUrl}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'svc-user-id': 'log-test' } });
    const ok = await post(JSON.stringify(simple(marker)));
    assert.equal(ok.status, 200);
    await ok.text();
    const id = ok.headers.get('svc-id')!;
    const streamed = await post(JSON.stringify({ ...simple(marker), stream: true }));
    await streamed.text();
    await (await post(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"${marker}"`)).text();
    await (await post(JSON.stringify({ ...simple(marker), model: 'openai/error-401' }))).text();
    await (await post(JSON.stringify(simple(marker)), `sk-svc-wrong-${marker}`)).text();
    await (await post(JSON.stringify({ ...simple(marker), model: 'mistral/mistral-large-latest' }))).text();
    const rec = await fetchRecord(logStack, id);
    assert.equal(rec.llmSchema.request.messages[0].content, marker, 'the body is in the record');
    await fetch(`${logStack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${logStack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { request: { prompt: { contains: marker } } } }),
    });
    await new Promise((r) => setTimeout(r, 300));

    const proxyOut = logStack.proxy.output();
    const adminOut = logStack.admin.output();
    for (const [name, out] of [['proxy', proxyOut], ['admin', adminOut]] as const) {
      assert.ok(!out.includes(marker), `${name} output contains the body marker`);
      assert.ok(!out.includes(logStack.apiKey), `${name} output contains the API key`);
      for (const secret of Object.values(PROVIDER_ENV)) assert.ok(!out.includes(secret), `${name} output contains a provider key`);
    }
    const proxyLines = proxyOut.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const line = proxyLines.find((l) => l.requestId === id);
    assert.ok(line, 'the proxy logged the request with its id');
    assert.equal(line.msg, 'request');
    assert.equal(line.status, 200);
    assert.equal(typeof line.durationMs, 'number');
    const adminLines = adminOut.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.ok(adminLines.some((l) => l.msg === 'request' && l.route === '/v1/request/:requestId' && typeof l.requestId === 'string'));
  });
});
