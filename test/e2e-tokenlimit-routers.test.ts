/**
 * End-to-end: the token-limit handlers on routers, through the running gateway. The stub upstream
 * records what each provider received (openai at `/v1/…`, groq at `/openai/v1/…`), so the tests
 * assert which provider got which model and body; the log record shows what the handler measured.
 *
 *  - A `<provider>/` prefix on the model the handler chose (fallback's entry, or the model truncate
 *    cut for) pins that provider, exactly as the same model without the header does.
 *  - A bare name on a model-mappings router is measured against the model the router sends (the
 *    mapping's), and with several members, against the one with the smallest input allowance.
 *
 * `openai/tiny` and `groq/tiny-groq` are `models:` overrides: a 1,000-token window, 100 reserved for
 * the output (their default), so 900 tokens of input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { estimateChatTokens } from '../proxy/tokenlimit/index.ts';
import { buildConfig } from '../shared/config.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { clearStubRequests, defaultConfig, fetchRecord, startStack, stubRequests, type Stack } from './support/stack.ts';
import { prose } from './support/text.ts';

const MODELS = {
  'openai/tiny': { 'context-window': 1000, 'max-output-tokens': 100 },
  'groq/tiny-groq': { 'context-window': 1000, 'max-output-tokens': 100 },
};
/** Input tokens the tiny models allow (1000 − the 100 reserved for output). */
const ALLOWED = 900;

let stack: Stack;
before(async () => {
  // The same overrides in this process, so its estimates use the gateway's model table.
  applyModelOverrides(buildConfig({ models: MODELS }).models);
  stack = await startStack({
    config: (stub) => ({
      ...defaultConfig(stub),
      models: MODELS,
      routers: {
        tl: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } } },
        mm2: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['groq'], 'model-mappings': { 'gpt-4o-mini': ['groq/tiny-groq'] } } } },
        mm3: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['openai', 'groq'], 'model-mappings': { 'gpt-4o-mini': ['groq/tiny-groq'] } } } },
      },
    }),
  });
});
after(async () => {
  await stack?.stop();
  applyModelOverrides({});
});

/** Which provider a recorded stub request went to, by its path. */
const providerOf = (url: string): string => (url.startsWith('/openai/v1/') ? 'groq' : url.startsWith('/v1/') ? 'openai' : url);

/** POSTs a chat body to `path` with the handler header; returns the status, the answer's JSON and its Svc-Id. */
async function chat(path: string, body: unknown, handler: string): Promise<{ status: number; json: any; id: string }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-token-limit-exception-handler': handler },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json(), id: res.headers.get('svc-id') ?? '' };
}

/** Sends `body` `n` times and returns what the stub received for each (one provider request per call). */
async function sendEach(n: number, path: string, body: unknown, handler: string): Promise<Array<{ provider: string; body: any; id: string }>> {
  const out: Array<{ provider: string; body: any; id: string }> = [];
  for (let i = 0; i < n; i++) {
    await clearStubRequests(stack.stubUrl);
    const r = await chat(path, body, handler);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const got = await stubRequests(stack.stubUrl);
    assert.equal(got.length, 1, 'one provider request');
    out.push({ provider: providerOf(got[0]!.url), body: got[0]!.body, id: r.id });
  }
  return out;
}

/** A conversation of roughly `tokens` tokens: a system prompt, long turns, and a short last question. */
function conversation(tokens: number) {
  const turn = Math.floor((tokens / 4) * 6); // prose() counts characters: about 6 a token
  return [
    { role: 'system', content: 'You answer questions about the gateway.' },
    { role: 'user', content: prose(turn, 1) },
    { role: 'assistant', content: prose(turn, 2) },
    { role: 'user', content: prose(turn, 3) },
    { role: 'assistant', content: prose(turn, 4) },
    { role: 'user', content: 'So which provider answered?' },
  ];
}

describe('fallback and truncate on a router: the chosen entry\'s provider prefix pins the provider', () => {
  test('an over-limit body falls back to groq/llama-3.3-70b-versatile and goes to groq every time', async () => {
    const body = { model: 'tiny,groq/llama-3.3-70b-versatile', messages: conversation(6000) };
    assert.ok(estimateChatTokens(body as never, 'openai', 'tiny') > ALLOWED, 'over the primary\'s limit');
    const sent = await sendEach(8, '/router/tl/chat/completions', body, 'fallback');
    for (const s of sent) {
      assert.equal(s.provider, 'groq', 'the fallback entry names groq');
      assert.equal(s.body.model, 'llama-3.3-70b-versatile');
      assert.deepEqual(s.body.messages, body.messages, 'fallback leaves the messages alone');
    }
    const rec = await fetchRecord(stack, sent[0]!.id);
    assert.equal(rec.properties['svc-token-limit-model-sent'], 'llama-3.3-70b-versatile');
    assert.equal(rec.provider, 'GROQ');
  });

  test('a primary that fits stays with the provider it names, as without the header', async () => {
    const body = { model: 'groq/llama-3.3-70b-versatile,openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    for (const s of await sendEach(8, '/router/tl/chat/completions', body, 'fallback')) {
      assert.equal(s.provider, 'groq');
      assert.equal(s.body.model, 'llama-3.3-70b-versatile');
    }
  });

  test('a bare entry goes back bare, for the router to balance', async () => {
    // `tiny` is within the limit: the bare name goes back as written, so the latency strategy
    // chooses, as it does without the header (openai/tiny is the only member that knows it).
    const body = { model: 'tiny,groq/llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'hi' }] };
    const sent = await sendEach(8, '/router/tl/chat/completions', body, 'fallback');
    for (const s of sent) assert.equal(s.body.model, 'tiny');
  });

  test('truncate on a pinned model cuts for it and keeps the pin', async () => {
    const body = { model: 'groq/tiny-groq', messages: conversation(3000) };
    for (const s of await sendEach(6, '/router/tl/chat/completions', body, 'truncate')) {
      assert.equal(s.provider, 'groq');
      assert.equal(s.body.model, 'tiny-groq');
      const after = estimateChatTokens(s.body, 'groq', 'tiny-groq');
      assert.ok(after <= ALLOWED, `sent ${after} tokens`);
    }
  });
});

describe('model-mappings routers: the limits of the model the router sends', () => {
  for (const handler of ['truncate', 'middle-out'] as const) {
    test(`${handler}: gpt-4o-mini mapped to groq/tiny-groq is cut to tiny-groq's allowance`, async () => {
      const body = { model: 'gpt-4o-mini', messages: conversation(1800) };
      const before = estimateChatTokens(body as never, 'groq', 'tiny-groq');
      assert.ok(before > ALLOWED, `over tiny-groq's limit (${before})`);
      const [s] = await sendEach(1, '/router/mm2/chat/completions', body, handler);
      assert.equal(s!.provider, 'groq');
      assert.equal(s!.body.model, 'tiny-groq', 'the router sends the mapped model');
      const after = estimateChatTokens(s!.body, 'groq', 'tiny-groq');
      assert.ok(after <= ALLOWED, `sent ${after} tokens`);
      assert.equal(s!.body.messages[0].content, body.messages[0]!.content, 'the system prompt is kept');
      assert.equal(s!.body.messages.at(-1).content, 'So which provider answered?', 'the question is kept');
      const rec = await fetchRecord(stack, s!.id);
      assert.equal(rec.properties['svc-token-limit-model-sent'], 'tiny-groq');
      assert.equal(rec.properties['svc-token-limit-skipped'], undefined);
      assert.equal(Number(rec.properties['svc-token-limit-tokens-before']), before);
      assert.ok(Number(rec.properties['svc-token-limit-tokens-after']) <= ALLOWED);
    });
  }

  test('several members: the body fits the tightest model the router may send, whichever it picks', async () => {
    // openai serves gpt-4o-mini itself (128k window); groq gets the mapping's tiny-groq (1k).
    const body = { model: 'gpt-4o-mini', messages: conversation(1800) };
    const sent = await sendEach(8, '/router/mm3/chat/completions', body, 'truncate');
    for (const s of sent) {
      assert.equal(s.body.model, s.provider === 'groq' ? 'tiny-groq' : 'gpt-4o-mini');
      const after = estimateChatTokens(s.body, 'groq', 'tiny-groq');
      assert.ok(after <= ALLOWED, `${s.provider} was sent ${after} tokens`);
    }
    const rec = await fetchRecord(stack, sent[0]!.id);
    assert.equal(rec.properties['svc-token-limit-model-sent'], 'tiny-groq');
  });
});
