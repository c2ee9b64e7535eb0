/**
 * The filter-tree compiler (admin/filter.ts) through `POST /v1/request/query` on a fresh database:
 * every field and operator, several fields and operators per leaf, nesting, the depth limit,
 * validation messages, injection attempts in every string value (correct, usually empty, results
 * and no value in the SQL text), and a fast-check run comparing the SQL results with an in-memory
 * model of the documented semantics and asserting that no filter, however malformed, yields a 500.
 * Run: node --import tsx --test test/rest-filter.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { hashApiKey } from '../shared/apikey.ts';
import { checkFilter, compileFilter, MAX_FILTER_DEPTH, parseIsoTimestamp, type FilterNode } from '../admin/filter.ts';
import { isUuid } from '../admin/validation.ts';
import { assertDocumented, assertError, call, chatBody, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;

/** In-memory copy of a stored request, as the model evaluates it. */
interface Rec {
  name: string;
  id: string;
  org: string;
  prompt: string | null;
  created: number;
  user: string | null;
  authHash: string | null;
  model: string | null;
  modelOverride: string | null;
  path: string;
  promptId: string | null;
  pv: { id: string; prompt_id: string; major: number; minor: number } | null;
}
const recs: Rec[] = [];
const byId = new Map<string, string>();
let P1 = '';
let P2 = '';
let V00 = '';
let V01 = '';
let V10 = '';

before(async () => {
  env = await startRest();
  const p1 = (await call(env, 'POST', '/v1/prompt-2025', { name: 'p1', tags: [], promptBody: chatBody() })).body;
  P1 = p1.id;
  V00 = p1.versionId;
  V01 = (await call(env, 'POST', '/v1/prompt-2025/update', { promptId: P1, promptVersionId: V00, newMajorVersion: false, commitMessage: 'm', promptBody: chatBody() })).body.id;
  const p2 = (await call(env, 'POST', '/v1/prompt-2025', { name: 'p2', tags: [], promptBody: chatBody() })).body;
  P2 = p2.id;
  V10 = (await call(env, 'POST', '/v1/prompt-2025/update', { promptId: P2, promptVersionId: p2.versionId, newMajorVersion: true, commitMessage: 'm', promptBody: chatBody() })).body.id;
  const [keyRow] = await env.db.sql<{ id: string }[]>`select id from api_key where organization_id = ${env.orgA}`;
  const at = (d: string) => Date.parse(d);
  const promptRef = (promptId: string, versionId: string, version: string) => ({ promptId, versionId, version, environment: null, inputs: {} });
  const specs: Array<{ name: string; org: string; over: Parameters<typeof logRecord>[1]; pv: Rec['pv']; authHash?: string }> = [
    {
      name: 'r1',
      org: env.orgA,
      over: { createdAt: at('2025-02-01T00:00:00Z'), userId: 'alice', prompt_text: 'What is the capital of France?', prompt: promptRef(P1, V00, '0.0') },
      pv: { id: V00, prompt_id: P1, major: 0, minor: 0 },
    },
    {
      name: 'r2',
      org: env.orgA,
      over: {
        createdAt: at('2025-02-02T00:00:00Z'),
        userId: 'bob',
        requestModel: 'anthropic/claude-3-5-sonnet',
        modelOverride: 'gpt-4o',
        prompt_text: 'Tell me 100% about under_scores',
        prompt: promptRef(P1, V01, '0.1'),
      },
      pv: { id: V01, prompt_id: P1, major: 0, minor: 1 },
    },
    {
      name: 'r3',
      org: env.orgA,
      over: { createdAt: at('2025-02-03T00:00:00Z'), userId: null, requestModel: 'openai/gpt-4o', apiKeyId: keyRow!.id, prompt_text: "O'Reilly'; drop table request_log; -- \\ back" },
      pv: null,
      authHash: hashApiKey(env.keyA),
    },
    {
      name: 'r4',
      org: env.orgA,
      over: {
        createdAt: at('2025-02-04T00:00:00Z'),
        userId: 'carol',
        path: '/v1/embeddings',
        requestModel: 'openai/text-embedding-3-small',
        endpoint: 'embeddings',
        requestBody: { model: 'openai/text-embedding-3-small', input: 'embed me' },
        responseBody: { object: 'list', model: 'text-embedding-3-small', data: [{ object: 'embedding', index: 0, embedding: [0.1] }], usage: { prompt_tokens: 2, total_tokens: 2 } },
        prompt: promptRef(P2, V10, '1.0'),
      },
      pv: { id: V10, prompt_id: P2, major: 1, minor: 0 },
    },
    { name: 'rB', org: env.orgB, over: { createdAt: at('2025-02-01T00:00:00Z'), userId: 'alice', prompt_text: 'What is the capital of France?' }, pv: null },
  ];
  for (const s of specs) {
    const rec = logRecord(s.org, s.over);
    await ingest(env, s.org, [rec]);
    const body = rec.requestBody as { messages?: Array<{ role: string; content: string }>; input?: string };
    recs.push({
      name: s.name,
      id: rec.requestId,
      org: s.org,
      prompt: body.messages ? body.messages.at(-1)!.content : (body.input ?? null),
      created: rec.createdAt,
      user: rec.userId,
      authHash: s.authHash ?? null,
      // What the record shows and filters match: the model without its `<provider>/` prefix.
      model: rec.requestModel === null ? null : rec.requestModel.replace(/^(openai|anthropic)\//, ''),
      modelOverride: rec.modelOverride,
      path: rec.path,
      promptId: rec.prompt?.promptId ?? null,
      pv: s.pv,
    });
    byId.set(rec.requestId, s.name);
  }
});
after(async () => {
  await env?.close();
});

/** Names of the requests `filter` matches for organization A (or B with `key`), sorted. */
async function names(filter: unknown, key?: string): Promise<string[]> {
  const r = await call(env, 'POST', '/v1/request/query', { filter, limit: 10_000 }, key);
  assert.equal(r.status, 200, `${JSON.stringify(filter)} → ${r.status} ${r.text.slice(0, 300)}`);
  return r.body.data.map((x: { request_id: string }) => byId.get(x.request_id) ?? '?').sort();
}

const leaf = (field: string, op: string, value: unknown): FilterNode => ({ request: { [field]: { [op]: value } } }) as FilterNode;
const pvLeaf = (field: string, op: string, value: unknown): FilterNode => ({ prompts_versions: { [field]: { [op]: value } } }) as FilterNode;

describe('filter: request text fields', () => {
  test('prompt: every text operator', async () => {
    assert.deepEqual(await names(leaf('prompt', 'equals', 'What is the capital of France?')), ['r1']);
    assert.deepEqual(await names(leaf('prompt', 'not-equals', 'What is the capital of France?')), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('prompt', 'like', 'What%')), ['r1']);
    assert.deepEqual(await names(leaf('prompt', 'like', 'what%')), [], 'like is case-sensitive');
    assert.deepEqual(await names(leaf('prompt', 'like', '_mbed me')), ['r4']);
    assert.deepEqual(await names(leaf('prompt', 'ilike', 'what%')), ['r1']);
    assert.deepEqual(await names(leaf('prompt', 'like', '%100\\%%')), ['r2'], 'like patterns keep their escapes');
    assert.deepEqual(await names(leaf('prompt', 'contains', 'CAPITAL')), ['r1'], 'contains is case-insensitive');
    assert.deepEqual(await names(leaf('prompt', 'contains', '100%')), ['r2']);
    assert.deepEqual(await names(leaf('prompt', 'contains', '%')), ['r2'], '% in contains is literal');
    assert.deepEqual(await names(leaf('prompt', 'contains', '_')), ['r2', 'r3'], '_ in contains is literal (r3 mentions request_log)');
    assert.deepEqual(await names(leaf('prompt', 'contains', 'ab_ut')), [], '_ matches only itself');
    assert.deepEqual(await names(leaf('prompt', 'contains', '\\')), ['r3'], '\\ in contains is literal');
    assert.deepEqual(await names(leaf('prompt', 'not-contains', 'capital')), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('prompt', 'contains', 'embed')), ['r4'], 'the `input` of an embeddings request');
  });

  test('model: every text operator matches the model as the record shows it, without the provider prefix', async () => {
    // r1 was sent as openai/gpt-4o-mini, r2 as anthropic/claude-3-5-sonnet, r3 as openai/gpt-4o, r4 as openai/text-embedding-3-small.
    const shown: Record<string, string> = {};
    for (const rec of recs.filter((r) => r.org === env.orgA)) {
      const r = await call(env, 'GET', `/v1/request/${rec.id}`);
      shown[rec.name] = r.body.data.request_model;
      assert.deepEqual(await names(leaf('model', 'equals', r.body.data.request_model)), [rec.name], `equals what ${rec.name} shows`);
    }
    assert.deepEqual(shown, { r1: 'gpt-4o-mini', r2: 'claude-3-5-sonnet', r3: 'gpt-4o', r4: 'text-embedding-3-small' });
    assert.deepEqual(await names(leaf('model', 'equals', 'gpt-4o-mini')), ['r1']);
    assert.deepEqual(await names(leaf('model', 'equals', 'openai/gpt-4o-mini')), [], 'the prefix is not part of the model');
    assert.deepEqual(await names(leaf('model', 'not-equals', 'gpt-4o-mini')), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('model', 'like', 'gpt-4o%')), ['r1', 'r3']);
    assert.deepEqual(await names(leaf('model', 'like', 'openai/%')), []);
    assert.deepEqual(await names(leaf('model', 'ilike', 'CLAUDE-%')), ['r2']);
    assert.deepEqual(await names(leaf('model', 'contains', 'GPT-4O')), ['r1', 'r3']);
    assert.deepEqual(await names(leaf('model', 'not-contains', 'gpt')), ['r2', 'r4']);
  });

  test('user_id, model, modelOverride, path; NULL matches only the negative operators', async () => {
    assert.deepEqual(await names(leaf('user_id', 'equals', 'alice')), ['r1']);
    assert.deepEqual(await names(leaf('user_id', 'not-equals', 'alice')), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('user_id', 'not-contains', 'o')), ['r1', 'r3']);
    assert.deepEqual(await names(leaf('user_id', 'like', '%')), ['r1', 'r2', 'r4']);
    assert.deepEqual(await names(leaf('model', 'equals', 'gpt-4o')), ['r3']);
    assert.deepEqual(await names(leaf('model', 'ilike', 'GPT-4O%')), ['r1', 'r3']);
    assert.deepEqual(await names(leaf('modelOverride', 'equals', 'gpt-4o')), ['r2']);
    assert.deepEqual(await names(leaf('modelOverride', 'not-equals', 'gpt-4o')), ['r1', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('path', 'contains', 'embeddings')), ['r4']);
    assert.deepEqual(await names(leaf('path', 'equals', '/v1/chat/completions')), ['r1', 'r2', 'r3']);
  });

  test('id, org_id, prompt_id (uuids), auth_hash, node_id, country_code', async () => {
    const r1 = recs.find((r) => r.name === 'r1')!;
    assert.deepEqual(await names(leaf('id', 'equals', r1.id)), ['r1']);
    assert.deepEqual(await names(leaf('id', 'equals', r1.id.toUpperCase())), ['r1']);
    assert.deepEqual(await names(leaf('id', 'not-equals', r1.id)), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('id', 'like', `${r1.id.slice(0, 13)}%`)), ['r1']);
    assert.deepEqual(await names(leaf('id', 'equals', 'not-a-uuid')), []);
    assert.deepEqual(await names(leaf('id', 'not-equals', 'not-a-uuid')), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('org_id', 'equals', env.orgA)), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('org_id', 'equals', env.orgB)), [], 'the organization condition is always on top');
    assert.deepEqual(await names(leaf('prompt_id', 'equals', P1)), ['r1', 'r2']);
    assert.deepEqual(await names(leaf('prompt_id', 'not-equals', P1)), ['r3', 'r4']);
    assert.deepEqual(await names(leaf('prompt_id', 'contains', P2.slice(4, 12).toUpperCase())), ['r4']);
    assert.deepEqual(await names(leaf('auth_hash', 'equals', hashApiKey(env.keyA))), ['r3']);
    assert.deepEqual(await names(leaf('node_id', 'equals', 'n1')), []);
    assert.deepEqual(await names(leaf('node_id', 'not-equals', 'n1')), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('country_code', 'ilike', '%')), []);
    assert.deepEqual(await names(leaf('country_code', 'not-contains', 'US')), ['r1', 'r2', 'r3', 'r4']);
  });
});

describe('filter: timestamps and numbers', () => {
  test('created_at: every timestamp operator, offsets and dates', async () => {
    assert.deepEqual(await names(leaf('created_at', 'equals', '2025-02-02T00:00:00Z')), ['r2']);
    assert.deepEqual(await names(leaf('created_at', 'equals', '2025-02-02T01:00:00+01:00')), ['r2']);
    assert.deepEqual(await names(leaf('created_at', 'equals', '2025-02-02')), ['r2'], 'a date is its midnight UTC');
    assert.deepEqual(await names(leaf('created_at', 'equals', '2025-02-02T00:00:00.000000')), ['r2'], 'no offset means UTC');
    assert.deepEqual(await names(leaf('created_at', 'gte', '2025-02-02T00:00:00Z')), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('created_at', 'gt', '2025-02-02T00:00:00Z')), ['r3', 'r4']);
    assert.deepEqual(await names(leaf('created_at', 'lte', '2025-02-02T00:00:00Z')), ['r1', 'r2']);
    assert.deepEqual(await names(leaf('created_at', 'lt', '2025-02-02T00:00:00Z')), ['r1']);
    assert.deepEqual(await names(leaf('created_at', 'gt', '0001-01-01T00:00:00+05:00')), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await names(leaf('created_at', 'lt', '9999-12-31T23:59:59-14:00')), ['r1', 'r2', 'r3', 'r4']);
  });

  test('invalid timestamps are 400 naming the path', async () => {
    for (const bad of ['yesterday', '2025-02-30', '2025-13-01', '2025-02-01T24:00:00Z', '0000-01-01', '2025-02-01T10:00:00+25:00', '', '2025-2-1', 20250201]) {
      const r = await call(env, 'POST', '/v1/request/query', { filter: { left: 'all', operator: 'and', right: leaf('created_at', 'gte', bad) } });
      assertError(r, 400, /filter\.right\.request\.created_at\.gte/);
    }
  });

  test('prompts_versions: every number operator, id and prompt_v2', async () => {
    assert.deepEqual(await names(pvLeaf('major_version', 'equals', 0)), ['r1', 'r2']);
    assert.deepEqual(await names(pvLeaf('major_version', 'not-equals', 0)), ['r4'], 'requests without a version never match');
    assert.deepEqual(await names(pvLeaf('major_version', 'gte', 1)), ['r4']);
    assert.deepEqual(await names(pvLeaf('major_version', 'gt', 0.5)), ['r4']);
    assert.deepEqual(await names(pvLeaf('minor_version', 'lte', 0)), ['r1', 'r4']);
    assert.deepEqual(await names(pvLeaf('minor_version', 'lt', 1)), ['r1', 'r4']);
    assert.deepEqual(await names(pvLeaf('minor_version', 'equals', 1e300)), []);
    assert.deepEqual(await names(pvLeaf('minor_version', 'gt', -1e300)), ['r1', 'r2', 'r4']);
    assert.deepEqual(await names(pvLeaf('id', 'equals', V01)), ['r2']);
    assert.deepEqual(await names(pvLeaf('id', 'not-equals', V01)), ['r1', 'r4']);
    assert.deepEqual(await names(pvLeaf('prompt_v2', 'equals', P1)), ['r1', 'r2']);
    assert.deepEqual(await names(pvLeaf('prompt_v2', 'ilike', `${P2.slice(0, 8).toUpperCase()}%`)), ['r4']);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: pvLeaf('major_version', 'equals', '1') }), 400, /filter\.prompts_versions\.major_version\.equals: expected a number/);
  });
});

describe('filter: combination and nesting', () => {
  test('several fields and several operators in one leaf AND together', async () => {
    assert.deepEqual(await names({ request: { user_id: { equals: 'alice' }, model: { contains: 'mini' } } }), ['r1']);
    assert.deepEqual(await names({ request: { user_id: { equals: 'bob' }, model: { contains: 'mini' } } }), []);
    assert.deepEqual(await names({ request: { created_at: { gte: '2025-02-02', lt: '2025-02-04' } } }), ['r2', 'r3']);
    assert.deepEqual(await names({ request: { prompt: { contains: 'e', 'not-contains': 'capital', like: '%' } } }), ['r2', 'r3', 'r4']);
    assert.deepEqual(await names({ request: { user_id: { equals: 'bob' } }, prompts_versions: { minor_version: { equals: 1 } } }), ['r2']);
    assert.deepEqual(await names({ request: { user_id: { equals: 'alice' } }, prompts_versions: { minor_version: { equals: 1 } } }), []);
    assert.deepEqual(await names({}), ['r1', 'r2', 'r3', 'r4'], 'an empty leaf matches all');
    assert.deepEqual(await names({ request: {}, prompts_versions: {} }), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await names('all'), ['r1', 'r2', 'r3', 'r4']);
  });

  test('branches: and, or, nested', async () => {
    const alice = leaf('user_id', 'equals', 'alice');
    const bob = leaf('user_id', 'equals', 'bob');
    const pv0 = pvLeaf('major_version', 'equals', 0);
    assert.deepEqual(await names({ left: alice, operator: 'or', right: bob }), ['r1', 'r2']);
    assert.deepEqual(await names({ left: alice, operator: 'and', right: bob }), []);
    assert.deepEqual(await names({ left: { left: alice, operator: 'or', right: bob }, operator: 'and', right: leaf('prompt', 'contains', 'scores') }), ['r2']);
    assert.deepEqual(await names({ left: 'all', operator: 'and', right: { left: pv0, operator: 'or', right: leaf('path', 'contains', 'embed') } }), ['r1', 'r2', 'r4']);
    assert.deepEqual(await names({ left: alice, operator: 'or', right: 'all' }), ['r1', 'r2', 'r3', 'r4']);
  });

  test(`nesting up to ${MAX_FILTER_DEPTH} branches is accepted, deeper is 400`, async () => {
    const nest = (depth: number): unknown => {
      let node: unknown = leaf('user_id', 'equals', 'alice');
      for (let i = 0; i < depth; i++) node = i % 2 ? { left: node, operator: 'and', right: 'all' } : { left: node, operator: 'or', right: leaf('user_id', 'equals', 'nobody') };
      return node;
    };
    assert.deepEqual(await names(nest(MAX_FILTER_DEPTH)), ['r1']);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: nest(MAX_FILTER_DEPTH + 1) }), 400, /deeper than 32/);
    const deep = (n: number) => `{"filter":${'{"left":'.repeat(n)}"all"${',"operator":"and","right":"all"}'.repeat(n)}}`;
    assertError(await call(env, 'POST', '/v1/request/query', deep(20_000)), 400);
  });

  test('the organization condition holds for every filter; org B sees its own request', async () => {
    assert.deepEqual(await names({ left: 'all', operator: 'or', right: leaf('org_id', 'equals', env.orgB) }, env.keyB), ['rB']);
    assert.deepEqual(await names(leaf('id', 'equals', recs[0]!.id), env.keyB), []);
  });
});

describe('filter: validation', () => {
  const bad: Array<[unknown, RegExp]> = [
    ['everything', /filter: expected "all"/],
    [42, /filter: expected "all"/],
    [null, /filter/],
    [[], /filter: expected/],
    [{ values: {} }, /filter\.values: unknown key/],
    [{ request: { nope: { equals: 'x' } } }, /filter\.request\.nope: unknown field/],
    [{ request: { prompt: { startsWith: 'x' } } }, /filter\.request\.prompt\.startsWith: unknown text operator/],
    [{ request: { prompt: { equals: 5 } } }, /filter\.request\.prompt\.equals: expected a string/],
    [{ request: { prompt: 'x' } }, /filter\.request\.prompt: expected an object/],
    [{ request: [] }, /filter\.request: expected an object/],
    [{ request: { created_at: { contains: '2025' } } }, /filter\.request\.created_at\.contains: unknown timestamp operator/],
    [{ prompts_versions: { major_version: { like: '1' } } }, /filter\.prompts_versions\.major_version\.like: unknown number operator/],
    [{ request: { prompt: { like: 'abc\\' } } }, /filter\.request\.prompt\.like: a LIKE pattern must not end/],
    [{ request: { prompt: { equals: 'a\u0000b' } } }, /filter\.request\.prompt\.equals: must not contain/],
    [{ left: 'all', operator: 'xor', right: 'all' }, /filter\.operator: expected "and" or "or"/],
    [{ left: 'all', operator: 'and' }, /filter\.right: required/],
    [{ left: 'all', operator: 'and', right: 'all', extra: 1 }, /filter\.extra: unknown key/],
    [{ left: { left: 'all', operator: 'or', right: { request: { id: { equals: 1 } } } }, operator: 'and', right: 'all' }, /filter\.left\.right\.request\.id\.equals/],
  ];
  for (const [filter, message] of bad) {
    test(`400 for ${JSON.stringify(filter)}`, async () => {
      assertError(await call(env, 'POST', '/v1/request/query', { filter }), 400, message);
    });
  }

  test('checkFilter and parseIsoTimestamp directly', () => {
    assert.equal(checkFilter('all'), null);
    assert.deepEqual(checkFilter({ left: 'all', operator: 'and', right: { request: { x: {} } } })?.path, ['right', 'request', 'x']);
    assert.equal(parseIsoTimestamp('2025-02-02T01:02:03.1234567-05:30'), '2025-02-02T01:02:03.123456-05:30');
    assert.equal(parseIsoTimestamp('2024-02-29'), '2024-02-29T00:00:00+00:00');
    assert.equal(parseIsoTimestamp('2023-02-29'), null);
    assert.equal(parseIsoTimestamp('2025-02-02T01:02'), '2025-02-02T01:02:00+00:00');
  });
});

const INJECTIONS = [
  "' or '1'='1",
  "'; drop table request_log; --",
  "O'Reilly'; drop table request_log; -- \\ back",
  '") or true --',
  '%',
  '_',
  '\\',
  '\\\\',
  '$1',
  '${1}',
  "' union select * from api_key --",
  '%\' or 1=1 --',
  "\\'",
  '\u2028\u{1F600}',
];

describe('filter: injection attempts', () => {
  test('every string value of every text field returns the correct results, and the SQL text never holds a value', async () => {
    const textFields = ['prompt', 'user_id', 'auth_hash', 'org_id', 'id', 'node_id', 'model', 'modelOverride', 'path', 'country_code', 'prompt_id'];
    for (const value of INJECTIONS) {
      for (const field of textFields) {
        for (const op of ['equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains']) {
          if ((op === 'like' || op === 'ilike') && /(^|[^\\])(\\\\)*\\$/.test(value)) continue; // trailing escape: 400, tested above
          const filter = leaf(field, op, value);
          assert.deepEqual(await names(filter), expected(filter), `${field} ${op} ${JSON.stringify(value)}`);
        }
      }
      for (const field of ['id', 'prompt_v2']) {
        for (const op of ['equals', 'contains', 'not-equals']) {
          const filter = pvLeaf(field, op, value);
          assert.deepEqual(await names(filter), expected(filter), `prompts_versions.${field} ${op} ${JSON.stringify(value)}`);
        }
      }
    }
    const [{ count }] = await env.db.sql<{ count: number }[]>`select count(*)::int as count from request_log`;
    assert.equal(count, 5, 'the table is intact');
  });

  test('compiled SQL carries values only as parameters', async () => {
    const payload = "zz'; drop table request_log; --";
    const filter: FilterNode = { left: leaf('prompt', 'contains', payload), operator: 'or', right: { request: { user_id: { equals: payload }, created_at: { gte: '2025-01-01' } }, prompts_versions: { major_version: { equals: 1 } } } };
    const described = await env.db.sql`select r.id from request_log r where ${compileFilter(env.db.sql, env.orgA, filter)}`.describe();
    assert.ok(!described.string.includes('drop table'), described.string);
    assert.ok(!described.string.includes('2025-01-01'), described.string);
    assert.ok(!described.string.includes(env.orgA), described.string);
    assert.match(described.string, /\$\d/);
  });
});

// ---- the in-memory model of the documented semantics -------------------------------------------

function likeRegex(pattern: string, flags = ''): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') re += (pattern[++i] ?? '').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') re += '.*';
    else if (c === '_') re += '.';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, `su${flags}`);
}

function textMatch(v: string | null, op: string, x: string, nullable: boolean): boolean {
  const contains = v !== null && v.toLowerCase().includes(x.toLowerCase());
  switch (op) {
    case 'equals':
      return v !== null && v === x;
    case 'not-equals':
      return v === null ? nullable : v !== x;
    case 'like':
      return v !== null && likeRegex(x).test(v);
    case 'ilike':
      return v !== null && likeRegex(x, 'i').test(v);
    case 'contains':
      return contains;
    case 'not-contains':
      return v === null ? nullable : !contains;
  }
  throw new Error(op);
}

function uuidMatch(v: string | null, op: string, x: string, nullable: boolean): boolean {
  if (op === 'equals') return isUuid(x) && v === x.toLowerCase();
  if (op === 'not-equals') return v === null ? nullable : !isUuid(x) || v !== x.toLowerCase();
  return textMatch(v, op, x, nullable);
}

function numberMatch(v: number, op: string, x: number): boolean {
  return { equals: v === x, 'not-equals': v !== x, gte: v >= x, lte: v <= x, lt: v < x, gt: v > x }[op]!;
}

function timeMatch(v: number, op: string, x: string): boolean {
  const t = Date.parse(parseIsoTimestamp(x)!);
  return { equals: v === t, gte: v >= t, lte: v <= t, lt: v < t, gt: v > t }[op]!;
}

function requestValue(r: Rec, field: string): { v: string | number | null; kind: 'text' | 'uuid' | 'time' } {
  switch (field) {
    case 'prompt':
      return { v: r.prompt, kind: 'text' };
    case 'created_at':
      return { v: r.created, kind: 'time' };
    case 'user_id':
      return { v: r.user, kind: 'text' };
    case 'auth_hash':
      return { v: r.authHash, kind: 'text' };
    case 'org_id':
      return { v: r.org, kind: 'uuid' };
    case 'id':
      return { v: r.id, kind: 'uuid' };
    case 'model':
      return { v: r.model, kind: 'text' };
    case 'modelOverride':
      return { v: r.modelOverride, kind: 'text' };
    case 'path':
      return { v: r.path, kind: 'text' };
    case 'prompt_id':
      return { v: r.promptId, kind: 'uuid' };
    default:
      return { v: null, kind: 'text' };
  }
}

function evalNode(node: any, r: Rec): boolean {
  if (node === 'all') return true;
  if ('operator' in node) return node.operator === 'and' ? evalNode(node.left, r) && evalNode(node.right, r) : evalNode(node.left, r) || evalNode(node.right, r);
  for (const [field, ops] of Object.entries<Record<string, any>>(node.request ?? {})) {
    const { v, kind } = requestValue(r, field);
    for (const [op, x] of Object.entries(ops)) {
      const okay = kind === 'time' ? timeMatch(v as number, op, x) : kind === 'uuid' ? uuidMatch(v as string | null, op, x, true) : textMatch(v as string | null, op, x, true);
      if (!okay) return false;
    }
  }
  const pvOps = Object.entries<Record<string, any>>(node.prompts_versions ?? {}).filter(([, ops]) => Object.keys(ops).length > 0);
  if (pvOps.length > 0) {
    if (!r.pv) return false;
    for (const [field, ops] of pvOps) {
      for (const [op, x] of Object.entries(ops)) {
        let okay: boolean;
        if (field === 'major_version') okay = numberMatch(r.pv.major, op, x);
        else if (field === 'minor_version') okay = numberMatch(r.pv.minor, op, x);
        else okay = uuidMatch(field === 'id' ? r.pv.id : r.pv.prompt_id, op, x, false);
        if (!okay) return false;
      }
    }
  }
  return true;
}

/** What the model says organization A's query returns. */
function expected(filter: unknown): string[] {
  return recs.filter((r) => r.org === env.orgA && evalNode(filter, r)).map((r) => r.name).sort();
}

describe('filter: property-based', () => {
  const textValue = () =>
    fc.oneof(
      fc.constantFrom(...INJECTIONS.filter((v) => !/\\$/.test(v)), 'alice', 'bob', 'capital', 'What%', '%e%', 'gpt', 'openai/%', '/v1/embeddings', 'O', ''),
      fc.constantFrom(...recs.map((r) => r.id), P1, P2, V00, V01, V10, env.orgA),
      fc.string({ maxLength: 6 }).filter((s) => !s.endsWith('\\')),
    );
  const time = fc.constantFrom('2025-02-01T00:00:00Z', '2025-02-02', '2025-02-02T12:00:00+02:00', '2025-02-03T23:59:59.999Z', '2024-12-31', '2030-01-01T00:00:00-08:00');
  const textOps = (field: string) => fc.dictionary(fc.constantFrom('equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains'), textValue(), { maxKeys: 2 }).map((ops) => ({ [field]: ops }));
  const requestLeaf = fc
    .array(
      fc.oneof(
        fc.constantFrom('prompt', 'user_id', 'auth_hash', 'org_id', 'id', 'node_id', 'model', 'modelOverride', 'path', 'country_code', 'prompt_id').chain(textOps),
        fc.dictionary(fc.constantFrom('equals', 'gte', 'lte', 'lt', 'gt'), time, { maxKeys: 2 }).map((ops) => ({ created_at: ops })),
      ),
      { maxLength: 3 },
    )
    .map((parts) => Object.assign({}, ...parts));
  const num = fc.oneof(fc.constantFrom(0, 1, 2, -1, 0.5), fc.double({ noNaN: true, noDefaultInfinity: true }));
  const pvPart = fc
    .array(
      fc.oneof(
        fc.constantFrom('major_version', 'minor_version').chain((f) => fc.dictionary(fc.constantFrom('equals', 'not-equals', 'gte', 'lte', 'lt', 'gt'), num, { maxKeys: 2 }).map((ops) => ({ [f]: ops }))),
        fc.constantFrom('id', 'prompt_v2').chain(textOps),
      ),
      { maxLength: 2 },
    )
    .map((parts) => Object.assign({}, ...parts));
  const leafArb = fc.record({ request: requestLeaf, prompts_versions: pvPart }, { requiredKeys: [] });
  const tree = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof({ maxDepth: 5, depthSize: 'small' }, fc.constant('all'), leafArb, fc.record({ left: tie('node'), operator: fc.constantFrom('and', 'or'), right: tie('node') })),
  })).node;

  test('SQL results equal the model for random valid filter trees', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (filter) => {
        assert.deepEqual(await names(filter), expected(filter), JSON.stringify(filter));
      }),
      { numRuns: 250 },
    );
  });

  test('no filter, however malformed, yields a 500', async () => {
    const junk = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { maxDepth: 6 },
        fc.jsonValue({ maxDepth: 3 }),
        fc.string({ unit: 'binary', maxLength: 8 }),
        leafArb,
        fc.record({ left: tie('node'), operator: fc.oneof(fc.constantFrom('and', 'or'), fc.jsonValue({ maxDepth: 1 })), right: tie('node') }, { requiredKeys: [] }),
        fc.dictionary(fc.constantFrom('request', 'prompts_versions', 'left', 'right', 'operator', 'x'), tie('node'), { maxKeys: 3 }),
        fc.record({
          request: fc.dictionary(
            fc.constantFrom('prompt', 'created_at', 'id', 'user_id', 'x'),
            fc.dictionary(fc.constantFrom('equals', 'gte', 'like', 'contains', 'bogus'), fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.double(), fc.jsonValue({ maxDepth: 1 }))),
          ),
          prompts_versions: fc.dictionary(fc.constantFrom('major_version', 'minor_version', 'id', 'prompt_v2'), fc.dictionary(fc.constantFrom('equals', 'lt', 'contains'), fc.oneof(fc.double(), fc.string({ unit: 'binary' }), fc.integer()))),
        }, { requiredKeys: [] }),
      ),
    })).node;
    const limits = fc.record({ offset: fc.oneof(fc.integer(), fc.double(), fc.constant(1e20)), limit: fc.oneof(fc.integer(), fc.constant(0), fc.constant(10_001)) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(junk, limits, async (filter, extra) => {
        const r = await call(env, 'POST', '/v1/request/query', { filter, ...extra });
        assert.ok(r.status === 200 || r.status === 400, `${r.status} ${r.text.slice(0, 200)} for ${JSON.stringify({ filter, ...extra }).slice(0, 500)}`);
        if (r.status === 400) assert.equal(typeof r.body.error, 'string');
        const d = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'fuzz', filter, ...extra });
        assert.ok(d.status === 200 || d.status === 400, `dataset: ${d.status} ${d.text.slice(0, 200)}`);
      }),
      { numRuns: 300 },
    );
  });

  test('the documented response shape holds for a query', async () => {
    // chat requests: the reference's LlmType has no value for embeddings (see svc-request.ts)
    const r = await call(env, 'POST', '/v1/request/query', { filter: leaf('path', 'equals', '/v1/chat/completions') });
    assert.equal(r.body.data.length, 3);
    assertDocumented('POST', '/v1/request/query', r, 'ResultSuccess_SvcRequest-Array_');
  });
});
