/**
 * End-to-end: the Responses API's response store in Redis (the rate-limit store is Redis, so the
 * response store is too), shared by gateway processes and scoped per organization: two proxies of
 * one organization and a third of another, all on the test Redis (127.0.0.1:6379), with the stub
 * playing OpenAI, Azure and Groq. A response relayed by one proxy is found by the other (it goes to
 * the provider that made it); a response the gateway made (Groq, translated) is continued and
 * retrieved through the other; the other organization's proxy reaches neither kind nor its
 * conversation, and sends nothing upstream.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { PROVIDER_KEYS, startLinkedProxy, startStack, stopProcess, writeConfig, type Stack, type Started } from './support/stack.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const TEXT = JSON.parse(readFileSync(new URL('./fixtures/providers/openai/responses-text.json', import.meta.url), 'utf8')) as { id: string };
const STORED_ID = TEXT.id;
const ENV = { ...PROVIDER_KEYS, AZURE_OPENAI_API_KEY: 'azure-provider-secret' };

/** The gateway config: OpenAI and Azure at the stub, the rate-limit (and so the response) store in Redis. */
function config(stub: string): Record<string, unknown> {
  return {
    svc: { features: 'observability' },
    providers: { openai: { 'base-url': `${stub}/v1` }, azure: { 'base-url': stub }, groq: { 'base-url': `${stub}/openai/v1` } },
    'rate-limit-store': { type: 'redis', url: REDIS_URL, timeout: '1s' },
    'log-queue': { 'flush-interval': '20ms' },
  };
}

let stack: Stack;
let redis: Redis;
let second: Started & { url: string };
let foreign: Started & { url: string };
let foreignKey: string;

/** Removes the store's keys of the fixtures' response ids (they are the same in every run). */
async function clearStore(): Promise<void> {
  const keys = await redis.keys('svc:responses:resp_*');
  if (keys.length > 0) await redis.del(...keys);
}

before(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect(); // rejects, failing the suite, when Redis is unreachable
  await clearStore();
  stack = await startStack({ config: config, proxyEnv: { AZURE_OPENAI_API_KEY: ENV.AZURE_OPENAI_API_KEY } });
  second = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: stack.apiKey, configFile: stack.configFile, env: ENV });
  const org = await createOrganization(stack.db.sql, 'Other org');
  foreignKey = (await createApiKey(stack.db.sql, org, 'other org proxy')).key;
  foreign = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: foreignKey, configFile: writeConfig(config(stack.stubUrl)), env: ENV });
});
after(async () => {
  await stopProcess(second);
  await stopProcess(foreign);
  await stack?.stop();
  if (redis?.status === 'ready') {
    await clearStore();
    await redis.quit();
  } else redis?.disconnect();
});

const client = (base: string, apiKey: string) => new OpenAI({ baseURL: `${base}/ai`, apiKey, maxRetries: 0 });
const upstream = async (): Promise<any[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];

describe('the response store in Redis', () => {
  test('a response relayed through one gateway is retrieved through another from the provider that made it', async () => {
    await client(stack.gatewayUrl, stack.apiKey).responses.create({ model: 'azure/gpt-4.1-nano', input: 'hi' });
    const stored = JSON.parse((await redis.get(`svc:responses:${STORED_ID}`))!);
    assert.equal(stored.kind, 'relayed');
    assert.equal(stored.provider, 'azure');
    const got = await client(second.url, stack.apiKey).responses.retrieve(STORED_ID);
    assert.equal(got.id, STORED_ID);
    assert.equal((await upstream()).at(-1).url, `/openai/v1/responses/${STORED_ID}`, 'Azure, which only the shared store knew');
  });

  test('another organization’s gateway on the same Redis reaches neither the response nor its conversation', async () => {
    const before = (await upstream()).length;
    const other = client(foreign.url, foreignKey);
    const err = await other.responses.retrieve(STORED_ID).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.code, 'response_not_found');
    const del = await fetch(`${foreign.url}/v1/responses/${STORED_ID}`, { method: 'DELETE', headers: { authorization: `Bearer ${foreignKey}` } });
    assert.equal(del.status, 404);
    const cont = await other.responses.create({ model: 'openai/gpt-4.1-nano', previous_response_id: STORED_ID, input: 'and then?' }).catch((e: unknown) => e);
    assert.ok(cont instanceof OpenAI.NotFoundError);
    assert.deepEqual(cont.error, {
      message: `Previous response with id '${STORED_ID}' not found.`,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
    assert.equal((await upstream()).length, before, 'nothing reached the provider');
    assert.equal(JSON.parse((await redis.get(`svc:responses:${STORED_ID}`))!).provider, 'azure', 'and nothing was deleted');
  });

  test('a response the gateway made (a chat provider’s) is continued, retrieved and kept from another organization through any gateway', async () => {
    const made = await client(stack.gatewayUrl, stack.apiKey).responses.create({ model: 'groq/llama-3.3-70b-versatile', input: 'What is the capital of France?' });
    await client(second.url, stack.apiKey).responses.create({ model: 'groq/llama-3.3-70b-versatile', previous_response_id: made.id, input: 'And of Germany?' });
    const sent = (await upstream()).at(-1);
    assert.equal(sent.url, '/openai/v1/chat/completions');
    assert.deepEqual(
      sent.body.messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user'],
      'the conversation made through the first gateway, rebuilt by the second',
    );
    const got = await client(second.url, stack.apiKey).responses.retrieve(made.id);
    assert.equal(got.output_text, 'The capital of France is Paris.');
    const before = (await upstream()).length;
    const err = await client(foreign.url, foreignKey).responses.retrieve(made.id).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    const cont = await client(foreign.url, foreignKey)
      .responses.create({ model: 'groq/llama-3.3-70b-versatile', previous_response_id: made.id, input: 'more' })
      .catch((e: unknown) => e);
    assert.ok(cont instanceof OpenAI.NotFoundError);
    assert.equal((cont as InstanceType<typeof OpenAI.NotFoundError>).code, 'previous_response_not_found');
    assert.equal((await upstream()).length, before);
  });
});

