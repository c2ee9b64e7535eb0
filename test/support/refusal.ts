/** The translator tests' check of a refused translation. */
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
