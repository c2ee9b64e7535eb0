/**
 * REST API: names a caller chooses that are written into a plain object on the way (a score's name, a managed
 * prompt's input name) and are named like `Object.prototype`'s `__proto__`: a name like any other, stored and read
 * back, never swallowed by the prototype's setter (a score named "__proto__" was answered 404 "request not found",
 * and a dataset row lost its "__proto__" input). Real HTTP on a fresh database (test/rest-support.ts).
 * Run: node --import tsx --test test/rest-prototype-names.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, chatBody, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
let ids: string[] = [];

before(async () => {
  env = await startRest();
  const created = (await call(env, 'POST', '/v1/prompt-2025', { name: 'proto', tags: [], promptBody: chatBody() })).body;
  const inputs = JSON.parse('{"__proto__": "x", "constructor": "y", "name": "Ada"}') as Record<string, unknown>;
  ids = await ingest(env, env.orgA, [
    logRecord(env.orgA, { userId: 'proto-1' }),
    logRecord(env.orgA, { userId: 'proto-2', prompt: { promptId: created.id, versionId: created.versionId, version: '0.0', environment: 'production', inputs } }),
  ]);
});
after(() => env?.close());

/** The own members of a parsed JSON object, as [name, value] pairs sorted by name. */
const members = (o: Record<string, unknown>): Array<[string, unknown]> => Object.keys(o).sort().map((k) => [k, o[k]]);

describe('scores', () => {
  test('POST /v1/evals/{id} with the name "__proto__" stores it', async () => {
    const r = await call(env, 'POST', `/v1/evals/${ids[0]}`, { name: '__proto__', score: 0.5 });
    assert.equal(r.status, 200, r.text);
    const rec = await call(env, 'GET', `/v1/request/${ids[0]}`);
    assert.deepEqual(members(rec.body.data.scores), [['__proto__', 0.5]]);
  });

  test('POST /v1/request/{id}/score with "__proto__" and "constructor" stores both', async () => {
    const r = await call(env, 'POST', `/v1/request/${ids[0]}/score`, '{"scores": {"__proto__": 1, "constructor": true, "plain": 2}}');
    assert.equal(r.status, 200, r.text);
    const rec = await call(env, 'GET', `/v1/request/${ids[0]}`);
    assert.deepEqual(members(rec.body.data.scores), [['__proto__', 1], ['constructor', 1], ['plain', 2]]);
  });
});

describe('dataset rows', () => {
  test('a prompt input named "__proto__" is among the row\'s inputs', async () => {
    const made = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'proto', filter: { request: { user_id: { equals: 'proto-2' } } } });
    assert.equal(made.status, 200, made.text);
    const rows = await call(env, 'POST', `/v1/experiment/dataset/${made.body.data.datasetId}/inputs/query`, {});
    assert.equal(rows.status, 200, rows.text);
    assert.equal(rows.body.data.length, 1, rows.text);
    assert.deepEqual(members(rows.body.data[0].inputs), [['__proto__', 'x'], ['constructor', 'y'], ['name', 'Ada']]);
  });
});
