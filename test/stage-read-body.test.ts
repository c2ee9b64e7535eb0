/** Stage read-body: suspends on the request's events and resumes the pipeline; 413 and 408 cases. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SUSPEND, definePipeline, run, type Stage } from '../proxy/pipeline/pipeline.ts';
import { onDeadline } from '../proxy/pipeline/timeouts.ts';
import { readBody } from '../proxy/stages/read-body.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

/** What the stage after read-body saw. */
const seen: Array<Buffer | null> = [];
const after_: Stage = (ctx) => void seen.push(ctx.rawBody);
const gw = makeRuntime({ doc: { server: { 'max-body-size': 16, 'headers-timeout': '2s' } }, pipeline: definePipeline([readBody, after_]) });
after(() => closeRuntime(gw));

test('the body arrives in pieces: the stage suspends, then the next stage runs with the whole body', async () => {
  const ctx = makeContext(gw, { stream: true });
  assert.equal(readBody(ctx), SUSPEND);
  ctx.next = 1;
  assert.equal(ctx.phase, 'body');
  assert.ok(Number.isFinite(ctx.deadlineMs));
  const before = seen.length;
  ctx.req.write('{"a":');
  ctx.req.write('1}');
  ctx.req.end();
  await new Promise((r) => setImmediate(r));
  assert.equal(seen.length, before + 1);
  assert.equal(seen.at(-1)!.toString(), '{"a":1}');
  assert.equal(ctx.phase, 'none');
  assert.equal(ctx.deadlineMs, Infinity);
  assert.equal(ctx.req.listenerCount('data'), 0, 'the shared handlers are removed');
});

test('through the runner: read-body resumes at the stage after it', async () => {
  const ctx = makeContext(gw, { stream: true });
  const before = seen.length;
  run(ctx, 0);
  assert.equal(ctx.next, 1);
  ctx.req.end('{}');
  await new Promise((r) => setImmediate(r));
  assert.equal(seen.length, before + 1);
});

test('an already complete empty body needs no wait', () => {
  const ctx = makeContext(gw, { stream: true });
  ctx.req.complete = true;
  ctx.req.end();
  ctx.req.resume();
  return new Promise<void>((resolve) => {
    ctx.req.once('end', () => {
      assert.equal(readBody(ctx), undefined);
      assert.equal(ctx.rawBody!.length, 0);
      resolve();
    });
  });
});

test('a declared length over the limit is 413 before anything is read', () => {
  const ctx = makeContext(gw, { stream: true, headers: { 'content-length': '17' } });
  assert.throws(() => readBody(ctx), (e: unknown) => (e as { status: number; code: string }).status === 413 && (e as { code: string }).code === 'request_too_large');
});

test('a body growing past the limit is answered 413 and no longer read', async () => {
  const ctx = makeContext(gw, { stream: true });
  const before = seen.length;
  run(ctx, 0);
  ctx.req.write('0123456789');
  ctx.req.write('0123456789');
  await new Promise((r) => setImmediate(r));
  assert.equal(ctx.res.statusCode, 413);
  assert.equal(ctx.res.json().error.code, 'request_too_large');
  assert.equal(ctx.phase, 'none');
  assert.equal(seen.length, before, 'the next stage never ran');
});

test('a stalled body: the deadline answers 408 with connection: close', () => {
  const ctx = makeContext(gw, { stream: true });
  run(ctx, 0);
  onDeadline(ctx);
  assert.equal(ctx.res.statusCode, 408);
  assert.equal(ctx.res.json().error.code, 'request_timeout');
  assert.equal(ctx.res.headers.connection, 'close');
});
