/**
 * finish and the response observers: the outcome is settled once, then each observer's hooks run in
 * the composed order; the access-log line and the log record read the context; the recorder asks
 * the endpoint kind where usage is.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { embeddings } from '../proxy/endpoints/embeddings.ts';
import { defineObservers, responseChunk, responseStarted } from '../proxy/observers/dispatch.ts';
import { buildLogRecord } from '../proxy/observers/log-record.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import type { ResponseObserver } from '../proxy/observers/types.ts';
import { finish } from '../proxy/pipeline/finish.ts';
import { fail } from '../proxy/pipeline/fail.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { GatewayError } from '../proxy/errors.ts';
import { accessLogObserver } from '../proxy/observers/access-log.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

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
