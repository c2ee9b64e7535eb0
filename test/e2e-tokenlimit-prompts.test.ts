/**
 * End-to-end: token-limit handlers and managed prompts through the running gateway. The stub
 * upstream records what it received, so the tests assert the rewritten body really went upstream.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { estimateChatTokens } from '../proxy/tokenlimit/index.ts';
import { getModelInfo } from '../shared/models.ts';
import { fetchRecord, startStack, waitFor, type Stack } from './support/stack.ts';
import { prose as supportProse } from './support/text.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

const client = (path = '/ai') => new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0 });
const lastUpstream = async () => ((await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[]).at(-1);

/** Prose of roughly `tokens` o200k tokens. */
function prose(tokens: number, seed = 0): string {
  const words = ['the', 'gateway', 'routes', 'every', 'request', 'to', 'a', 'provider', 'and', 'logs', 'its', 'answer', 'quickly'];
  const out: string[] = [];
  for (let i = 0; i < tokens; i++) out.push(words[(i * 7 + seed) % words.length]!);
  return out.join(' ');
}

function allowedInput(model: string): number {
  const info = getModelInfo('openai', model)!;
  return info.contextWindow - info.defaultOutputTokens;
}

describe('token-limit handlers', () => {
  const messages = () => [
    { role: 'system' as const, content: 'You summarise documents.' },
    { role: 'user' as const, content: prose(60_000, 1) },
    { role: 'assistant' as const, content: prose(50_000, 2) },
    { role: 'user' as const, content: `Summarise: ${prose(40_000, 3)}` },
  ];

  for (const handler of ['truncate', 'middle-out'] as const) {
    test(`${handler}: an over-limit body reaches the provider within the limit`, async () => {
      const body = { model: 'openai/gpt-4o-mini', messages: messages() };
      const before = estimateChatTokens(body as never, 'openai', 'gpt-4o-mini');
      assert.ok(before > allowedInput('gpt-4o-mini'), `test body is over the limit (${before})`);
      const { response } = await client()
        .chat.completions.create(body, { headers: { 'Svc-Token-Limit-Exception-Handler': handler } })
        .withResponse();
      const sent = (await lastUpstream()).body;
      const after = estimateChatTokens(sent, 'openai', 'gpt-4o-mini');
      assert.ok(after <= allowedInput('gpt-4o-mini'), `sent ${after} tokens, allowed ${allowedInput('gpt-4o-mini')}`);
      assert.equal(sent.messages[0].content, 'You summarise documents.', 'the system message is kept');
      assert.match(sent.messages.at(-1).content, /^Summarise:/, 'the last user message is kept');
      const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
      assert.equal(rec.properties['svc-token-limit-handler'], handler);
      assert.ok(Number(rec.properties['svc-token-limit-tokens-before']) > Number(rec.properties['svc-token-limit-tokens-after']));
      assert.equal(rec.request_body.messages.length, 4, 'the record keeps the body the client sent');
    });
  }

  test('a body within the limit passes byte for byte', async () => {
    const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'short   question ,  please' }], temperature: 0.3 };
    await client().chat.completions.create(body, { headers: { 'Svc-Token-Limit-Exception-Handler': 'truncate' } });
    const sent = (await lastUpstream()).body;
    assert.deepEqual(sent, { ...body, model: 'gpt-4o-mini' });
  });

  test('fallback switches to the second model only when over the primary limit', async () => {
    const small = { model: 'openai/gpt-3.5-turbo,openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };
    await client().chat.completions.create(small, { headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } });
    assert.equal((await lastUpstream()).body.model, 'gpt-3.5-turbo');
    const big = { model: 'openai/gpt-3.5-turbo,openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: prose(30_000) }] };
    const { response } = await client()
      .chat.completions.create(big, { headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } })
      .withResponse();
    assert.equal((await lastUpstream()).body.model, 'gpt-4o-mini');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.properties['svc-token-limit-model-sent'], 'gpt-4o-mini');
  });

  test('fallback decides exactly at the limit: a body filling gpt-4o\'s window stays, one output token more goes to the fallback', async () => {
    // One user message of exactly 118,617 tokens by OpenAI's cookbook count for gpt-4o (3 per
    // message + "user" 1 + content + 3 reply priming), the content counted whole by gpt-tokenizer.
    const TOKENS = 118_617;
    const o200k = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens(t: string): number };
    const text = supportProse(Math.floor((TOKENS - 7) * 5.9), 5, 100_000).trimEnd();
    const content = text + ' the'.repeat(TOKENS - 7 - o200k.countTokens(text));
    assert.equal(3 + 1 + o200k.countTokens(content) + 3, TOKENS);
    assert.equal(getModelInfo('openai', 'gpt-4o')!.contextWindow, 128_000);
    const model = 'openai/gpt-4o,openai/gpt-4o-mini';
    for (const [maxTokens, sent] of [[128_000 - TOKENS, 'gpt-4o'], [128_000 - TOKENS + 1, 'gpt-4o-mini']] as const) {
      const { response } = await client()
        .chat.completions.create({ model, messages: [{ role: 'user', content }], max_tokens: maxTokens }, { headers: { 'Svc-Token-Limit-Exception-Handler': 'fallback' } })
        .withResponse();
      const upstream = (await lastUpstream()).body;
      assert.equal(upstream.model, sent, `max_tokens ${maxTokens}`);
      assert.equal(upstream.messages[0].content, content, 'the messages go upstream untouched');
      const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
      assert.equal(rec.properties['svc-token-limit-model-sent'], sent);
      assert.equal(Number(rec.properties['svc-token-limit-tokens-before']), TOKENS);
    }
  });

  test('an unknown handler → 400 naming the header', async () => {
    await assert.rejects(
      client().chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { headers: { 'Svc-Token-Limit-Exception-Handler': 'shrink' } }),
      (err: any) => err.status === 400 && /svc-token-limit-exception-handler/i.test(err.message),
    );
  });
});

describe('managed prompts', () => {
  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  test('a prompt with inputs reaches the provider substituted; /inputs returns them; updates reach the gateway', async () => {
    const created = await rest('POST', '/v1/prompt-2025', {
      name: 'support-bot',
      tags: ['e2e'],
      promptBody: {
        model: 'openai/gpt-4o-mini',
        temperature: 0.2,
        messages: [{ role: 'system', content: 'You are {{svc:persona:string}}, {{svc:age:number}} years old. Formal: {{svc:formal:boolean}}.' }],
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.json));
    const promptId = created.json.id as string;

    const { response } = await client()
      .chat.completions.create({ messages: [{ role: 'user', content: 'Hello' }], prompt_id: promptId, inputs: { persona: 'Ada', age: 36, formal: true } } as never)
      .withResponse();
    const sent = (await lastUpstream()).body;
    assert.equal(sent.model, 'gpt-4o-mini');
    assert.equal(sent.temperature, 0.2);
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'You are Ada, 36 years old. Formal: true.' },
      { role: 'user', content: 'Hello' },
    ]);
    assert.equal(sent.prompt_id, undefined, 'gateway members are not sent upstream');
    const id = response.headers.get('svc-id')!;
    await fetchRecord(stack, id);
    const inputs = await rest('GET', `/v1/request/${id}/inputs`);
    assert.deepEqual(inputs.json.data.inputs, { persona: 'Ada', age: 36, formal: true });
    assert.equal(inputs.json.data.prompt_id, promptId);
    assert.equal(inputs.json.data.version_id, created.json.versionId);
    assert.equal(inputs.json.data.environment, 'production');

    // The request's own members override the prompt's defaults.
    await client().chat.completions.create({ messages: [], prompt_id: promptId, inputs: { persona: 'Bo', age: 1, formal: false }, temperature: 0.9 } as never);
    assert.equal((await lastUpstream()).body.temperature, 0.9);

    // A new production version reaches the running gateway (its cache is invalidated).
    const updated = await rest('POST', '/v1/prompt-2025/update', {
      promptId,
      promptVersionId: created.json.versionId,
      newMajorVersion: true,
      environment: 'production',
      commitMessage: 'shorter',
      promptBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'Hi {{svc:persona:string}}' }] },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.json));
    await waitFor(async () => {
      await client().chat.completions.create({ messages: [], prompt_id: promptId, inputs: { persona: 'Cy' } } as never);
      return (await lastUpstream()).body.messages[0].content === 'Hi Cy';
    }, 5000);
  });

  test('missing or mistyped input → 400 naming it; unknown prompt → 404', async () => {
    const created = await rest('POST', '/v1/prompt-2025', {
      name: 'typed',
      tags: [],
      promptBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Count to {{svc:n:number}}' }] },
    });
    const promptId = created.json.id as string;
    await assert.rejects(client().chat.completions.create({ messages: [], prompt_id: promptId, inputs: {} } as never), (err: any) => err.status === 400 && /"n"/.test(err.message));
    await assert.rejects(client().chat.completions.create({ messages: [], prompt_id: promptId, inputs: { n: 'ten' } } as never), (err: any) => err.status === 400 && /"n" must be a number/.test(err.message));
    await assert.rejects(
      client().chat.completions.create({ messages: [], prompt_id: '00000000-0000-0000-0000-000000000000', inputs: {} } as never),
      (err: any) => err.status === 404 && err.code === 'prompt_not_found',
    );
    await assert.rejects(
      client().chat.completions.create({ messages: [], prompt_id: promptId, environment: 'staging' } as never),
      (err: any) => err.status === 404,
    );
  });
});
