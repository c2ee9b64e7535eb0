/**
 * `SVC_BOOTSTRAP_API_KEY` on an install that already has its organization: the key is created in
 * that organization, so the proxy `npm start` links with the control-plane key accepts it; with
 * several organizations admin refuses to guess and stops at start, naming the variable. Real
 * processes as `npm start` runs them (admin with `SVC_KEY_FILE`, the proxy with the key admin wrote).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOrganization } from '../admin/organizations.ts';
import { findKey } from '../admin/resources/api-keys/store.ts';
import { generateApiKey, hashApiKey } from '../shared/apikey.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { defaultConfig, PROVIDER_KEYS, startLinkedProxy, startProcess, stopProcess, writeConfig, type Started } from './support/stack.ts';

describe('SVC_BOOTSTRAP_API_KEY after the first start', () => {
  let db: TestDatabase;
  let stub: Started;
  let configFile: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bootstrap-'));
  const keyFile = path.join(dir, 'control-plane.key');
  const running: Started[] = [];
  const bootstrapKey = generateApiKey();

  const startAdmin = async (env: NodeJS.ProcessEnv = {}) => {
    const p = await startProcess('admin/main.ts', { DATABASE_URL: db.url, ADMIN_PORT: '0', SVC_KEY_FILE: keyFile, ...env }, 'admin.ready', ['--config', configFile]);
    running.push(p);
    return p;
  };

  before(async () => {
    db = await createTestDatabase();
    stub = await startProcess('test/support/stub-upstream.ts', { STUB_PORT: '0' }, 'stub.ready');
    configFile = writeConfig(defaultConfig(`http://127.0.0.1:${stub.port}`));
    // The first start, as `npm start` makes it: an organization, the printed key, the control-plane key.
    const first = await startAdmin();
    assert.match(first.output(), /Your API key/);
    await stopProcess(first);
  });
  after(async () => {
    for (const p of running.reverse()) await stopProcess(p);
    await stopProcess(stub);
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the key is created in the existing organization: REST and the proxy linked with the control-plane key accept it', async () => {
    const admin = await startAdmin({ SVC_BOOTSTRAP_API_KEY: bootstrapKey });
    const proxy = await startLinkedProxy({ adminPort: admin.port, apiKey: readFileSync(keyFile, 'utf8').trim(), configFile, env: PROVIDER_KEYS });
    running.push(proxy);

    const res = await fetch(`${proxy.url}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bootstrapKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    const [{ count }] = await db.sql<{ count: number }[]>`select count(*)::int as count from organization`;
    assert.equal(count, 1, 'no new organization');
    const listed = (await (await fetch(`http://127.0.0.1:${admin.port}/v1/api-keys`, { headers: { authorization: `Bearer ${bootstrapKey}` } })).json()) as { data: Array<{ name: string }> };
    assert.deepEqual(listed.data.map((k) => k.name).sort(), ['bootstrap', 'control-plane', 'default']);
    await stopProcess(proxy);
    await stopProcess(admin);
  });

  test('with several organizations a new key is refused at start, naming the variable; an existing one is still accepted', async () => {
    assert.ok(await findKey(db.sql, hashApiKey(bootstrapKey)), 'the previous test made the bootstrap key');
    await createOrganization(db.sql, 'a second tenant');

    const refused = generateApiKey();
    await assert.rejects(startAdmin({ SVC_BOOTSTRAP_API_KEY: refused }), (err: Error) => {
      assert.match(err.message, /exited with code 1 before it was ready/);
      assert.match(err.message, /SVC_BOOTSTRAP_API_KEY[^\n]*2 organizations/);
      return true;
    });
    assert.equal(await findKey(db.sql, hashApiKey(refused)), null, 'no key was created');
    // The key that exists needs no choice: admin starts.
    await stopProcess(await startAdmin({ SVC_BOOTSTRAP_API_KEY: bootstrapKey }));
  });
});
