/**
 * End-to-end: a provider error that echoes the gateway's provider key written with JSON escapes (`\u002d` for `-`,
 * or every character as `\uXXXX`, either hex case) or percent-encoded (`%2D`, every byte, or with the `%` itself
 * JSON-escaped) reaches neither the client nor the log with the key in any form (test/support/escaped-echo-stub.ts
 * plays OpenAI, Groq, Anthropic and Gemini; admin on the real PostgreSQL and the proxy run as their own processes).
 *
 * - Passed-through errors (chat completions, Responses, embeddings to OpenAI; chat to Groq; Messages to Anthropic):
 *   the client's body and the stored request_log row (error and response_body, which admin parses, so the escapes
 *   are gone there) carry the key in no form.
 * - Errors the gateway maps into the client's dialect (Messages → OpenAI, chat → Anthropic, chat → Gemini) likewise.
 * - A translated stream's error event (Messages → OpenAI, chat → Anthropic): neither the client nor the log.
 * - A passed-through 2xx stream's error event (chat → OpenAI, Messages → Anthropic): the log (the client gets the
 *   provider's bytes unscanned, by design: ../proxy/upstream/provider-secrets.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FORMS } from './support/escaped-echo-forms.ts';
import { fetchRecord, PROVIDER_KEYS, startStubbedStack, type Stack, type StubbedStack } from './support/stack.ts';

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/escaped-echo-stub.ts', (stub) => ({
    providers: {
      openai: { 'base-url': `${stub}/v1` },
      groq: { 'base-url': `${stub}/openai/v1` },
      anthropic: { 'base-url': `${stub}/v1` },
      gemini: { 'base-url': `${stub}/v1beta/openai` },
    },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

const KEYS = [PROVIDER_KEYS.OPENAI_API_KEY!, PROVIDER_KEYS.GROQ_API_KEY!, PROVIDER_KEYS.ANTHROPIC_API_KEY!, PROVIDER_KEYS.GEMINI_API_KEY!];

/** `text` with JSON `\uXXXX` and `\/` escapes and percent-encoding undone, twice (an escaped `%` then decodes too). */
function decoded(text: string): string {
  let out = text;
  for (let i = 0; i < 2; i++) {
    out = out.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replaceAll('\\/', '/');
    out = out.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return out;
}

/** `text` carries no provider key, as written, in any encoded form of {@link FORMS}, or once decoded. */
function assertNoKey(where: string, text: string): void {
  const plain = decoded(text);
  for (const key of KEYS) {
    assert.ok(!plain.includes(key), `${where} carries ${key} (decoded): ${text.slice(0, 400)}`);
    for (const [name, form] of Object.entries(FORMS)) assert.ok(!text.includes(form(key)), `${where} carries ${key} in form ${name}: ${text.slice(0, 400)}`);
  }
}

function post(path: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
  });
}

/** A request body of the kind at `path`, for `model`. */
function bodyFor(path: string, model: string, stream = false): Record<string, unknown> {
  if (path.endsWith('/messages')) return { model, max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] };
  if (path.endsWith('/responses')) return { model, stream, input: 'hi' };
  if (path.endsWith('/embeddings')) return { model, input: 'hi' };
  return { model, stream, messages: [{ role: 'user', content: 'hi' }] };
}

/** The stored request_log row's error and response body, as text. */
async function loggedText(id: string): Promise<string> {
  await fetchRecord(stack, id);
  const [row] = await stack.db.sql<{ t: string }[]>`select coalesce(error::text, '') || ' ' || coalesce(response_body::text, '') as t from request_log where id = ${id}`;
  return row!.t;
}

const ERRORS: Array<{ name: string; path: string; provider: string; status: number }> = [
  { name: 'chat completions → openai (passed through)', path: '/ai/chat/completions', provider: 'openai', status: 401 },
  { name: 'Responses → openai (passed through)', path: '/v1/responses', provider: 'openai', status: 401 },
  { name: 'embeddings → openai (passed through)', path: '/ai/embeddings', provider: 'openai', status: 401 },
  { name: 'chat completions → groq (passed through)', path: '/ai/chat/completions', provider: 'groq', status: 401 },
  { name: 'Messages → anthropic (passed through)', path: '/v1/messages', provider: 'anthropic', status: 401 },
  { name: 'Messages → openai (mapped)', path: '/v1/messages', provider: 'openai', status: 401 },
  { name: 'chat completions → anthropic (mapped)', path: '/ai/chat/completions', provider: 'anthropic', status: 401 },
  { name: 'chat completions → gemini (mapped)', path: '/ai/chat/completions', provider: 'gemini', status: 400 },
];

describe('a provider error echoing the key JSON-escaped or percent-encoded', () => {
  for (const route of ERRORS) {
    for (const form of Object.keys(FORMS)) {
      test(`${route.name}, the key written ${form}: neither the answer nor the log carries it`, async () => {
        const res = await post(route.path, bodyFor(route.path, `${route.provider}/echo-${form}-401`));
        const text = await res.text();
        assert.equal(res.status, route.status, text);
        assertNoKey('the answer', text);
        // Still the provider's error, the key redacted in it.
        assert.match(decoded(text), /(Incorrect API key provided|invalid x-api-key|API key not valid): [^"]*\*\*\*/);
        assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
        assertNoKey('the log', await loggedText(res.headers.get('svc-id')!));
      });
    }
  }
});

const TRANSLATED_STREAMS: Array<{ name: string; path: string; provider: string }> = [
  { name: 'Messages → openai', path: '/v1/messages', provider: 'openai' },
  { name: 'chat completions → anthropic', path: '/ai/chat/completions', provider: 'anthropic' },
];

describe("a translated stream's error event echoing the key encoded", () => {
  for (const route of TRANSLATED_STREAMS) {
    for (const form of Object.keys(FORMS)) {
      test(`${route.name}, the key written ${form}: neither the stream nor the log carries it`, async () => {
        const res = await post(route.path, bodyFor(route.path, `${route.provider}/echo-${form}-stream`, true));
        const text = await res.text();
        assert.equal(res.status, 200, text);
        assertNoKey('the stream', text);
        assert.match(decoded(text), /upstream overloaded for key [^"]*\*\*\*/);
        assertNoKey('the log', await loggedText(res.headers.get('svc-id')!));
      });
    }
  }
});

const PASSED_THROUGH_STREAMS: Array<{ name: string; path: string; provider: string }> = [
  { name: 'chat completions → openai', path: '/ai/chat/completions', provider: 'openai' },
  { name: 'Messages → anthropic', path: '/v1/messages', provider: 'anthropic' },
];

describe("a passed-through stream's error event echoing the key encoded", () => {
  for (const route of PASSED_THROUGH_STREAMS) {
    for (const form of Object.keys(FORMS)) {
      test(`${route.name}, the key written ${form}: the log does not carry it`, async () => {
        const res = await post(route.path, bodyFor(route.path, `${route.provider}/echo-${form}-stream`, true));
        const text = await res.text();
        assert.equal(res.status, 200, text);
        // The provider's bytes, as they came (unscanned by design).
        assert.match(text, /upstream overloaded for key /);
        const logged = await loggedText(res.headers.get('svc-id')!);
        assert.match(decoded(logged), /upstream overloaded for key [^"]*\*\*\*/);
        assertNoKey('the log', logged);
      });
    }
  }
});
