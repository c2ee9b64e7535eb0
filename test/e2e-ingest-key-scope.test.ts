/**
 * A control-plane link stores log records of its own organization only, and their API key id must
 * be a key of that organization too: a record carrying another organization's key id (or an id no
 * key has) is stored with `api_key_id` cleared, counted (`recordsKeyIdCleared` on admin's /health,
 * `svc_admin_records_key_id_cleared_total`) and logged, never lost; a record with one of the
 * organization's own keys, revoked ones included, keeps it. Real processes (admin on a fresh PostgreSQL database, a raw WebSocket link).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey, findKey } from '../admin/resources/api-keys/store.ts';
import { hashApiKey } from '../shared/apikey.ts';
import { logRecord } from './rest-support.ts';
import { startStack, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

test("a record carrying another organization's key id is stored with the key id cleared, counted and logged", async () => {
  const sql = stack.db.sql;
  const own = (await findKey(sql, hashApiKey(stack.apiKey)))!;
  const otherOrg = await createOrganization(sql, 'other tenant');
  const foreign = await createApiKey(sql, otherOrg, 'foreign key');
  const revoked = await createApiKey(sql, own.organizationId, 'revoked since');
  await sql`update api_key set revoked_at = now() where id = ${revoked.id}`;

  const records = [
    logRecord(own.organizationId, { apiKeyId: foreign.id }),
    logRecord(own.organizationId, { apiKeyId: own.keyId }),
    logRecord(own.organizationId, { apiKeyId: revoked.id }),
    logRecord(own.organizationId, { apiKeyId: randomUUID() }),
    logRecord(own.organizationId, { apiKeyId: null }),
  ];
  const ws = new WebSocket(`ws://127.0.0.1:${stack.admin.port}/v1/control-plane`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
  const acks: Array<{ type: string; batchId?: string; stored?: number }> = [];
  ws.on('message', (data) => acks.push(JSON.parse(data.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  try {
    await waitFor(() => acks.some((m) => m.type === 'keys.snapshot'), 5_000);
    const batchId = randomUUID();
    ws.send(JSON.stringify({ type: 'records', batchId, records }));
    await waitFor(() => acks.some((m) => m.batchId === batchId), 5_000);
    assert.deepEqual(acks.find((m) => m.batchId === batchId), { type: 'records.ack', batchId, stored: 5 }, 'every record stored');
  } finally {
    ws.close();
  }

  const rows = await sql<{ id: string; api_key_id: string | null; organization_id: string }[]>`
    select id, api_key_id, organization_id from request_log where id = any(${records.map((r) => r.requestId)}::uuid[])`;
  const keyOf = new Map(rows.map((r) => [r.id, r.api_key_id]));
  assert.equal(rows.length, 5);
  assert.ok(rows.every((r) => r.organization_id === own.organizationId));
  assert.equal(keyOf.get(records[0]!.requestId), null, "the other organization's key id is cleared");
  assert.equal(keyOf.get(records[1]!.requestId), own.keyId, 'its own key id is kept');
  assert.equal(keyOf.get(records[2]!.requestId), revoked.id, 'a revoked key of its own is kept');
  assert.equal(keyOf.get(records[3]!.requestId), null, 'an id no key has is cleared');
  assert.equal(keyOf.get(records[4]!.requestId), null);

  const adminHealth = (await (await fetch(`${stack.adminUrl}/health`)).json()) as { controlPlane: { recordsKeyIdCleared: number } };
  assert.equal(adminHealth.controlPlane.recordsKeyIdCleared, 2);
  const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text();
  assert.match(metrics, /^svc_admin_records_key_id_cleared_total 2$/m);
  const logged = new RegExp(`"level":40[^\\n]*${foreign.id}`);
  await waitFor(() => logged.test(stack.admin.output()), 2_000).catch(() => assert.fail(`the cleared key id is logged:\n${stack.admin.output()}`));
});
