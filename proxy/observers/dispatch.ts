/**
 * Composing the response observers once, and calling their hooks from the response path: plain
 * loops over arrays made at start, so a request with no observer of a hook pays one length check.
 */
import type { RequestContext } from '../pipeline/context.ts';
import type { Observers, ResponseObserver } from './types.ts';

/**
 * The observers in call order, split by hook. Entries that are `false` or `null` (a feature that
 * is off) are left out.
 */
export function defineObservers(list: ReadonlyArray<ResponseObserver | false | null>): Observers {
  const all = list.filter((o): o is ResponseObserver => typeof o === 'object' && o !== null);
  return {
    all,
    start: all.filter((o) => o.onResponseStart),
    chunk: all.filter((o) => o.onChunk),
    finish: all.filter((o) => o.onFinish),
  };
}

/** The provider's answer starts (see {@link ResponseObserver.onResponseStart}); `ctx.streamed` is set. */
export function responseStarted(ctx: RequestContext, streamed: boolean): void {
  ctx.streamed = streamed;
  const list = ctx.gw.observers.start;
  for (let i = 0; i < list.length; i++) list[i]!.onResponseStart!(ctx, streamed);
}

/** A piece of the body reached the client (see {@link ResponseObserver.onChunk}). */
export function responseChunk(ctx: RequestContext, chunk: Buffer): void {
  const list = ctx.gw.observers.chunk;
  for (let i = 0; i < list.length; i++) list[i]!.onChunk!(ctx, chunk);
}

/** True when some observer reads body pieces (so a text answer is worth turning into a Buffer). */
export function observesChunks(ctx: RequestContext): boolean {
  return ctx.gw.observers.chunk.length > 0;
}

/** The response is over (see {@link ResponseObserver.onFinish}). */
export function responseFinished(ctx: RequestContext): void {
  const list = ctx.gw.observers.finish;
  for (let i = 0; i < list.length; i++) list[i]!.onFinish!(ctx);
}
