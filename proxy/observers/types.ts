/**
 * Response observers: what watches a response without changing it (the metrics, the access-log
 * line, the request log record; a cache writer and usage counters next). Each is a module-level
 * object; the gateway composes the list once at start, and the response path calls the hooks in
 * that order (./dispatch.ts).
 */
import type { RequestContext } from '../pipeline/context.ts';

/** One response observer. Hooks are optional; a hook must not throw (it runs outside the stages). */
export interface ResponseObserver {
  /** For logs and tests. */
  readonly name: string;
  /**
   * The provider's answer is about to be sent to the client (status and headers decided, no body
   * byte written): `streamed` is true for an SSE stream. Not called when the gateway answers an
   * error of its own.
   */
  onResponseStart?(ctx: RequestContext, streamed: boolean): void;
  /** A piece of the response body as it reaches the client (an OpenAI-format stream, or JSON). */
  onChunk?(ctx: RequestContext, chunk: Buffer): void;
  /**
   * The response is over or the client left: once per request, after `ctx.endMs`,
   * `ctx.clientClosed` and `ctx.outcomeStatus` are set.
   */
  onFinish?(ctx: RequestContext): void;
}

/** The composed observers, split by hook so each call site loops only over those that listen. */
export interface Observers {
  readonly all: readonly ResponseObserver[];
  readonly start: readonly ResponseObserver[];
  readonly chunk: readonly ResponseObserver[];
  readonly finish: readonly ResponseObserver[];
}
