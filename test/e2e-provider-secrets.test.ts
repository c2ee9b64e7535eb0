/**
 * End-to-end: what a misbehaving provider's answer must not carry to the client (test/support/hostile-provider-stub.ts
 * plays OpenAI, Groq, Anthropic, Gemini and Bedrock; admin on the real PostgreSQL and the proxy run as their own
 * processes).
 *
 * - The gateway's provider credentials: a passed-through error body that repeats the key the gateway sent (chat
 *   completions, embeddings and Responses to OpenAI and Groq, Messages to Anthropic) reaches the client, the log's
 *   error and its stored response body with the key redacted, the rest of the error as the provider wrote it; a
 *   response header carrying the key is redacted too; a client's own key under Svc-Auth likewise.
 * - The same for an error the gateway maps into the client's dialect (Messages → Groq, Responses and chat → Anthropic,
 *   chat → Gemini and Bedrock), whatever the key looks like (Groq's `gsk-…`, Gemini's, a Bedrock API key, a client's
 *   own), and for the error event a translated stream ends with when the provider's stream fails repeating the key.
 * - A passed-through 2xx stream's error event repeating the key reaches the client as sent (unscanned), the log redacted.
 * - Connection-nominated headers (RFC 9110 §7.6.1): a header the provider's `Connection` names is not forwarded to the
 *   client (passed through and mapped), nor a header the client's `Connection` names to the provider.
 * - Response header names like `constructor` and `__proto__` reach the client of a mapped answer as sent.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { AWS_TEST_ENV, clearStubRequests, fetchRecord, PROVIDER_KEYS, startStubbedStack, stubRequests, type Stack, type StubbedStack } from './support/stack.ts';

/** A Bedrock API key (sent as a bearer token): nothing like `sk-…`, base64 with `/` and `+`. */
const BEDROCK_TOKEN = 'ABSKQmVkcm9ja0FQSUtleS1wcm92/aWRlci1zZWNy+ZXQ/x';

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/hostile-provider-stub.ts', (stub) => ({
    providers: {
      openai: { 'base-url': `${stub}/v1` },
      groq: { 'base-url': `${stub}/openai/v1` },
      anthropic: { 'base-url': `${stub}/v1` },
      gemini: { 'base-url': `${stub}/v1beta/openai` },
      bedrock: { 'base-url': stub },
    },
  }), { AWS_BEARER_TOKEN_BEDROCK: BEDROCK_TOKEN, AWS_REGION: 'us-east-1' });
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

const KEYS = [PROVIDER_KEYS.OPENAI_API_KEY!, PROVIDER_KEYS.GROQ_API_KEY!, PROVIDER_KEYS.ANTHROPIC_API_KEY!, PROVIDER_KEYS.GEMINI_API_KEY!, BEDROCK_TOKEN];
/** A client's own Anthropic credential (Svc-Auth) not shaped like a key, so only its exact value can redact it. */
const OWN_ANTHROPIC = 'client-own-anthropic-credential-0123';

function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
  });
}

/** The logged request's error and stored response body, as text. */
async function loggedText(id: string): Promise<string> {
  await fetchRecord(stack, id);
  const [row] = await stack.db.sql<{ t: string }[]>`select coalesce(error::text, '') || ' ' || coalesce(response_body::text, '') as t from request_log where id = ${id}`;
  return row!.t;
}

/** `text` carries none of `secrets`, as written or JSON-escaped (`/` as `\/`), nor the part of one before its first `/`. */
function assertNoSecret(where: string, text: string, secrets: readonly string[] = KEYS): void {
  for (const key of secrets) {
    for (const form of new Set([key, key.replaceAll('/', '\\/'), key.split('/')[0]!])) assert.ok(!text.includes(form), `${where} carries ${form}: ${text.slice(0, 400)}`);
  }
}

const PASSED_THROUGH: Array<{ name: string; path: string; body: (model: string) => Record<string, unknown>; providers: string[] }> = [
  { name: 'chat completions', path: '/ai/chat/completions', body: (model) => ({ model, messages: [{ role: 'user', content: 'hi' }] }), providers: ['openai', 'groq'] },
  { name: 'embeddings', path: '/ai/embeddings', body: (model) => ({ model, input: 'hi' }), providers: ['openai'] },
  { name: 'Responses', path: '/ai/responses', body: (model) => ({ model, input: 'hi' }), providers: ['openai'] },
  { name: 'Messages', path: '/v1/messages', body: (model) => ({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }), providers: ['anthropic'] },
];

describe("the gateway's provider keys never reach the client", () => {
  for (const route of PASSED_THROUGH) {
    for (const provider of route.providers) {
      test(`${route.name} → ${provider}: a 401 repeating the key is passed on with the key redacted, in the answer and the log`, async () => {
        const res = await post(route.path, route.body(`${provider}/echo-key-401`));
        const text = await res.text();
        assert.equal(res.status, 401, text);
        assertNoSecret('the answer', text);
        const json = JSON.parse(text);
        assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
        if (route.path === '/v1/messages') {
          assert.equal(json.error.type, 'authentication_error');
          assert.match(json.error.message, /^invalid x-api-key: /);
        } else {
          assert.equal(json.error.code, 'invalid_api_key');
          assert.match(json.error.message, /^Incorrect API key provided: Bearer .+\. You can find your API key at/);
        }
        assertNoSecret('the log', await loggedText(res.headers.get('svc-id')!));
      });

      test(`${route.name} → ${provider}: a response header repeating the key is redacted`, async () => {
        const res = await post(route.path, route.body(`${provider}/echo-key-200`));
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-request-id'), 'req_echo');
        assertNoSecret('x-echo', res.headers.get('x-echo') ?? '');
      });
    }
  }

  test("a client's own key (Svc-Auth) repeated by the provider is redacted as well", async () => {
    const own = 'sk-client-own-key-0123456789';
    const res = await post('/ai/chat/completions', { model: 'openai/echo-key-401', messages: [{ role: 'user', content: 'hi' }] }, { 'svc-auth': `Bearer ${stack.apiKey}`, authorization: `Bearer ${own}` });
    const text = await res.text();
    assert.equal(res.status, 401);
    assertNoSecret('the answer', text, [own, ...KEYS]);
  });
});

/** A request body of the kind at `path`, for `model`. */
function bodyFor(path: string, model: string, stream = false): Record<string, unknown> {
  if (path.endsWith('/messages')) return { model, max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] };
  if (path.endsWith('/responses')) return { model, stream, input: 'hi' };
  return { model, stream, messages: [{ role: 'user', content: 'hi' }] };
}

/** Svc-Auth headers: the service key there, `own` as the client's provider credential. */
const ownCredential = (own: string): Record<string, string> => ({ 'svc-auth': `Bearer ${stack.apiKey}`, authorization: `Bearer ${own}` });

const MAPPED: Array<{ name: string; path: string; model: string; status: number; own?: string }> = [
  { name: 'Messages → groq', path: '/v1/messages', model: 'groq/echo-key-401', status: 401 },
  { name: 'Responses → anthropic', path: '/ai/responses', model: 'anthropic/echo-key-401', status: 401 },
  { name: 'Responses → anthropic (own credential)', path: '/ai/responses', model: 'anthropic/echo-key-401', status: 401, own: OWN_ANTHROPIC },
  { name: 'chat completions → anthropic', path: '/ai/chat/completions', model: 'anthropic/echo-key-401', status: 401 },
  { name: 'chat completions → anthropic (own credential)', path: '/ai/chat/completions', model: 'anthropic/echo-key-401', status: 401, own: OWN_ANTHROPIC },
  { name: 'chat completions → gemini', path: '/ai/chat/completions', model: 'gemini/echo-key-401', status: 400 },
  { name: 'chat completions → bedrock', path: '/ai/chat/completions', model: 'bedrock/echo-key-401', status: 403 },
  { name: 'chat completions → bedrock (the key in x-amzn-errortype, which becomes the code)', path: '/ai/chat/completions', model: 'bedrock/echo-key-errortype-401', status: 403 },
  { name: 'chat completions → bedrock (the key JSON-escaped, `/` as `\\/`)', path: '/ai/chat/completions', model: 'bedrock/echo-key-escaped-401', status: 403 },
];

const STREAMED: Array<{ name: string; path: string; model: string; own?: string }> = [
  { name: 'Messages → groq', path: '/v1/messages', model: 'groq/echo-key-stream' },
  { name: 'Responses → groq', path: '/ai/responses', model: 'groq/echo-key-stream' },
  { name: 'chat completions → anthropic (own credential)', path: '/ai/chat/completions', model: 'anthropic/echo-key-stream', own: OWN_ANTHROPIC },
  { name: 'Responses → anthropic (own credential)', path: '/ai/responses', model: 'anthropic/echo-key-stream', own: OWN_ANTHROPIC },
  { name: 'chat completions → bedrock', path: '/ai/chat/completions', model: 'bedrock/echo-key-stream' },
  { name: 'Messages → bedrock', path: '/v1/messages', model: 'bedrock/us.anthropic.claude-echo-key-stream' },
  { name: "Messages → bedrock (Anthropic's error event in a chunk)", path: '/v1/messages', model: 'bedrock/us.anthropic.claude-echo-key-stream-chunk' },
  { name: "Messages → bedrock (Anthropic's error event in a chunk, the key JSON-escaped)", path: '/v1/messages', model: 'bedrock/us.anthropic.claude-echo-key-escaped-stream-chunk' },
];

describe("the provider's key never reaches the client through an error the gateway maps", () => {
  for (const route of MAPPED) {
    test(`${route.name}: an error repeating the key is answered in the client's dialect with the key redacted, in the answer and the log`, async () => {
      const secrets = route.own ? [route.own, ...KEYS] : KEYS;
      const res = await post(route.path, bodyFor(route.path, route.model), route.own ? ownCredential(route.own) : {});
      const text = await res.text();
      assert.equal(res.status, route.status, text);
      assertNoSecret('the answer', text, secrets);
      const json = JSON.parse(text);
      // Mapped into the client's dialect, the provider's message kept around the redacted key.
      if (route.path === '/v1/messages') assert.equal(json.type, 'error');
      assert.match(route.model.includes('errortype') ? json.error.code : json.error.message, /\*\*\*/);
      assertNoSecret('the log', await loggedText(res.headers.get('svc-id')!), secrets);
    });
  }
});

describe("the provider's key never reaches the client through a translated stream's error event", () => {
  for (const route of STREAMED) {
    test(`${route.name}: a stream failing with an error event repeating the key ends with the dialect's error event, key redacted, in the answer and the log`, async () => {
      const secrets = route.own ? [route.own, ...KEYS] : KEYS;
      const res = await post(route.path, bodyFor(route.path, route.model, true), route.own ? ownCredential(route.own) : {});
      const text = await res.text();
      assert.equal(res.status, 200, text);
      assertNoSecret('the stream', text, secrets);
      // The provider's message reached the client's error event, its key redacted.
      assert.match(text, /upstream overloaded for key [^"]*\*\*\*/);
      assertNoSecret('the log', await loggedText(res.headers.get('svc-id')!), secrets);
    });
  }
});

/**
 * Passed-through 2xx streams: the client gets the provider's bytes as they came, unscanned (the common path does not
 * pay for a search; ../proxy/upstream/provider-secrets.ts), but the log's error and stored body are redacted.
 */
const PASSED_THROUGH_STREAMS: Array<{ name: string; path: string; model: string }> = [
  { name: 'Messages → anthropic', path: '/v1/messages', model: 'anthropic/echo-key-stream' },
  { name: 'chat completions → openai', path: '/ai/chat/completions', model: 'openai/echo-key-stream' },
  { name: 'chat completions → groq', path: '/ai/chat/completions', model: 'groq/echo-key-stream' },
  { name: 'chat completions → gemini', path: '/ai/chat/completions', model: 'gemini/echo-key-stream' },
];

describe("the provider's key never reaches the log through a passed-through stream's error event", () => {
  for (const route of PASSED_THROUGH_STREAMS) {
    test(`${route.name}: the log's error and body have the key redacted`, async () => {
      const res = await post(route.path, bodyFor(route.path, route.model, true));
      const text = await res.text();
      assert.equal(res.status, 200, text);
      // The provider's bytes, as they came.
      assert.match(text, /upstream overloaded for key /);
      const logged = await loggedText(res.headers.get('svc-id')!);
      assert.match(logged, /upstream overloaded for key [^"]*\*\*\*/);
      assertNoSecret('the log', logged);
    });
  }
});

describe('Bedrock with SigV4 credentials: the session token (x-amz-security-token) is a secret', () => {
  /** An AWS session token: base64, long, with `/` and `+`. */
  const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ+session/token+secret';
  let sigv4: StubbedStack;
  before(async () => {
    sigv4 = await startStubbedStack('test/support/hostile-provider-stub.ts', (stub) => ({ providers: { bedrock: { 'base-url': stub } } }), {
      ...AWS_TEST_ENV,
      AWS_SESSION_TOKEN: SESSION_TOKEN,
    });
  });
  after(() => sigv4?.stop());

  for (const model of ['bedrock/echo-key-401', 'bedrock/echo-key-escaped-401', 'bedrock/echo-key-errortype-401']) {
    test(`chat completions → ${model}: the session token it repeats is redacted, in the answer and the log`, async () => {
      const res = await fetch(`${sigv4.stack.gatewayUrl}/ai/chat/completions`, {
        method: 'POST',
        body: JSON.stringify(bodyFor('/ai/chat/completions', model)),
        headers: { authorization: `Bearer ${sigv4.stack.apiKey}`, 'content-type': 'application/json' },
      });
      const text = await res.text();
      assert.equal(res.status, 403, text);
      assertNoSecret('the answer', text, [SESSION_TOKEN]);
      assert.match(text, /\*\*\*/);
      await fetchRecord(sigv4.stack, res.headers.get('svc-id')!);
      const [row] = await sigv4.stack.db.sql<{ t: string }[]>`select coalesce(error::text, '') || ' ' || coalesce(response_body::text, '') as t from request_log where id = ${res.headers.get('svc-id')!}`;
      assertNoSecret('the log', row!.t, [SESSION_TOKEN]);
    });
  }
});

describe('Connection-nominated headers are hop-by-hop', () => {
  for (const [name, path, body] of [
    ['chat completions → openai (passed through)', '/ai/chat/completions', { model: 'openai/hop-nominated', messages: [{ role: 'user', content: 'hi' }] }],
    ['Messages → anthropic (passed through)', '/v1/messages', { model: 'anthropic/hop-nominated', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }],
    ['chat completions → anthropic (mapped)', '/ai/chat/completions', { model: 'anthropic/hop-nominated', messages: [{ role: 'user', content: 'hi' }] }],
  ] as const) {
    test(`${name}: a header the provider's Connection names is not forwarded`, async () => {
      const res = await post(path, body);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-secret'), null);
      assert.equal(res.headers.get('x-kept'), 'yes');
    });
  }

  test("a header the client's Connection names does not reach the provider", async () => {
    await clearStubRequests(stubbed.stubUrl);
    const body = JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${stack.gatewayUrl}/v1/messages`,
        {
          method: 'POST',
          agent: false,
          headers: {
            authorization: `Bearer ${stack.apiKey}`,
            'content-type': 'application/json',
            connection: 'keep-alive, Anthropic-Beta',
            'anthropic-beta': 'hop-only-2025-01-01',
            'anthropic-version': '2023-06-01',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 200);
    const [sent] = (await stubRequests(stubbed.stubUrl)).filter((r) => r.method === 'POST');
    assert.equal(sent!.headers['anthropic-beta'], undefined);
    assert.equal(sent!.headers['anthropic-version'], '2023-06-01');
  });
});

describe('response header names', () => {
  test('headers named constructor and __proto__ reach the client of a mapped answer as the provider sent them', async () => {
    const res = await post('/ai/chat/completions', { model: 'anthropic/proto-headers', messages: [{ role: 'user', content: 'hi' }] });
    await res.arrayBuffer();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('constructor'), 'c1');
    assert.equal(res.headers.get('__proto__'), 'p1');
    assert.equal(res.headers.get('x-kept'), 'yes');
  });
});
