/**
 * The pipeline runner: stages run in order; a stage that suspends (SUSPEND or a Promise) resumes at
 * the next index; a thrown error or a rejection stops the run and is answered by fail; the
 * composition leaves out stages of features that are off.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { requestPipeline } from '../proxy/gateway.ts';
import { fail } from '../proxy/pipeline/fail.ts';
import { definePipeline, resume, run, SUSPEND, type Stage } from '../proxy/pipeline/pipeline.ts';
import { authenticate } from '../proxy/stages/authenticate.ts';
import { chooseProvider } from '../proxy/stages/choose-provider.ts';
import { rateLimit } from '../proxy/stages/rate-limit.ts';
import { translate } from '../proxy/stages/translate.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

const order: string[] = [];
let release: (() => void) | null = null;
let rejectNext: ((e: unknown) => void) | null = null;

const a: Stage = () => void order.push('a');
const waits: Stage = () => {
  order.push('waits');
  return SUSPEND;
};
const promised: Stage = () => {
  order.push('promised');
  return new Promise<void>((resolve, reject) => {
    release = resolve;
    rejectNext = reject;
  });
};
const b: Stage = () => void order.push('b');
const throws: Stage = () => {
  order.push('throws');
  throw new GatewayError(418, 'no tea', 'invalid_request_error', 'teapot');
};
const never: Stage = () => void order.push('never');

const runtimes: ReturnType<typeof makeRuntime>[] = [];
function runtime(stages: Stage[]) {
  const gw = makeRuntime({ pipeline: definePipeline(stages) });
  runtimes.push(gw);
  return gw;
}
after(async () => {
  for (const gw of runtimes) await closeRuntime(gw);
});

test('synchronous stages run in order, all in one call', () => {
  order.length = 0;
  const ctx = makeContext(runtime([a, b, a]));
  run(ctx, 0);
  assert.deepEqual(order, ['a', 'b', 'a']);
  assert.equal(ctx.res.statusCode, 0, 'nothing answered');
});

test('SUSPEND stops the run; resume continues at the stage after the one that suspended', () => {
  order.length = 0;
  const ctx = makeContext(runtime([a, waits, b, a]));
  run(ctx, 0);
  assert.deepEqual(order, ['a', 'waits']);
  assert.equal(ctx.next, 2);
  resume(ctx);
  assert.deepEqual(order, ['a', 'waits', 'b', 'a']);
});

test('a Promise suspends the run; it resumes at the next index once fulfilled', async () => {
  order.length = 0;
  const ctx = makeContext(runtime([promised, b, waits, a]));
  run(ctx, 0);
  assert.deepEqual(order, ['promised']);
  release!();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['promised', 'b', 'waits']);
  assert.equal(ctx.next, 3);
});

test('a thrown error stops the run and is answered by fail in the kind\'s error shape', () => {
  order.length = 0;
  const ctx = makeContext(runtime([a, throws, never]));
  run(ctx, 0);
  assert.deepEqual(order, ['a', 'throws']);
  assert.equal(ctx.res.statusCode, 418);
  assert.deepEqual(ctx.res.json(), { error: { message: 'no tea', type: 'invalid_request_error', param: null, code: 'teapot' } });
  assert.equal(ctx.res.headers['svc-id'], ctx.id);
  assert.equal(ctx.status, 418);
  assert.equal(ctx.errorCode, 'teapot');
});

test('a rejection is answered by fail; an unexpected error is a logged 500', async () => {
  order.length = 0;
  const lines: string[] = [];
  const gw = makeRuntime({ pipeline: definePipeline([promised, never]), lines });
  runtimes.push(gw);
  const ctx = makeContext(gw);
  run(ctx, 0);
  rejectNext!(new TypeError('boom'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['promised']);
  assert.equal(ctx.res.statusCode, 500);
  assert.equal(ctx.res.json().error.code, 'internal_error');
  assert.ok(lines.some((l) => l.includes('unexpected error in the request path') && l.includes(ctx.id)));
});

test('a rejection after the request was answered (server.request-timeout\'s 408) changes nothing', async () => {
  // request-timeout.ts answers through fail while a stage's promise (a Redis read) is pending; its
  // later rejection must not overwrite the outcome the log records nor log an unexpected error.
  order.length = 0;
  const lines: string[] = [];
  const gw = makeRuntime({ pipeline: definePipeline([promised, never]), lines });
  runtimes.push(gw);
  const ctx = makeContext(gw);
  run(ctx, 0);
  fail(ctx, new GatewayError(408, 'the request took too long', 'invalid_request_error', 'request_timeout'));
  rejectNext!(new TypeError('redis went away'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['promised']);
  assert.equal(ctx.res.statusCode, 408);
  assert.equal(ctx.status, 408);
  assert.equal(ctx.errorCode, 'request_timeout');
  assert.equal(ctx.error, 'the request took too long');
  assert.ok(!lines.some((l) => l.includes('unexpected error in the request path')), 'no spurious error line');
});

test('a run suspended when the client left does not resume', async () => {
  order.length = 0;
  const ctx = makeContext(runtime([promised, never]));
  run(ctx, 0);
  ctx.finished = true;
  release!();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['promised']);
});

test('the composition: no authenticate without keys, no rate-limit without a limiter; retries enter at choose-provider or translate', () => {
  const none = requestPipeline('none', null);
  assert.ok(!none.stages.includes(authenticate));
  assert.ok(!none.stages.includes(rateLimit));
  const limiter = { check: () => ({ allowed: true, limit: Infinity, remaining: Infinity, resetAfterMs: 0, retryAfterMs: 0, policy: 'none' }), storeState: () => ({ store: 'in-memory' as const, failMode: 'open' as const, available: true }), close: async () => {} };
  const auth = requestPipeline('auth', limiter);
  assert.deepEqual(auth.stages.map((s) => s.name), ['route', 'authenticate', 'rateLimit', 'storedResponse', 'readBody', 'validate', 'resolvePrompt', 'responsesHistory', 'tokenLimit', 'chooseProvider', 'previousResponseProvider', 'countTokensLocally', 'cacheLookup', 'translate', 'forward']);
  assert.equal(auth.stages[auth.retryAt], chooseProvider);
  assert.equal(auth.stages[auth.pinnedRetryAt], translate);
  assert.equal(none.stages[none.retryAt], chooseProvider);
});
