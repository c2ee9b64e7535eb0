/**
 * End-to-end: managed prompts through the running stack (stub provider, admin, proxy).
 * - A version whose body says `stream: true` does not decide the transport: the openai SDK's
 *   non-streaming call gets a ChatCompletion object, and the prompt's `stream_options` go upstream
 *   only when the request streams (OpenAI refuses stream_options without stream).
 * - Embeddings refuse `prompt_id` with the Messages/Responses refusal's shape.
 * - Saving a version with a malformed `{{svc:` placeholder is a 400 naming it (legacy and 2025 routes).
 * - A failed resolution's log record carries the prompt (and the version once resolved), and the 404s
 *   name the member that was unknown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { fetchRecord, startStack, uniq, type Stack } from './support/stack.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

const client = () => new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, maxRetries: 0 });
const lastUpstream = async () => ((await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[]).at(-1);

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${stack.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function createPrompt(promptBody: Record<string, unknown>): Promise<{ id: string; versionId: string }> {
  const created = await rest('POST', '/v1/prompt-2025', { name: `p-${uniq()}`, tags: [], promptBody });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  return created.json;
}

/** POSTs to the gateway; the answer's status, JSON body and Svc-Id. */
async function gateway(path: string, body: unknown): Promise<{ status: number; json: any; id: string | null }> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json(), id: res.headers.get('svc-id') };
}

describe('a prompt does not choose the transport', () => {
  test('stream: true in the version body: the SDK\'s non-streaming create() gets a ChatCompletion', async () => {
    const p = await createPrompt({
      model: 'openai/gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'system', content: 'Be brief.' }],
    });
    const completion = await client().chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], prompt_id: p.id } as never);
    assert.equal(typeof completion, 'object', `got ${typeof completion}`);
    assert.equal((completion as any).object, 'chat.completion');
    const sent = (await lastUpstream()).body;
    assert.equal(sent.stream, undefined, 'stream is the client\'s choice');
    assert.equal(sent.stream_options, undefined, 'no stream_options without stream');
  });

  test('stream: false in the request: stream_options of the prompt are not sent; stream: true: they are', async () => {
    const p = await createPrompt({ model: 'openai/gpt-4o-mini', stream_options: { include_usage: true }, messages: [] });
    await client().chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], prompt_id: p.id, stream: false } as never);
    let sent = (await lastUpstream()).body;
    assert.equal(sent.stream, false);
    assert.equal(sent.stream_options, undefined);

    const stream = await client().chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], prompt_id: p.id, stream: true } as never);
    for await (const _ of stream as unknown as AsyncIterable<unknown>);
    sent = (await lastUpstream()).body;
    assert.equal(sent.stream, true);
    assert.deepEqual(sent.stream_options, { include_usage: true });
  });
});

test('embeddings with prompt_id → 400 unsupported_member naming prompt_id, nothing sent upstream', async () => {
  const p = await createPrompt({ model: 'openai/text-embedding-3-small', temperature: 0.2, messages: [{ role: 'system', content: 'x' }] });
  const before = (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
  const res = await gateway('/ai/embeddings', { model: 'openai/text-embedding-3-small', input: 'x', prompt_id: p.id });
  assert.equal(res.status, 400, JSON.stringify(res.json));
  assert.equal(res.json.error.code, 'unsupported_member');
  assert.equal(res.json.error.param, 'prompt_id');
  assert.match(res.json.error.message, /managed prompts \("prompt_id"\) are served on chat completions, not on the embeddings API/);
  const after = (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
  assert.equal(after.length, before.length);
});

describe('saving a malformed placeholder', () => {
  const BAD: Array<[text: string, why: RegExp]> = [
    ['Hello {{svc:名前:string}}', /"名前".*ASCII/],
    ['Hello {{svc:my name:string}}', /"my name"/],
    ['Hello {{svc:a:String}}', /"String".*lowercase/],
    ['Hello {{svc:b:int}}', /unknown type "int"/],
    ['Hello {{svc:c}}', /no type/],
    ['Hello {{svc:d:string', /not closed/],
  ];

  for (const [text, why] of BAD) {
    test(`${JSON.stringify(text)} → 400 on create and update (2025) and legacy create`, async () => {
      const created = await rest('POST', '/v1/prompt-2025', { name: `p-${uniq()}`, tags: [], promptBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: text }] } });
      assert.equal(created.status, 400, JSON.stringify(created.json));
      assert.equal(created.json.data, null);
      assert.match(created.json.error, why);
      assert.ok(created.json.error.includes(text.slice(text.indexOf('{{'))), created.json.error);

      const good = await createPrompt({ model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'fine {{svc:x:string}}' }] });
      const updated = await rest('POST', '/v1/prompt-2025/update', {
        promptId: good.id,
        promptVersionId: good.versionId,
        newMajorVersion: false,
        commitMessage: 'bad',
        promptBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text', text }] }] },
      });
      assert.equal(updated.status, 400, JSON.stringify(updated.json));
      assert.equal(updated.json.data, null);
      assert.match(updated.json.error, why);

      const legacy = await rest('POST', '/v1/prompt/create', { userDefinedId: `u-${uniq()}`, prompt: { model: 'gpt-4o-mini', messages: [{ role: 'system', content: text }] }, metadata: {} });
      assert.equal(legacy.status, 400, JSON.stringify(legacy.json));
      assert.equal(legacy.json.data, null);
      assert.match(legacy.json.error, why);
    });
  }

  test('valid placeholders (spaces inside the braces too) are saved', async () => {
    await createPrompt({ model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: '{{svc:a:string}} {{ svc:b.c-d_e:number }} {{svc:f:boolean}} {{other}}' }] });
  });
});

describe('failed resolutions are linked to the prompt', () => {
  test('a missing input: 400, and the record carries the prompt id and the version', async () => {
    const p = await createPrompt({ model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'Hi {{svc:who:string}}' }] });
    const res = await gateway('/ai/chat/completions', { prompt_id: p.id, inputs: {}, messages: [] });
    assert.equal(res.status, 400);
    const rec = await fetchRecord(stack, res.id!);
    assert.equal(rec.prompt_id, p.id);
    assert.equal(rec.prompt_version, '0.0');
  });

  test('an unknown environment and an unknown version: 404 naming environment / version_id, recorded with the prompt id', async () => {
    const p = await createPrompt({ model: 'openai/gpt-4o-mini', messages: [] });
    const env = await gateway('/ai/chat/completions', { prompt_id: p.id, environment: 'staging', messages: [] });
    assert.equal(env.status, 404);
    assert.equal(env.json.error.code, 'prompt_not_found');
    assert.equal(env.json.error.param, 'environment');
    const version = await gateway('/ai/chat/completions', { prompt_id: p.id, version_id: '00000000-0000-0000-0000-000000000000', messages: [] });
    assert.equal(version.status, 404);
    assert.equal(version.json.error.param, 'version_id');
    const prompt = await gateway('/ai/chat/completions', { prompt_id: '00000000-0000-0000-0000-000000000000', messages: [] });
    assert.equal(prompt.status, 404);
    assert.equal(prompt.json.error.param, 'prompt_id');
    for (const r of [env, version]) {
      const rec = await fetchRecord(stack, r.id!);
      assert.equal(rec.prompt_id, p.id);
      assert.equal(rec.prompt_version, null);
    }
  });
});
