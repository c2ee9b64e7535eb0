/**
 * Shared harness of the REST API tests (`test/rest-*.test.ts`): a fresh database, the admin Koa app
 * on an ephemeral port, two organizations with one key each, a JSON `call` helper, log-record
 * factories for `ingestRecords`, and shape checks of responses against the reference OpenAPI
 * document (`test/fixtures/reference/rest-api-openapi.json`) and this API's own document.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildConfig } from '../shared/config.ts';
import type { LogRecord } from '../shared/record.ts';
import { createApp } from '../admin/app.ts';
import { ingestRecords } from '../admin/ingest.ts';
import { openApiDocument, validateSchema, type Schema } from '../admin/openapi.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

/** The reference document, when present next to the repository (else null; own-document checks still run). */
const REFERENCE_FILE = fileURLToPath(new URL('./fixtures/reference/rest-api-openapi.json', import.meta.url));
/** The reference OpenAPI document, kept in the repository; a missing file fails the suite. */
export const reference: Schema = JSON.parse(readFileSync(REFERENCE_FILE, 'utf8')) as Schema;
/** This API's own OpenAPI document. */
export const ownDoc = openApiDocument();

/** A running admin app with two organizations. */
export interface RestEnv {
  db: TestDatabase;
  url: string;
  orgA: string;
  keyA: string;
  orgB: string;
  keyB: string;
  close(): Promise<void>;
}

/** Starts the app on a fresh database; `maxBodyBytes` overrides the configured body limit. */
export async function startRest(opts: { maxBodyBytes?: number } = {}): Promise<RestEnv> {
  const db = await createTestDatabase();
  const config = buildConfig(opts.maxBodyBytes ? { admin: { 'max-body-size': opts.maxBodyBytes } } : {});
  const app = createApp({ sql: db.sql, config, logger: pino({ level: 'silent' }), health: () => ({}) });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const orgA = await createOrganization(db.sql, 'org A');
  const orgB = await createOrganization(db.sql, 'org B');
  const keyA = (await createApiKey(db.sql, orgA, 'a')).key;
  const keyB = (await createApiKey(db.sql, orgB, 'b')).key;
  return {
    db,
    url,
    orgA,
    keyA,
    orgB,
    keyB,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.drop();
    },
  };
}

/** A response: status and parsed JSON body (`text` when it is not JSON). */
export interface Reply {
  status: number;
  body: any;
  text: string;
}

/**
 * Calls the API with `key` (default: organization A's; `null` sends no Authorization header).
 * `body` is sent as JSON unless it is a string (sent verbatim).
 */
export async function call(env: RestEnv, method: string, path: string, body?: unknown, key: string | null = env.keyA): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${env.url}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** Asserts a 4xx/5xx envelope `{data: null, error: "..."}` with `status`, optionally matching the message. */
export function assertError(reply: Reply, status: number, message?: RegExp): void {
  assert.equal(reply.status, status, `expected ${status}, got ${reply.status}: ${reply.text.slice(0, 300)}`);
  assert.equal(reply.body?.data, null, reply.text);
  assert.equal(typeof reply.body?.error, 'string', reply.text);
  if (message) assert.match(reply.body.error, message);
  assertSchema('ResultError_string_', reply.body);
}

/**
 * Asserts `value` satisfies component schema `name` (or an inline schema) of the reference document
 * (when the name exists there) and of this API's own document.
 */
export function assertSchema(schema: string | Schema, value: unknown): void {
  const s: Schema = typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema;
  const inReference = typeof schema !== 'string' || ((reference?.components as any)?.schemas ?? {})[schema] !== undefined;
  if (reference && inReference) {
    const problems = validateSchema(reference, s, value);
    assert.deepEqual(problems, [], `reference schema ${typeof schema === 'string' ? schema : 'inline'}: ${problems.join('\n')}`);
  }
  if (typeof schema !== 'string' || ((ownDoc.components as any).schemas ?? {})[schema] !== undefined) {
    const own = validateSchema(ownDoc, s, value);
    assert.deepEqual(own, [], `own schema ${typeof schema === 'string' ? schema : 'inline'}: ${own.join('\n')}`);
  }
}

/**
 * Asserts a 200 response satisfies the 200 schema this API documents for `method path`
 * (OpenAPI path syntax), and the reference's schema for it when the reference documents it the same way.
 */
export function assertDocumented(method: string, path: string, reply: Reply, referenceSchema?: string): void {
  assert.equal(reply.status, 200, `expected 200, got ${reply.status}: ${reply.text.slice(0, 300)}`);
  const op = ((ownDoc.paths as any)[path] ?? {})[method.toLowerCase()];
  assert.ok(op, `${method} ${path} is documented`);
  const schema = op.responses['200'].content['application/json'].schema as Schema;
  const problems = validateSchema(ownDoc, schema, reply.body);
  assert.deepEqual(problems, [], `own document, ${method} ${path}: ${problems.join('\n')}`);
  if (referenceSchema && reference) {
    const refProblems = validateSchema(reference, { $ref: `#/components/schemas/${referenceSchema}` }, reply.body);
    assert.deepEqual(refProblems, [], `reference ${referenceSchema}, ${method} ${path}: ${refProblems.join('\n')}`);
  }
}

let clock = Date.parse('2025-01-01T00:00:00Z');

/** A valid log record of `organizationId` (a chat completion), with `over` applied. */
export function logRecord(organizationId: string, over: Partial<LogRecord> & { prompt_text?: string } = {}): LogRecord {
  clock += 1000;
  const { prompt_text, ...rest } = over;
  const text = prompt_text ?? 'What is the capital of France?';
  return {
    requestId: randomUUID(),
    organizationId,
    apiKeyId: null,
    createdAt: clock,
    responseCreatedAt: clock + 500,
    path: '/v1/chat/completions',
    targetUrl: 'https://api.openai.com/v1/chat/completions',
    provider: 'openai',
    requestModel: 'openai/gpt-4o-mini',
    modelSent: 'gpt-4o-mini',
    modelOverride: null,
    userId: 'user-1',
    properties: {},
    status: 200,
    streamed: false,
    delayMs: 500,
    timeToFirstTokenMs: 120,
    requestBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: text }] },
    responseBody: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
    },
    bodyTruncated: false,
    usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
    error: null,
    clientClosed: false,
    prompt: null,
    tokenLimit: null,
    attempts: [{ provider: 'openai', status: 200, latencyMs: 500 }],
    endpoint: 'chat',
    ...rest,
  };
}

/** Ingests records (each must belong to `organizationId`) and returns their request ids. */
export async function ingest(env: RestEnv, organizationId: string, records: LogRecord[]): Promise<string[]> {
  const result = await ingestRecords(env.db.sql, organizationId, records);
  assert.equal(result.rejected, 0, result.errors.join('; '));
  return records.map((r) => r.requestId);
}

/**
 * The names (`byId`: request id → a test's name for its row) of the rows `filter` matches through
 * `POST /v1/request/query` with `key` (organization A's by default), sorted; `POST /v1/request/count`
 * must agree on how many. Fails the test on any status but 200.
 */
export async function matchingNames(env: RestEnv, byId: ReadonlyMap<string, string>, filter: unknown, key?: string): Promise<string[]> {
  const r = await call(env, 'POST', '/v1/request/query', { filter, limit: 1000 }, key);
  assert.equal(r.status, 200, `${JSON.stringify(filter)} → ${r.status} ${r.text.slice(0, 300)}`);
  const found = r.body.data.map((x: { request_id: string }) => byId.get(x.request_id) ?? '?').sort();
  const c = await call(env, 'POST', '/v1/request/count', { filter }, key);
  assert.equal(c.status, 200, c.text);
  assert.equal(c.body.data, found.length, `count of ${JSON.stringify(filter)}`);
  return found;
}

/** A prompt-2025 version body. */
export function chatBody(text = 'Hello {{name}}', model = 'gpt-4o-mini'): Record<string, unknown> {
  return { model, messages: [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: text }], temperature: 0.2 };
}
