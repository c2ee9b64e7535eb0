/**
 * Property-based fuzzing (fast-check) through the running processes: random chat bodies (valid,
 * near-valid and garbage) against the gateway; the requests Claude Code and Codex really send
 * (test/fixtures/clients/), with members replaced or removed at random, on the Messages and Responses
 * endpoints, passed through and translated to every kind of provider (Bedrock included); and random
 * filter trees against admin's
 * `POST /v1/request/query`. Neither may answer a 5xx, both stay up, and every record the gateway
 * queued is stored (none rejected, no batch stuck). Stub upstream, admin (real PostgreSQL) and
 * proxy run as separate processes, as in e2e-main.test.ts. One in-process property: the response
 * recorder assembles a stream cut at arbitrary byte positions (inside multi-byte characters too).
 *
 * Runs are reproducible: a failure prints fast-check's seed and path; set FUZZ_SEED to replay and
 * FUZZ_RUNS to run more cases.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { NUMBER_OPERATORS, PROMPT_VERSION_FIELDS, REQUEST_FIELDS, TEXT_OPERATORS, TIMESTAMP_OPERATORS } from '../admin/filter.ts';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { PROVIDER_NAMES } from '../shared/providers.ts';
import { AWS_TEST_ENV, defaultConfig, startStack, waitFor, type Stack } from './support/stack.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined;

let stack: Stack;

before(async () => {
  // The default stack, and Bedrock at the same stub.
  stack = await startStack({
    config: (stub) => {
      const config = defaultConfig(stub);
      return { ...config, providers: { ...(config.providers as object), bedrock: { 'base-url': stub, region: 'us-east-1' } } };
    },
    proxyEnv: AWS_TEST_ENV,
  });
});
after(async () => {
  await stack?.stop();
});

/** Providers the test config points at the stub (others would reach the real provider). */
const STUB_PROVIDERS = ['openai', 'groq', 'deepseek', 'anthropic'];
/** Stub models with a deliberate behaviour (a 5xx, a hang, a reset): not fuzz material. */
const SPECIAL_MODELS = /^(error-|hang|reset-mid-stream|slow-stream|endless-stream|chunks-)/;

const model = fc.oneof(
  fc.constantFrom('openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'groq/llama-3.1-8b-instant', 'deepseek/deepseek-chat', 'openai/text-embedding-3-small'),
  fc.tuple(fc.constantFrom(...STUB_PROVIDERS), fc.string({ maxLength: 20 })).map(([p, m]) => `${p}/${m}`),
  // No provider prefix, or an unknown one: never one of the providers that would leave the machine.
  fc.string({ maxLength: 20 }).filter((m) => !PROVIDER_NAMES.some((p) => m.startsWith(`${p}/`))),
);

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('', '\u0000', '\ud800', '{"a":', '<|endoftext|>'));
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const loose = fc.oneof(scalar, fc.anything({ maxDepth: 3 }));

const contentPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('image_url'), image_url: fc.oneof(fc.record({ url: text, detail: loose }, { requiredKeys: [] }), loose) }, { requiredKeys: ['type'] }),
  fc.record({ type: text, text: loose }, { requiredKeys: [] }),
  loose,
);
const toolCall = fc.oneof(
  fc.record({ id: text, type: fc.constant('function'), function: fc.record({ name: text, arguments: fc.oneof(text, loose) }, { requiredKeys: [] }) }, { requiredKeys: [] }),
  loose,
);
const message = fc.oneof(
  { weight: 4, arbitrary: fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.string({ maxLength: 40 }) }) },
  fc.record(
    {
      role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function'), text, loose),
      content: fc.oneof(text, fc.array(contentPart, { maxLength: 3 }), loose),
      name: fc.oneof(text, loose),
      tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 2 }), loose),
      tool_call_id: fc.oneof(text, loose),
    },
    { requiredKeys: ['role'] },
  ),
  loose,
);
const tool = fc.oneof(
  fc.record({ type: fc.oneof(fc.constant('function'), text), function: fc.oneof(fc.record({ name: text, description: text, parameters: fc.oneof(fc.constant({ type: 'object', properties: {} }), loose) }, { requiredKeys: [] }), loose) }, { requiredKeys: [] }),
  loose,
);

/** Optional members with plausible values. */
const optionalMembers = fc.record(
  {
    stream: fc.boolean(),
    stream_options: fc.record({ include_usage: fc.boolean() }),
    max_tokens: fc.integer({ min: -10, max: 100_000 }),
    max_completion_tokens: fc.integer({ min: 0, max: 100_000 }),
    temperature: fc.double({ min: -1, max: 3, noNaN: true }),
    top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    n: fc.integer({ min: -1, max: 5 }),
    stop: fc.oneof(text, fc.array(text, { maxLength: 3 })),
    tools: fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.string({ maxLength: 10 }), parameters: fc.constant({ type: 'object', properties: {} }) }) }), { maxLength: 2 }),
    tool_choice: fc.oneof(fc.constantFrom('auto', 'none', 'required'), fc.record({ type: fc.constant('function'), function: fc.record({ name: text }) })),
    response_format: fc.record({ type: fc.constantFrom('text', 'json_object', 'json_schema') }),
    user: text,
    metadata: fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

/** Members a mutation may overwrite with anything, including members no client should send. */
const MUTABLE = ['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'temperature', 'n', 'stop', 'tools', 'tool_choice', 'response_format', 'user', 'input', 'prompt_id', 'inputs', 'version_id', 'environment', '__proto__', 'constructor'];

/** A chat body: a plausible one, then 0..2 members replaced by arbitrary values, plus extra members. */
const chatBody = fc
  .record({
    model,
    messages: fc.array(message, { maxLength: 4 }),
    input: fc.oneof(text, fc.array(text, { maxLength: 3 })),
    optional: optionalMembers,
    mutations: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...MUTABLE), fc.string({ maxLength: 10 })), loose), { maxLength: 2 }),
  })
  .map(({ model, messages, input, optional, mutations }) => {
    const body: Record<string, unknown> = { model, messages, input, ...optional };
    for (const [k, v] of mutations) Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
    return body;
  })
  // Keep the stub's special models (deliberate 5xx, hangs) out.
  .filter((b) => typeof b.model !== 'string' || !SPECIAL_MODELS.test(b.model.slice(b.model.indexOf('/') + 1)));

/** A request: a path, the body as text (JSON of a body, or raw garbage) and optional Svc headers. */
const gatewayRequest = fc.record({
  path: fc.constantFrom('/ai/chat/completions', '/v1/chat/completions', '/router/default/chat/completions', '/ai/embeddings', '/router/default/embeddings'),
  body: fc.oneof({ weight: 8, arbitrary: chatBody.map((b) => JSON.stringify(b)) }, { weight: 1, arbitrary: fc.string({ maxLength: 200 }) }, { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) }),
  tokenLimit: fc.option(fc.oneof(fc.constantFrom('truncate', 'middle-out', 'fallback'), fc.string({ maxLength: 10 }).filter((s) => /^[\x21-\x7e]*$/.test(s)))),
  property: fc.option(fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s))),
});

/**
 * Runs the property (fast-check, {@link RUNS} runs, shrinking on failure); a failure reports the
 * property's own assertion (status and body) along with fast-check's seed and counterexample.
 */
async function check<T>(property: fc.IAsyncPropertyWithHooks<T>): Promise<void> {
  const details = await fc.check(property, { numRuns: RUNS, seed: SEED });
  if (!details.failed) return;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  // The processes' error lines (level >= 50) say where a 5xx came from.
  const errors = [stack.proxy.output(), stack.admin.output()].flatMap((o) => o.split('\n').filter((l) => /"level":(50|60)/.test(l))).slice(-3);
  assert.fail(`${cause}\n(seed ${details.seed}, path ${details.counterexamplePath}; replay with FUZZ_SEED=${details.seed})\n${errors.join('\n')}`);
}

/** Records the fuzz produced must all be stored: the queue drains and admin rejected none. */
async function assertRecordsDrained(): Promise<void> {
  await waitFor(async () => {
    const h = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { logQueue: { queued: number; inFlight: number } };
    return h.logQueue.queued === 0 && h.logQueue.inFlight === 0;
  }, 20_000);
  const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text();
  const value = (name: string) => Number(/^(\S+) (\S+)$/m.exec(metrics.split('\n').find((l) => l.startsWith(name + ' ')) ?? '')?.[2]);
  assert.equal(value('svc_admin_records_rejected_total'), 0, 'admin rejected records');
  assert.equal(value('svc_admin_record_batches_failed_total'), 0, 'admin failed to store a batch');
}

describe('fuzz: chat bodies through the gateway', () => {
  test(`no 5xx over ${RUNS} random requests; the proxy stays up and every record is stored`, async () => {
    const seen = new Map<number, number>();
    await check(
      fc.asyncProperty(gatewayRequest, async (r) => {
        const headers: Record<string, string> = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
        if (r.tokenLimit !== null) headers['svc-token-limit-exception-handler'] = r.tokenLimit;
        if (r.property !== null) headers['svc-property-fuzz'] = r.property;
        const res = await fetch(`${stack.gatewayUrl}${r.path}`, { method: 'POST', body: r.body, headers, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        assert.ok(res.status < 500, `${res.status} for ${r.path} ${r.body.slice(0, 300)}: ${text.slice(0, 300)}`);
      }),
    );
    assert.ok((seen.get(200) ?? 0) > 0, `some requests succeed: ${JSON.stringify([...seen])}`);
    assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
    await assertRecordsDrained();
  });
});

/** A JSON value's members and elements, each as the keys and indexes leading to it (depth first). */
function memberPaths(value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : value && typeof value === 'object' ? Object.entries(value) : [];
  for (const [k, v] of entries) {
    out.push([...at, k]);
    memberPaths(v, [...at, k], out);
  }
  return out;
}

/** `body` with the member at `path` replaced by `value` (removed when `value` is undefined). */
function withMember(body: unknown, path: Array<string | number>, value: unknown): void {
  let parent = body as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) {
    if (!parent || typeof parent !== 'object') return;
    parent = parent[k] as Record<string | number, unknown>;
  }
  if (!parent || typeof parent !== 'object') return;
  const last = path[path.length - 1]!;
  if (value !== undefined) Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
}

/** The real clients' requests, the endpoints they call, and models that pass them through or translate them. */
const CLIENTS = [
  {
    name: 'Claude Code',
    body: JSON.parse(readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request.json', import.meta.url), 'utf8')) as unknown,
    headers: (JSON.parse(readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request-headers.json', import.meta.url), 'utf8')) as { headers: Record<string, string> }).headers,
    paths: ['/v1/messages', '/v1/messages/count_tokens'],
    models: ['claude-opus-5-5', 'openai/gpt-4o-mini', 'groq/llama-3.1-8b-instant', 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'bedrock/us.amazon.nova-micro-v1:0'],
  },
  {
    name: 'Codex',
    body: JSON.parse(readFileSync(new URL('./fixtures/clients/codex-0.169.0.request.json', import.meta.url), 'utf8')) as unknown,
    headers: (JSON.parse(readFileSync(new URL('./fixtures/clients/codex-0.169.0.request-headers.json', import.meta.url), 'utf8')) as { headers: Record<string, string> }).headers,
    paths: ['/v1/responses', '/v1/responses/input_tokens'],
    models: ['gpt-4.1-nano', 'anthropic/claude-sonnet-4-5', 'groq/llama-3.1-8b-instant', 'bedrock/us.amazon.nova-micro-v1:0'],
  },
].map((c) => ({ ...c, members: memberPaths(c.body) }));

/** Headers of a client's capture that the test sets itself or that describe the captured connection. */
const OWN_HEADERS = /^(host|content-length|content-type|connection|authorization|x-api-key|accept-encoding|transfer-encoding)$/i;

/** One client's request: a route, and up to three members replaced by anything or removed. */
const clientRequest = fc.record({
  client: fc.nat(CLIENTS.length - 1),
  path: fc.nat(1),
  model: fc.nat(4),
  stream: fc.option(fc.boolean()),
  mutations: fc.array(fc.tuple(fc.nat(), fc.oneof({ weight: 3, arbitrary: loose }, { weight: 1, arbitrary: fc.constant(undefined) })), { maxLength: 3 }),
});

describe("fuzz: Claude Code's and Codex's requests, mutated, through every route", () => {
  test(`no 5xx over ${RUNS} requests, passed through and translated; the proxy stays up and every record is stored`, async () => {
    const seen = new Map<number, number>();
    await check(
      fc.asyncProperty(clientRequest, async (r) => {
        const c = CLIENTS[r.client]!;
        const body = structuredClone(c.body) as Record<string, unknown>;
        body.model = c.models[r.model % c.models.length];
        if (r.stream !== null) body.stream = r.stream;
        for (const [at, value] of r.mutations) withMember(body, c.members[at % c.members.length]!, value);
        // The stub's special models (deliberate 5xx, hangs) are not fuzz material.
        fc.pre(typeof body.model !== 'string' || !SPECIAL_MODELS.test(body.model.slice(body.model.indexOf('/') + 1)));
        const headers: Record<string, string> = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
        for (const [k, v] of Object.entries(c.headers)) if (!OWN_HEADERS.test(k)) headers[k] = v;
        const path = c.paths[r.path % c.paths.length]!;
        const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', body: JSON.stringify(body), headers, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        const mutated = r.mutations.map(([at, v]) => `${c.members[at % c.members.length]!.join('.')}=${JSON.stringify(v)?.slice(0, 80)}`);
        assert.ok(res.status < 500, `${res.status} for ${c.name} on ${path} (model ${JSON.stringify(body.model)}; ${mutated.join(', ')}): ${text.slice(0, 300)}`);
      }),
    );
    assert.ok((seen.get(200) ?? 0) > 0, `some requests succeed: ${JSON.stringify([...seen])}`);
    assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
    await assertRecordsDrained();
  });
});

const FIELD_VALUE = fc.oneof(fc.string({ maxLength: 30 }), fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.integer(), fc.double(), fc.anything({ maxDepth: 1 }));

/** Operators of a field: known operators (and an unknown one now and then) with plausible or wrong values. */
function operators(known: readonly string[]) {
  return fc.dictionary(fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), FIELD_VALUE, { maxKeys: 3 });
}

const requestLeaf = fc.dictionary(
  fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...Object.keys(REQUEST_FIELDS)) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }),
  fc.constantFrom(...Object.keys(REQUEST_FIELDS)).chain((f) => operators((REQUEST_FIELDS as Record<string, string>)[f] === 'timestamp' ? TIMESTAMP_OPERATORS : TEXT_OPERATORS)),
  { maxKeys: 3 },
);
const promptLeaf = fc.dictionary(
  fc.constantFrom(...Object.keys(PROMPT_VERSION_FIELDS)),
  fc.constantFrom(...Object.keys(PROMPT_VERSION_FIELDS)).chain((f) => operators((PROMPT_VERSION_FIELDS as Record<string, string>)[f] === 'number' ? NUMBER_OPERATORS : TEXT_OPERATORS)),
  { maxKeys: 2 },
);

const { node: filterTree } = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant('all'),
    fc.record({ request: requestLeaf, prompts_versions: promptLeaf }, { requiredKeys: [] }),
    fc.record({ left: tie('node'), operator: fc.oneof(fc.constantFrom('and', 'or'), fc.string({ maxLength: 4 })), right: tie('node') }),
    fc.anything({ maxDepth: 2 }),
  ),
}));

const queryBody = fc.record(
  {
    filter: filterTree,
    offset: fc.oneof(fc.integer({ min: -5, max: 2_000_000_000 }), fc.anything({ maxDepth: 1 })),
    limit: fc.oneof(fc.integer({ min: -5, max: 20_000 }), fc.anything({ maxDepth: 1 })),
    sort: fc.oneof(fc.dictionary(fc.constantFrom('created_at', 'latency', 'cost', 'random', 'nope'), fc.oneof(fc.constantFrom('asc', 'desc'), fc.constant(true), fc.anything({ maxDepth: 0 })), { maxKeys: 2 }), fc.anything({ maxDepth: 1 })),
    isScored: fc.oneof(fc.boolean(), fc.anything({ maxDepth: 0 })),
    includeInputs: fc.oneof(fc.boolean(), fc.anything({ maxDepth: 0 })),
  },
  { requiredKeys: ['filter'] },
);

describe('fuzz: filter trees on admin (POST /v1/request/query)', () => {
  test(`no 5xx over ${RUNS} random queries; admin stays up`, async () => {
    // Some requests to match against.
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-user-id': `user-${i}` },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `query target ${i}` }] }),
      });
      await r.arrayBuffer();
    }
    const seen = new Map<number, number>();
    await check(
      fc.asyncProperty(queryBody, async (body) => {
        const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(body).slice(0, 400)}: ${text.slice(0, 300)}`);
        const json = JSON.parse(text) as { data: unknown; error: unknown };
        if (res.status === 200) assert.ok(Array.isArray(json.data));
        else assert.equal(typeof json.error, 'string');
      }),
    );
    // Random bodies are mostly invalid somewhere (all 300 were 400 in about one run in 20): the valid
    // path is checked with fixed queries rather than left to chance.
    for (const body of [{ filter: 'all' }, { filter: { request: { user_id: { equals: 'user-1' } } }, limit: 5, offset: 0, sort: { created_at: 'desc' } }]) {
      const res = await fetch(`${stack.adminUrl}/v1/request/query`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 200, `${JSON.stringify(body)} after the run (random statuses: ${JSON.stringify([...seen])}): ${await res.text()}`);
    }
    assert.equal((await fetch(`${stack.adminUrl}/health`)).status, 200);
  });
});

describe('fuzz: the response recorder', () => {
  test('a stream cut at any byte positions (inside multi-byte characters too) is assembled exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), (deltas, cuts) => {
        const sse = Buffer.from(
          deltas.map((d) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: d } }] })}\n\n`).join('') + 'data: [DONE]\n\n',
        );
        const positions = [...new Set(cuts.map((c) => c % sse.length))].sort((a, b) => a - b);
        const recorder = new ResponseRecorder(true, 1 << 20);
        let start = 0;
        for (const p of [...positions, sse.length]) {
          recorder.push(sse.subarray(start, p));
          start = p;
        }
        const body = recorder.finish(200).body as { choices: Array<{ message: { content: string } }> };
        assert.equal(body.choices[0]!.message.content, deltas.join(''));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
