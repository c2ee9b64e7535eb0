/**
 * End-to-end: the compiled proxy. Builds the bundles (scripts/build.ts), then runs the stub upstream
 * (`dist/bench/stub-upstream.mjs`, which must still find its fixtures) and the proxy
 * (`dist/proxy.mjs`, `svc.features: none`) as separate plain-node processes, as `npm start` and the
 * bench run them, and drives the proxy with the official `openai` client.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { BUNDLES, build } from '../scripts/build.ts';
import { readChatStream, startProcess, stopProcess, writeConfig, type Started } from './support/stack.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

let stub: Started | undefined;
let proxy: Started | undefined;
let client: OpenAI;

before(async () => {
  await build();
  stub = await startProcess(BUNDLES.stubUpstream.outfile, { STUB_PORT: '0' }, 'stub.ready');
  const configFile = writeConfig({
    svc: { features: 'none' },
    providers: { openai: { 'base-url': `http://127.0.0.1:${stub.port}/v1` } },
  });
  proxy = await startProcess(BUNDLES.proxy.outfile, { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', OPENAI_API_KEY: 'sk-provider-openai-secret' }, 'proxy.ready', ['--config', configFile]);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${proxy.port}/ai`, apiKey: 'unused-with-features-none', maxRetries: 0 });
});

after(async () => {
  await stopProcess(proxy);
  await stopProcess(stub);
});

test('the bundle runs under plain node, without keepNames wrappers', () => {
  for (const p of [stub!, proxy!]) assert.ok(!p.child.spawnargs.some((a) => a.includes('tsx')), p.child.spawnargs.join(' '));
  assert.ok(!readFileSync(path.join(ROOT, BUNDLES.proxy.outfile), 'utf8').includes('__name('));
});

test('non-streamed chat completion through the compiled proxy', async () => {
  const { data, response } = await client.chat.completions
    .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] })
    .withResponse();
  assert.equal(response.status, 200);
  assert.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  assert.equal(response.headers.get('svc-provider'), 'openai');
});

test('streamed chat completion through the compiled proxy', async () => {
  const stream = await client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'Capital of the UK?' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const { text, chunks, usage } = await readChatStream(stream);
  assert.equal(text, 'The capital of the UK is London.');
  assert.ok(chunks >= 10, `${chunks} chunks`);
  assert.equal(usage?.prompt_tokens, 78);
});
