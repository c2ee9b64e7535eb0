/** Stage authenticate: the Bearer key's hash looked up in the control plane's key set. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { hashApiKey } from '../shared/apikey.ts';
import { GatewayError } from '../proxy/errors.ts';
import { authenticate } from '../proxy/stages/authenticate.ts';
import { closeRuntime, fakeControlPlane, makeContext, makeRuntime } from './support/stage-context.ts';

const KEY = 'sk-svc-good-key-0123456789';
const entry = { hash: hashApiKey(KEY), keyId: 'key-1', organizationId: 'org-1' };
const controlPlane = fakeControlPlane({ keys: { [entry.hash]: entry } });
const gw = makeRuntime({ doc: { svc: { features: 'auth' } }, controlPlane });
after(() => closeRuntime(gw));

const refusal = (status: number, code: string) => (e: unknown) => e instanceof GatewayError && e.status === status && e.code === code;

test('a missing key is 401 invalid_api_key, and nothing is marked used', () => {
  assert.throws(() => authenticate(makeContext(gw, {})), refusal(401, 'invalid_api_key'));
  assert.throws(() => authenticate(makeContext(gw, { headers: { Authorization: 'Basic abc' } })), refusal(401, 'invalid_api_key'));
  assert.equal(controlPlane.used.length, 0);
});

test('an unknown key is 401 invalid_api_key', () => {
  const ctx = makeContext(gw, { headers: { Authorization: 'Bearer sk-svc-other' } });
  assert.throws(() => authenticate(ctx), (e: unknown) => refusal(401, 'invalid_api_key')(e) && (e as Error).message === 'invalid API key');
  assert.equal(ctx.key, null);
});

test('a known key: the entry and its hash are on the context, and the key is marked used', () => {
  const ctx = makeContext(gw, { headers: { Authorization: `Bearer ${KEY}` } });
  authenticate(ctx);
  assert.equal(ctx.key, entry);
  assert.equal(ctx.keyHash, entry.hash);
  assert.deepEqual(controlPlane.used, [entry]);
});

test('before the first key snapshot every key is refused: 503 auth_not_ready with Retry-After', async () => {
  const notReady = makeRuntime({ doc: { svc: { features: 'auth' } }, controlPlane: fakeControlPlane({ ready: false, keys: { [entry.hash]: entry } }) });
  try {
    assert.throws(
      () => authenticate(makeContext(notReady, { headers: { Authorization: `Bearer ${KEY}` } })),
      (e: unknown) => refusal(503, 'auth_not_ready')(e) && (e as GatewayError).headers['retry-after'] === '1',
    );
  } finally {
    await closeRuntime(notReady);
  }
});
