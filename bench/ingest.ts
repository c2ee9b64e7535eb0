/**
 * What a stored log row costs admin and PostgreSQL (issue 19), without proxies or sockets: builds
 * N records like the observability scenario's (non-streaming chat, `bench/requests.ts`'s CHAT_BODY
 * request and the stub's chat answer `test/fixtures/providers/openai/chat-completion.json`), in
 * batches of 500 as the proxy's log queue sends them, and feeds the messages one after the other to
 * admin's ingestion on a scratch database, in this process.
 *
 * Modes: `json` is the `records` message (JSON.parse + message schema + ingestRecords), as proxies
 * before binary batches send it (bodies spliced in as text, the body's usage as `usage`); `binary`
 * is the binary batch of shared/record-batch.ts (decodeBatch + ingestDecodedRecords).
 *
 * Printed: admin CPU µs per stored row (process.cpuUsage of this process over the measured
 * batches: parsing, validation, rows, postgres.js, socket) and PostgreSQL CPU µs per stored row
 * (utime + stime from /proc/<pid>/stat of every process whose comm is `postgres`, 10 ms clock
 * ticks, so every PostgreSQL process on the machine counts: run it on a quiet machine).
 *
 * `--request=claude-code` sends Claude Code's recorded request
 * (`test/fixtures/clients/claude-code-2.1.328.request.json`, ~49 KB, which PostgreSQL stores
 * compressed out of line) instead of the chat request, to measure the rows coding agents produce.
 *
 * Usage:
 *   node --import tsx bench/ingest.ts [--mode=json|binary] [--request=chat|claude-code] [--records=N] [--root=DIR] [--drop-fk] [--drop-index=a,b]
 * N defaults to 20,000 chat rows or 2,000 Claude Code rows.
 * `--root` takes admin/ and shared/ (and the migrations) from another checkout, e.g. the code
 * before a change: `git archive <commit> admin shared | tar -x -C /tmp/base` and
 * `ln -s $PWD/node_modules /tmp/base/node_modules`. `--drop-fk` drops request_log's foreign key
 * to organization on the scratch database first (to measure what that check costs); `--drop-index`
 * drops the named indexes there (to measure what each costs to maintain).
 * Waits while /tmp/bench.lock exists (someone else is benchmarking). PostgreSQL at
 * TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { encodeBatch, encodeRecord } from '../shared/record-batch.ts';
import { HEAD_MEMBERS } from '../shared/record-head.ts';
import { CHAT_BODY } from './requests.ts';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string?]));
const MODE = args.mode ?? 'binary';
const REQUEST = args.request ?? 'chat';
if (REQUEST !== 'chat' && REQUEST !== 'claude-code') throw new Error(`--request: expected chat or claude-code, got ${REQUEST}`);
const RECORDS = Number(args.records ?? (REQUEST === 'chat' ? 20_000 : 2_000));
const ROOT = path.resolve(args.root ?? path.join(import.meta.dirname, '..'));
// The proxy closes a batch at 500 records or 16 MiB (proxy/log-queue.ts): ~340 Claude Code requests.
const BATCH = REQUEST === 'chat' ? 500 : 300;
const WARMUP_BATCHES = 4;
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLOCK_TICK_US = 10_000;

/** The bench's chat request (./requests.ts) as the gateway receives it, or Claude Code's recorded one. */
const REQUEST_TEXT =
  REQUEST === 'chat'
    ? JSON.stringify({ ...CHAT_BODY, model: 'openai/gpt-4o-mini' })
    : readFileSync(path.join(import.meta.dirname, '../test/fixtures/clients/claude-code-2.1.328.request.json'), 'utf8');
const RESPONSE_TEXT = readFileSync(path.join(import.meta.dirname, '../test/fixtures/providers/openai/chat-completion.json'), 'utf8');

/** The head of one record as the proxy builds it for the observability scenario (bodies left out). */
function head(organizationId: string, i: number): Record<string, unknown> {
  const now = Date.now() - 1000 + (i % 1000);
  return {
    requestId: randomUUID(),
    organizationId,
    apiKeyId: null,
    createdAt: now,
    responseCreatedAt: now + 1,
    path: '/ai/chat/completions',
    targetUrl: 'http://127.0.0.1:40000/v1/chat/completions',
    provider: 'openai',
    requestModel: 'openai/gpt-4o-mini',
    modelSent: 'gpt-4o-mini',
    modelOverride: null,
    userId: null,
    properties: {},
    status: 200,
    streamed: false,
    delayMs: 2,
    timeToFirstTokenMs: 1,
    bodyTruncated: false,
    usage: null,
    error: null,
    clientClosed: false,
    prompt: null,
    tokenLimit: null,
    attempts: [{ provider: 'openai', status: 200, latencyMs: 1 }],
    endpoint: 'chat',
    sessionId: null,
    sessionPath: null,
    sessionName: null,
    removedMembers: null,
    wireFormat: 'openai-chat',
    cacheEnabled: false,
    cacheReferenceId: null,
  };
}

/** One batch message of `count` records in the mode's format. */
function message(organizationId: string, count: number, offset: number): string | Buffer {
  const usage = JSON.stringify((JSON.parse(RESPONSE_TEXT) as { usage: unknown }).usage);
  const parts: Array<string | Buffer> = [];
  for (let i = 0; i < count; i++) {
    const record = head(organizationId, offset + i);
    const h = JSON.stringify(record);
    // Binary: the positional head (shared/record-head.ts), as the proxy writes it.
    if (MODE === 'binary') parts.push(encodeRecord(JSON.stringify(HEAD_MEMBERS.map((m) => record[m])), Buffer.from(REQUEST_TEXT), Buffer.from(RESPONSE_TEXT)));
    // As the older proxy's log queue spliced the bodies' texts into the record's JSON.
    else parts.push(`${h.slice(0, -1).replace('"usage":null', `"usage":${usage}`)},"requestBody":${REQUEST_TEXT},"responseBody":${RESPONSE_TEXT}}`);
  }
  const batchId = randomUUID();
  return MODE === 'binary' ? encodeBatch(batchId, parts as Buffer[]) : `{"type":"records","batchId":"${batchId}","records":[${parts.join(',')}]}`;
}

/** CPU of every PostgreSQL process, in clock ticks (utime + stime). */
function postgresTicks(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

async function waitForLock(): Promise<void> {
  while (existsSync('/tmp/bench.lock')) {
    console.log('/tmp/bench.lock exists: waiting 30 s');
    await new Promise((r) => setTimeout(r, 30_000));
  }
}

async function main(): Promise<void> {
  await waitForLock();
  const load = (file: string) => import(pathToFileURL(path.join(ROOT, file)).href);
  const db = await load('admin/db.ts');
  const ingest = await load('admin/ingest.ts');
  const { createOrganization } = await load('admin/organizations.ts');
  const { parseMessage, ProxyMessageSchema } = await load('shared/controlplane.ts');
  const { decodeBatch } = await import('../shared/record-batch.ts');

  const name = `svc_bench_ingest_${randomBytes(4).toString('hex')}`;
  const server = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  await server`create database ${server(name)}`;
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 10, onnotice: () => {}, transform: { undefined: null } });
  try {
    await db.migrate(sql);
    if ('drop-fk' in args) await sql`alter table request_log drop constraint if exists request_log_organization_id_fkey`;
    for (const index of (args['drop-index'] ?? '').split(',').filter(Boolean)) await sql`drop index if exists ${sql(index)}`;
    const org: string = await createOrganization(sql, 'bench');
    const store = async (msg: string | Buffer): Promise<number> => {
      if (typeof msg !== 'string') return (await ingest.ingestDecodedRecords(sql, org, decodeBatch(msg).records)).stored;
      const parsed = parseMessage(msg, ProxyMessageSchema);
      return (await ingest.ingestRecords(sql, org, parsed.records)).stored;
    };
    for (let b = 0; b < WARMUP_BATCHES; b++) await store(message(org, BATCH, b * BATCH));
    const messages: Array<string | Buffer> = [];
    for (let i = 0; i < RECORDS; i += BATCH) messages.push(message(org, Math.min(BATCH, RECORDS - i), i));
    await sql`checkpoint`;

    const pg0 = postgresTicks();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let stored = 0;
    for (const m of messages) stored += await store(m);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const pg = (postgresTicks() - pg0) * CLOCK_TICK_US;
    if (stored !== RECORDS) throw new Error(`stored ${stored} of ${RECORDS} rows`);
    const per = (us: number) => (us / stored).toFixed(1);
    console.log(
      JSON.stringify({ mode: MODE, request: REQUEST, root: ROOT, dropFk: 'drop-fk' in args, dropIndex: args['drop-index'] ?? '', rows: stored, seconds: +(ms / 1000).toFixed(2), adminUsPerRow: +per(cpu.user + cpu.system), postgresUsPerRow: +per(pg) }),
    );
  } finally {
    await sql.end({ timeout: 2 });
    await server`drop database if exists ${server(name)} with (force)`;
    await server.end();
  }
}

await main();
