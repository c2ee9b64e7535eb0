/**
 * `GET /v1/openapi.json` and admin/openapi.ts: the document lists exactly the registered routes
 * (enumerated from the routers) with their methods, every `$ref` resolves, the component schemas
 * copied from the reference match it, documented bounds and error statuses match what the routes
 * validate (a value past a documented bound is a 400 naming it, one at the bound is not), a method
 * a route has not is a 405 (501 for an unknown method) in the `{data: null, error}` envelope with
 * its `Allow` header, and the schema checker the REST tests rely on catches what it must.
 * Run: node --import tsx --test test/rest-openapi.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildConfig } from '../shared/config.ts';
import { buildRouters } from '../admin/app.ts';
import { openApiDocument, toOpenApiPath, validateSchema } from '../admin/openapi.ts';
import { assertError, call, reference, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
before(async () => {
  env = await startRest();
});
after(async () => {
  await env?.close();
});

/** `METHOD /openapi/path` of every route the app registers (HEAD, implied by GET, left out). */
function registeredRoutes(): string[] {
  const { open, v1 } = buildRouters({ sql: env.db.sql, config: buildConfig({}), logger: pino({ level: 'silent' }), health: () => ({}) });
  const out: string[] = [];
  for (const router of [open, v1]) {
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        out.push(`${method} ${toOpenApiPath(String(layer.path))}`);
      }
    }
  }
  return out.sort();
}

function documentedRoutes(doc: Record<string, any>): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

describe('GET /v1/openapi.json', () => {
  test('serves the OpenAPI 3 document, with a key and without one (it holds no data)', async () => {
    const r = await call(env, 'GET', '/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.match(r.body.openapi, /^3\./);
    assert.deepEqual(r.body, openApiDocument());
    const bare = await call(env, 'GET', '/v1/openapi.json', undefined, null);
    assert.equal(bare.status, 200, bare.text.slice(0, 200));
    assert.deepEqual(bare.body, openApiDocument());
    const badKey = await call(env, 'GET', '/v1/openapi.json', undefined, 'sk-svc-not-a-key');
    assert.equal(badKey.status, 200, 'a wrong key does not matter either');
    const doc = openApiDocument() as Record<string, any>;
    assert.deepEqual(doc.paths['/v1/openapi.json'].get.security, [], 'documented as needing no key');
    assert.equal(doc.paths['/v1/openapi.json'].get.responses['401'], undefined);
    // Everything else under /v1 still needs a key.
    assertError(await call(env, 'GET', '/v1/api-keys', undefined, null), 401);
  });

  test('every registered route is documented and every documented route is registered', () => {
    const registered = registeredRoutes();
    const documented = documentedRoutes(openApiDocument());
    assert.ok(registered.length >= 20, registered.join('\n'));
    assert.deepEqual(registered.filter((r) => !documented.includes(r)), [], 'registered but not documented');
    assert.deepEqual(documented.filter((r) => !registered.includes(r)), [], 'documented but not registered');
    assert.equal(new Set(registered).size, registered.length, 'no route is registered twice');
  });

  test('the documented routes answer (not 404 for "no route") with a key', async () => {
    for (const route of documentedRoutes(openApiDocument())) {
      const [method, path] = route.split(' ') as [string, string];
      const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const r = await call(env, method, concrete, method === 'GET' || method === 'DELETE' ? undefined : {});
      assert.ok(!(r.status === 404 && /no route/.test(r.body?.error ?? '')), `${route} is routed`);
      assert.notEqual(r.status, 500, `${route}: ${r.text.slice(0, 200)}`);
      assert.notEqual(r.status, 405, route);
    }
  });

  test('a body nested 200,000 deep is a 400 on every route that reads a body, never a 500', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const doc = openApiDocument() as Record<string, any>;
    let routes = 0;
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        if (!op.requestBody) continue;
        routes++;
        const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const body of [`{"member":${deep}}`, deep]) {
          const r = await call(env, method.toUpperCase(), concrete, body);
          assertError(r, 400, /nested deeper than 128 levels/);
        }
      }
    }
    assert.ok(routes >= 10, `${routes} routes with a body`);
  });

  test('operations: unique ids, 401 documented behind the key, path parameters declared', () => {
    const doc = openApiDocument() as Record<string, any>;
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
        ids.add(op.operationId);
        const open = Array.isArray(op.security) && op.security.length === 0;
        if (path.startsWith('/v1/') && !open) assert.ok(op.responses['401'], `${method} ${path} documents 401`);
        if (open) assert.equal(op.responses['401'], undefined, `${method} ${path} needs no key, so no 401`);
        const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        assert.deepEqual(op.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name), params, `${method} ${path} parameters`);
        for (const p of op.parameters) assert.ok(p.in === 'path' || (p.in === 'query' && p.required === false && p.schema), `${method} ${path} parameter ${p.name}`);
        // The dataset export alone answers JSON Lines (its errors are still JSON envelopes).
        const media = op.operationId === 'ExportDataset' ? 'application/x-ndjson' : 'application/json';
        assert.ok(op.responses['200'].content[media]?.schema, `${method} ${path} 200 schema`);
      }
    }
  });

  test('every $ref resolves', () => {
    const doc = openApiDocument() as Record<string, any>;
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.push(x as string);
          else walk(x);
        }
      }
    };
    walk(doc);
    assert.ok(refs.length > 20);
    for (const ref of refs) assert.ok(doc.components.schemas[ref.replace('#/components/schemas/', '')], `unresolved ${ref}`);
  });

  test('component schemas taken from the reference equal it (operator objects additionally closed)', () => {
    const own = (openApiDocument() as any).components.schemas as Record<string, any>;
    const ref = (reference as any).components.schemas as Record<string, any>;
    // Request bodies this API narrows on purpose: the filter tree (request/prompts_versions leaves only),
    // the supported sort keys, integer offset/limit with bounds.
    const narrowed = new Set(['SortLeafRequest', 'RequestQueryParams', 'RandomDatasetParams']);
    let compared = 0;
    for (const [name, schema] of Object.entries(own)) {
      if (!ref[name] || narrowed.has(name)) continue;
      compared++;
      const { additionalProperties: _a, ...ownRest } = schema;
      const { additionalProperties: _b, ...refRest } = ref[name];
      assert.deepEqual(ownRest, refRest, name);
    }
    assert.ok(compared >= 30, `${compared} schemas compared`);
  });
});

describe('a method a route does not have: the error envelope', () => {
  /** Calls with `fetch` directly: the status, the headers and the parsed body. */
  const raw = async (method: string, path: string, key: string | null = env.keyA) => {
    const res = await fetch(`${env.url}${path}`, { method, headers: key === null ? {} : { authorization: `Bearer ${key}` } });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as { data: unknown; error: string } };
  };
  const feedbackPath = '/v1/request/00000000-0000-4000-8000-000000000000/feedback';

  test('405 for GET and PUT on the feedback route: JSON {data: null, error}, the Allow header kept', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const r = await raw(method, feedbackPath);
      assert.equal(r.status, 405, `${method}: ${r.text}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/, method);
      assert.deepEqual(Object.keys(r.body).sort(), ['data', 'error'], r.text);
      assert.equal(r.body.data, null);
      assert.equal(r.body.error, `method ${method} not allowed on ${feedbackPath}; allowed: POST`);
      assert.equal(r.headers.get('allow'), 'POST', method);
      assertError({ status: r.status, body: r.body, text: r.text }, 405, /not allowed/);
    }
    // Without a key too: the method is refused before authentication, in the same envelope.
    const bare = await raw('PUT', feedbackPath, null);
    assert.equal(bare.status, 405);
    assert.equal(bare.body.data, null);
    assert.equal(bare.headers.get('allow'), 'POST');
  });

  test('405 on other routes names their methods; HEAD is answered without a body', async () => {
    const r = await raw('DELETE', '/v1/dashboard/query');
    assert.equal(r.status, 405, r.text);
    assert.equal(r.headers.get('allow'), 'POST');
    assert.equal(r.body.error, 'method DELETE not allowed on /v1/dashboard/query; allowed: POST');
    const keys = await raw('PUT', '/v1/api-keys');
    assert.equal(keys.status, 405, keys.text);
    assert.deepEqual(keys.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD', 'POST']);
    assert.equal(keys.body.data, null);
    const head = await fetch(`${env.url}/v1/dashboard/query`, { method: 'HEAD', headers: { authorization: `Bearer ${env.keyA}` } });
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
    assert.equal(await head.text(), '');
  });

  test('501 for a method no route implements: the same envelope', async () => {
    const r = await raw('PROPFIND', feedbackPath);
    assert.equal(r.status, 501, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(r.body.data, null);
    assert.match(r.body.error, /^method PROPFIND not implemented/);
  });

  test('OPTIONS still answers 200 with Allow, and a routed method is unaffected', async () => {
    const r = await fetch(`${env.url}${feedbackPath}`, { method: 'OPTIONS' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('allow'), 'POST');
    assertError(await call(env, 'POST', feedbackPath, { rating: true }), 404, /not found/);
  });
});

describe('documented parameters and statuses match what the routes validate', () => {
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';
  /** A probe: a call, the status it must get, and (for 400) the field the message must name. */
  type Probe = { method: string; path: string; doc: string; body?: Record<string, unknown>; status: number; names?: string };
  const probes: Probe[] = [
    { method: 'GET', path: '/v1/session/run?limit=0', doc: '/v1/session/{sessionId}', status: 400, names: 'limit' },
    { method: 'GET', path: '/v1/session/run?limit=10001', doc: '/v1/session/{sessionId}', status: 400, names: 'limit' },
    { method: 'GET', path: '/v1/session/run?offset=1000000001', doc: '/v1/session/{sessionId}', status: 400, names: 'offset' },
    { method: 'GET', path: '/v1/session/run?limit=10000&offset=1000000000', doc: '/v1/session/{sessionId}', status: 404 },
    { method: 'GET', path: '/v1/api-keys?includeRevoked=yes', doc: '/v1/api-keys', status: 400, names: 'includeRevoked' },
    { method: 'GET', path: '/v1/api-keys?includeRevoked=true', doc: '/v1/api-keys', status: 200 },
    { method: 'POST', path: '/v1/session/query', doc: '/v1/session/query', body: { timeFilter: { startTimeUnixMs: 0, endTimeUnixMs: 253_402_300_800_000 } }, status: 400, names: 'timeFilter.endTimeUnixMs' },
    { method: 'POST', path: '/v1/session/query', doc: '/v1/session/query', body: { timeFilter: { startTimeUnixMs: 253_402_300_800_000, endTimeUnixMs: 253_402_300_800_001 } }, status: 400, names: 'timeFilter.startTimeUnixMs' },
    { method: 'POST', path: '/v1/session/query', doc: '/v1/session/query', body: { timeFilter: { startTimeUnixMs: 0, endTimeUnixMs: 253_402_300_799_999 } }, status: 200 },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { page: 1_000_001 }, status: 400, names: 'page' },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { page: 1_000_000 }, status: 200 },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { search: 'x'.repeat(1001) }, status: 400, names: 'search' },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { search: 'x'.repeat(1000) }, status: 200 },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { tagsFilter: Array.from({ length: 101 }, (_, i) => `t${i}`) }, status: 400, names: 'tagsFilter' },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { tagsFilter: [''] }, status: 400, names: 'tagsFilter.0' },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { tagsFilter: ['t'.repeat(257)] }, status: 400, names: 'tagsFilter.0' },
    { method: 'POST', path: '/v1/prompt-2025/query', doc: '/v1/prompt-2025/query', body: { tagsFilter: ['t'.repeat(256)] }, status: 200 },
    { method: 'POST', path: '/v1/prompt-2025/query/versions', doc: '/v1/prompt-2025/query/versions', body: { promptId: UNKNOWN, majorVersion: 2_147_483_648 }, status: 400, names: 'majorVersion' },
    { method: 'POST', path: '/v1/prompt-2025/query/versions', doc: '/v1/prompt-2025/query/versions', body: { promptId: UNKNOWN, majorVersion: 2_147_483_647 }, status: 404 },
    { method: 'POST', path: `/v1/experiment/dataset/${UNKNOWN}/query`, doc: '/v1/experiment/dataset/{datasetId}/query', body: { offset: 1_000_000_001 }, status: 400, names: 'offset' },
    { method: 'POST', path: `/v1/experiment/dataset/${UNKNOWN}/query`, doc: '/v1/experiment/dataset/{datasetId}/query', body: { offset: 1_000_000_000 }, status: 404 },
    { method: 'GET', path: '/v1/request/not-a-uuid/inputs', doc: '/v1/request/{requestId}/inputs', status: 200 },
    { method: 'GET', path: `/v1/request/${UNKNOWN}/inputs`, doc: '/v1/request/{requestId}/inputs', status: 200 },
  ];

  /** What the own document says of a probe: problems its body or query values have under the documented schemas. */
  function documentedProblems(op: Record<string, any>, probe: Probe): string[] {
    const doc = openApiDocument();
    if (probe.body) return validateSchema(doc, op.requestBody.content['application/json'].schema, probe.body);
    const problems: string[] = [];
    for (const [name, value] of new URL(probe.path, 'http://x').searchParams) {
      const param = op.parameters.find((p: { in: string; name: string }) => p.in === 'query' && p.name === name);
      assert.ok(param, `${probe.doc}: query parameter ${name} is documented`);
      const typed = param.schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      problems.push(...validateSchema(doc, param.schema, typed, name));
    }
    return problems;
  }

  for (const probe of probes) {
    test(`${probe.method} ${probe.path.slice(0, 80)} ${probe.body ? JSON.stringify(probe.body).slice(0, 60) : ''} → ${probe.status}, as documented`, async () => {
      const r = await call(env, probe.method, probe.path, probe.body);
      assert.equal(r.status, probe.status, r.text.slice(0, 300));
      if (probe.names) assertError(r, 400, new RegExp(`: ${probe.names.replace(/\./g, '\\.')}: `));
      const op = (openApiDocument() as any).paths[probe.doc][probe.method.toLowerCase()];
      assert.ok(op.responses[String(probe.status)], `${probe.method} ${probe.doc} documents ${probe.status}`);
      const problems = documentedProblems(op, probe);
      if (probe.status === 400) assert.ok(problems.length > 0, `the document allows what the route refuses: ${JSON.stringify(probe.body ?? probe.path)}`);
      else assert.deepEqual(problems, [], 'the document refuses what the route accepts');
    });
  }

  test('GET /v1/request/{requestId}/inputs documents no 404 (it never answers one); GET /v1/session/{sessionId} documents its 400', () => {
    const paths = (openApiDocument() as any).paths;
    assert.equal(paths['/v1/request/{requestId}/inputs'].get.responses['404'], undefined);
    assert.deepEqual(Object.keys(paths['/v1/session/{sessionId}'].get.responses).sort(), ['200', '400', '401', '404', '503']);
    assert.deepEqual(Object.keys(paths['/v1/api-keys'].get.responses).sort(), ['200', '400', '401', '503']);
    const time = (openApiDocument() as any).components.schemas.SessionQueryParams.properties.timeFilter.properties;
    for (const name of ['startTimeUnixMs', 'endTimeUnixMs']) assert.deepEqual(time[name], { type: 'integer', minimum: 0, maximum: 253_402_300_799_999 }, name);
  });
});

describe('validateSchema', () => {
  const doc = {
    components: {
      schemas: {
        Thing: { type: 'object', properties: { id: { type: 'string' }, n: { type: 'number', nullable: true }, tags: { type: 'array', items: { type: 'string' } } }, required: ['id', 'n'], additionalProperties: false },
        Either: { anyOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'string', enum: ['all'] }] },
        Null: { type: 'number', enum: [null], nullable: true },
        Nested: { allOf: [{ $ref: '#/components/schemas/Thing' }], nullable: true },
      },
    },
  };
  const check = (name: string, v: unknown) => validateSchema(doc, { $ref: `#/components/schemas/${name}` }, v);

  test('accepts what conforms', () => {
    assert.deepEqual(check('Thing', { id: 'a', n: null }), []);
    assert.deepEqual(check('Thing', { id: 'a', n: 1, tags: ['x'] }), []);
    assert.deepEqual(check('Either', 'all'), []);
    assert.deepEqual(check('Null', null), []);
    assert.deepEqual(check('Nested', null), []);
  });

  test('reports missing members, extra members, wrong types, enums and anyOf mismatches', () => {
    assert.match(check('Thing', { n: 1 }).join(), /\$\.id: required/);
    assert.match(check('Thing', { id: 'a', n: 1, x: 1 }).join(), /\$\.x: not allowed/);
    assert.match(check('Thing', { id: 1, n: 1 }).join(), /\$\.id: expected a string/);
    assert.match(check('Thing', { id: 'a', n: 'one' }).join(), /\$\.n: expected a number/);
    assert.match(check('Thing', { id: 'a', n: 1, tags: [1] }).join(), /\$\.tags\[0\]: expected a string/);
    assert.match(check('Thing', null).join(), /null/);
    assert.match(check('Either', 'some').join(), /anyOf/);
    assert.match(check('Null', 0).join(), /not one of/);
    assert.match(validateSchema(doc, { $ref: '#/components/schemas/Missing' }, 1).join(), /unresolved/);
  });
});
