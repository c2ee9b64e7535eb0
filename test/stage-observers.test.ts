/**
 * finish and the response observers: the outcome is settled once, then each observer's hooks run in
 * the composed order; the access-log line and the log record read the context; the recorder asks
 * the endpoint kind where usage is.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { embeddings } from '../proxy/endpoints/embeddings.ts';
import { defineObservers, responseChunk, responseStarted } from '../proxy/observers/dispatch.ts';
import { buildLogRecordHead } from '../proxy/observers/log-record.ts';
import { HEAD_MEMBERS, recordFromHead } from '../shared/record-head.ts';
import { LogRecordSchema } from '../shared/record.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import type { ResponseObserver } from '../proxy/observers/types.ts';
import { finish } from '../proxy/pipeline/finish.ts';
import { fail } from '../proxy/pipeline/fail.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { GatewayError } from '../proxy/errors.ts';
import { accessLogObserver } from '../proxy/observers/access-log.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

/** The record object of the positional head the log-record observer queues. */
const buildLogRecord = (...args: Parameters<typeof buildLogRecordHead>) => recordFromHead(buildLogRecordHead(...args));

const calls: string[] = [];
const first: ResponseObserver = { name: 'first', onResponseStart: (_c, s) => void calls.push(`first.start:${s}`), onFinish: (c) => void calls.push(`first.finish:${c.outcomeStatus}`) };
const second: ResponseObserver = { name: 'second', onChunk: (_c, b) => void calls.push(`second.chunk:${b}`), onFinish: () => void calls.push('second.finish') };
const lines: string[] = [];
const gw = makeRuntime({ observers: defineObservers([first, null, false, second, accessLogObserver]), lines });
after(() => closeRuntime(gw));

test('defineObservers splits by hook and keeps the order; the hooks run in it', () => {
  assert.deepEqual(gw.observers.all.map((o) => o.name), ['first', 'second', 'access-log']);
  assert.deepEqual(gw.observers.chunk.map((o) => o.name), ['second']);
  calls.length = 0;
  const ctx = makeContext(gw);
  responseStarted(ctx, true);
  responseChunk(ctx, Buffer.from('x'));
  ctx.status = 200;
  ctx.res.end();
  finish(ctx);
  finish(ctx);
  assert.deepEqual(calls, ['first.start:true', 'second.chunk:x', 'first.finish:200', 'second.finish'], 'finish runs the observers once');
});

test('a client that left before an answer is counted 499; an error answered stays its status', () => {
  calls.length = 0;
  const left = makeContext(gw);
  left.status = 200;
  finish(left);
  assert.equal(left.clientClosed, true);
  assert.equal(left.outcomeStatus, 499);
  const failed = makeContext(gw);
  fail(failed, new GatewayError(404, 'gone', 'invalid_request_error', 'not_found'));
  finish(failed);
  assert.equal(failed.outcomeStatus, 404);
  assert.equal(failed.clientClosed, false);
});

test('the access-log line: route label, status, error code; never the body', () => {
  lines.length = 0;
  const ctx = makeContext(gw, { path: '/ai/embeddings', body: { model: 'openai/text-embedding-3-small', input: 'secret words' } });
  route(ctx);
  validate(ctx);
  fail(ctx, new GatewayError(400, 'bad', 'invalid_request_error', 'invalid_thing'));
  finish(ctx);
  const line = JSON.parse(lines.find((l) => l.includes('"msg":"request"'))!);
  assert.equal(line.route, '/ai/embeddings');
  assert.equal(line.status, 400);
  assert.equal(line.errorCode, 'invalid_thing');
  assert.equal(line.requestId, ctx.id);
  assert.ok(!lines.join('').includes('secret words'));
});

test('the log record names the endpoint kind; a 2xx JSON answer goes as its bytes (admin reads its usage), an error\'s usage where the kind says', () => {
  const ctx = makeContext(gw, { path: '/ai/embeddings', body: { model: 'openai/text-embedding-3-small', input: 'x' } });
  route(ctx);
  validate(ctx);
  ctx.key = { hash: 'h', keyId: 'k', organizationId: 'o' };
  ctx.status = 200;
  ctx.res.end();
  finish(ctx);
  const rec = new ResponseRecorder(false, 1 << 20, embeddings);
  rec.push(Buffer.from('{"object":"list","data":[],"usage":{"prompt_tokens":3,"total_tokens":3}}'));
  const recorded = rec.finish(200);
  const record = buildLogRecord(ctx, recorded);
  assert.equal(record.endpoint, 'embeddings');
  assert.equal(record.path, '/ai/embeddings');
  assert.equal(record.usage, null);
  assert.equal(record.responseBody, undefined, 'carried as bytes beside the record');
  assert.match(recorded.raw!.toString(), /"usage":\{"prompt_tokens":3/);
  assert.equal(record.requestModel, 'openai/text-embedding-3-small');
  assert.equal(record.status, 200);
  const failed = new ResponseRecorder(false, 1 << 20, embeddings);
  failed.push(Buffer.from('{"error":{"message":"over"},"usage":{"prompt_tokens":3,"total_tokens":3}}'));
  assert.deepEqual(buildLogRecord(ctx, failed.finish(400)).usage, { prompt_tokens: 3, total_tokens: 3 });
});

test('the positional head: HEAD_MEMBERS names every record member once, and each value lands on its member', () => {
  const schemaMembers = Object.keys(LogRecordSchema.schema).sort();
  assert.deepEqual([...HEAD_MEMBERS].sort(), schemaMembers);
  assert.equal(new Set(HEAD_MEMBERS).size, HEAD_MEMBERS.length);
  // recordFromHead reads each member from its own position.
  const read = recordFromHead(HEAD_MEMBERS.map((_, i) => i));
  assert.deepEqual(Object.keys(read), [...HEAD_MEMBERS]);
  HEAD_MEMBERS.forEach((m, i) => assert.equal(read[m], i, m));
  // Every string member gets a value of its own, so two members swapped in the head cannot pass.
  const ctx = makeContext(gw, {
    path: '/ai/chat/completions',
    headers: { 'Svc-Model-Override': 'override-1', 'Svc-User-Id': 'user-1', 'Svc-Property-Team': 'team-1', 'Svc-Session-Id': 'session-1', 'Svc-Session-Path': '/path-1', 'Svc-Session-Name': 'name-1' },
    body: { model: 'openai/gpt-4o-mini', messages: [] },
  });
  route(ctx);
  validate(ctx);
  Object.assign(ctx, {
    key: { hash: 'h', keyId: 'key-1', organizationId: 'org-1' },
    provider: 'openai',
    requestModel: 'request-model-1',
    model: 'model-sent-1',
    error: 'error-1',
    attempts: [{ provider: 'openai', status: 502, latencyMs: 3 }],
    cache: { key: 'k', ttlMs: 1, bucketMax: 1, hitOf: 'hit-of-1', chunks: null, bytes: 0, streamed: false, usage: null, replay: null, replayAt: 0 },
  });
  ctx.status = 502;
  ctx.res.end();
  finish(ctx);
  const r = buildLogRecord(ctx, null);
  assert.deepEqual(
    [r.requestId, r.organizationId, r.apiKeyId, r.path, r.provider, r.requestModel, r.modelSent, r.modelOverride, r.userId, { ...(r.properties as object) }, r.error],
    [ctx.id, 'org-1', 'key-1', '/ai/chat/completions', 'openai', 'request-model-1', 'model-sent-1', 'override-1', 'user-1', { team: 'team-1' }, 'error-1'],
  );
  assert.deepEqual([r.sessionId, r.sessionPath, r.sessionName, r.endpoint, r.cacheEnabled, r.cacheReferenceId], ['session-1', '/path-1', 'name-1', 'chat', true, 'hit-of-1']);
  assert.deepEqual([r.status, r.streamed, r.clientClosed, r.bodyTruncated, r.createdAt], [502, false, false, false, ctx.createdAt]);
  assert.deepEqual(r.attempts, [{ provider: 'openai', status: 502, latencyMs: 3 }]);
  assert.deepEqual(r.requestBody, { model: 'override-1', messages: [] }, 'the overridden body is logged as an object, not as the bytes received');
  assert.equal(typeof r.delayMs, 'number');
  const sent = recordFromHead(JSON.parse(JSON.stringify(buildLogRecordHead(ctx, null))));
  assert.equal(LogRecordSchema.validate({ ...sent, requestBody: {} })[0], undefined, 'the head as JSON is a valid record');
});
