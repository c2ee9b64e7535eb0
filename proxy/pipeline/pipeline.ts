/**
 * The pipeline runner: a request's stages are one array composed at start (gateway.ts) and an index
 * into it, not a chain of promises or closures (as Koa composes its middleware once, and a request
 * only gets a context).
 *
 * A stage is a module-level function of the context and returns:
 *  - nothing: it is done, and the next stage runs at once (the common case);
 *  - a Promise: the run suspends and resumes at the next stage once it fulfils; a rejection is
 *    answered by `fail` unless the request was answered meanwhile (the rare async paths: a Redis
 *    rate-limit check, a managed prompt, a signing provider; only these allocate a closure);
 *  - {@link SUSPEND}: it waits on events through shared handlers and calls {@link resume} itself
 *    (reading the body).
 * A thrown error stops the run and is answered by `fail`. Router retries enter the same array again
 * at the choose-provider stage (or translate, when the client pinned the provider).
 */
import type { RequestContext } from './context.ts';
import { fail } from './fail.ts';

/** Returned by a stage that waits on events and will call {@link resume} itself. */
export const SUSPEND: unique symbol = Symbol('svc.pipeline.suspend');

/**
 * One step of the request path.
 * @throws {import('../errors.ts').GatewayError} to answer the client with that error (any other
 *   error is answered as a 500 and logged).
 */
export type Stage = (ctx: RequestContext) => void | Promise<unknown> | typeof SUSPEND;

/** The composed stages and where retries enter them. */
export interface Pipeline {
  readonly stages: readonly Stage[];
  /** Index of the stage a router retry starts at (choose provider); -1 when absent. */
  readonly retryAt: number;
  /** Index a retry starts at when the client pinned the provider (translate); -1 when absent. */
  readonly pinnedRetryAt: number;
}

/**
 * Composes the stage list once. Entries that are `false` or `null` (a feature that is off) are left
 * out, so a request never pays for a stage that would do nothing.
 * @param entry the stages retries enter at: `retry` (choose provider), `pinnedRetry` (translate).
 */
export function definePipeline(stages: ReadonlyArray<Stage | false | null>, entry: { retry?: Stage; pinnedRetry?: Stage } = {}): Pipeline {
  const list = stages.filter((s): s is Stage => typeof s === 'function');
  return {
    stages: list,
    retryAt: entry.retry ? list.indexOf(entry.retry) : -1,
    pinnedRetryAt: entry.pinnedRetry ? list.indexOf(entry.pinnedRetry) : -1,
  };
}

/**
 * Runs the stages of `ctx` from index `from` until one suspends, throws, or the last returns.
 * Never throws: errors are answered by `fail`.
 */
export function run(ctx: RequestContext, from: number): void {
  const stages = ctx.gw.pipeline.stages;
  let i = from;
  try {
    while (i < stages.length) {
      const out = stages[i++]!(ctx);
      if (out === undefined) continue;
      ctx.next = i;
      if (out !== SUSPEND) out.then(() => resume(ctx), (err: unknown) => rejected(ctx, err));
      return;
    }
  } catch (err) {
    fail(ctx, err);
  }
}

/**
 * Continues a suspended run at the stage after the one that suspended (`ctx.next`); nothing
 * happens when the response is already over (the client left while the stage waited) or already
 * answered (server.request-timeout passed while the stage waited: server/request-timeout.ts).
 */
export function resume(ctx: RequestContext): void {
  if (ctx.finished || ctx.res.headersSent) return;
  run(ctx, ctx.next);
}

/**
 * A stage's promise rejected: answered by `fail`, unless the response is already over or answered
 * (as {@link resume}): server/request-timeout.ts may have answered 408 while the stage waited, and a
 * second `fail` would overwrite the status and error the log records and log an error nobody got.
 */
function rejected(ctx: RequestContext, err: unknown): void {
  if (ctx.finished || ctx.res.headersSent) return;
  fail(ctx, err);
}
