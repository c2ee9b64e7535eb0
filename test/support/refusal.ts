/**
 * The translator tests' checks of what a translation refused or removed: a refused translation (a 400 GatewayError), a
 * client call the gateway answered 400, and the member paths of a `Svc-Removed-Members` header.
 */
import assert from 'node:assert/strict';
import { GatewayError } from '../../proxy/errors.ts';

/**
 * Runs `fn`, which must throw a 400 GatewayError (a translation refusing a member), and returns it
 * so the caller can check its `param` and message.
 * @throws an assertion error when `fn` returns or throws anything else.
 */
export function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, `a GatewayError, got ${String(err)}`);
    assert.equal(err.status, 400);
    return err;
  }
  assert.fail('expected a 400');
}

/**
 * Awaits `fn`, a client call (the `openai` SDK's) that must fail with HTTP 400, and returns its error so the caller can
 * check its `param` and message.
 * @throws an assertion error when `fn` resolves or fails otherwise.
 */
export async function clientRefusal(fn: () => Promise<unknown>): Promise<Record<string, any>> {
  try {
    await fn();
  } catch (err) {
    const e = err as Record<string, any>;
    assert.equal(e.status, 400, `a 400, got ${String(err)}`);
    return e;
  }
  assert.fail('expected a 400');
}

/** The paths of a `Svc-Removed-Members` header (comma-separated, percent-encoded); none when it is absent. */
export function removedPaths(header: string | null): string[] {
  return header ? header.split(', ').map((p) => decodeURIComponent(p)) : [];
}
