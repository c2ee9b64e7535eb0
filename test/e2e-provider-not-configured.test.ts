/**
 * End-to-end: a provider addressed directly (`azure/<model>`, `bedrock/<model>`) whose required setting
 * is missing (Azure's `providers.azure.base-url`, Bedrock's region) is answered 400
 * `provider_not_configured` in the client's dialect, naming the provider and the setting, before anything
 * goes upstream: OpenAI's error shape on chat completions (streamed or not), Responses and embeddings,
 * Anthropic's on Messages. Before, the same requests were answered 500. The region read from the
 * environment (`AWS_REGION`) counts at request time as it does at start.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startProcess, stopProcess, writeConfig, type Started } from './support/stack.ts';

const AZURE = "provider azure is not configured on this gateway: it needs providers.azure.base-url (the resource's endpoint, e.g. https://<resource>.openai.azure.com)";
const BEDROCK = 'provider bedrock is not configured on this gateway: it needs a region: providers.bedrock.region, or AWS_REGION or AWS_DEFAULT_REGION in the environment';

/** Credentials for both, so that only the missing setting is what the answer can be about. */
const KEYS = { AZURE_OPENAI_API_KEY: 'azure-provider-secret', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

function post(proxy: Started, path: string, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const messages = [{ role: 'user', content: 'Hello' }];

describe('providers without their required setting, no region in the environment', () => {
  let proxy: Started;
  before(async () => {
    const config = { svc: { features: 'none' }, providers: { azure: { deployments: { 'gpt-4o': 'my-gpt-4o' } } }, routers: { default: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } } } };
    proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', AWS_REGION: '', AWS_DEFAULT_REGION: '', ...KEYS }, 'proxy.ready', ['--config', writeConfig(config)]);
  });
  after(async () => {
    await stopProcess(proxy);
  });

  for (const [provider, message] of [['azure', AZURE], ['bedrock', BEDROCK]] as const) {
    test(`${provider}: OpenAI-dialect endpoints answer 400 provider_not_configured in OpenAI's error shape`, async () => {
      const model = provider === 'azure' ? 'azure/gpt-4o' : 'bedrock/amazon.nova-lite-v1:0';
      const embeddingModel = provider === 'azure' ? 'azure/text-embedding-3-small' : 'bedrock/amazon.titan-embed-text-v2:0';
      for (const [path, body] of [
        ['/ai/chat/completions', { model, messages }],
        ['/ai/chat/completions', { model, messages, stream: true }],
        ['/ai/responses', { model, input: 'Hello' }],
        ['/ai/embeddings', { model: embeddingModel, input: 'Hello' }],
      ] as const) {
        const res = await post(proxy, path, body);
        const label = `${path} ${JSON.stringify(body)}`;
        assert.equal(res.status, 400, label);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, label);
        assert.deepEqual(await res.json(), { error: { message, type: 'invalid_request_error', param: 'model', code: 'provider_not_configured' } }, label);
      }
    });
  }

  test("Messages: 400 in Anthropic's error shape, naming the provider and the setting", async () => {
    for (const [model, message] of [['azure/gpt-4o', AZURE], ['bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', BEDROCK]] as const) {
      for (const stream of [false, true]) {
        const res = await post(proxy, '/v1/messages', { model, max_tokens: 16, messages, stream });
        assert.equal(res.status, 400, model);
        assert.deepEqual(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message } }, model);
      }
    }
  });
});

describe('bedrock with its region from AWS_REGION', () => {
  let proxy: Started;
  before(async () => {
    // The router counts on bedrock: the start accepts it because AWS_REGION is set.
    const config = { svc: { features: 'none' }, providers: { bedrock: { 'base-url': 'http://127.0.0.1:1' } }, routers: { aws: { 'load-balance': { chat: { strategy: 'latency', providers: ['bedrock'] } } } } };
    proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: '', ...KEYS }, 'proxy.ready', ['--config', writeConfig(config)]);
  });
  after(async () => {
    await stopProcess(proxy);
  });

  test('a request is sent (here to a closed port: 502), never refused as not configured', async () => {
    for (const path of ['/router/aws/chat/completions', '/ai/chat/completions']) {
      const res = await post(proxy, path, { model: path.startsWith('/ai') ? 'bedrock/amazon.nova-lite-v1:0' : 'amazon.nova-lite-v1:0', messages });
      const body = (await res.json()) as { error: { code: string | null } };
      assert.notEqual(body.error.code, 'provider_not_configured', path);
      assert.equal(res.status, 502, `${path}: ${JSON.stringify(body)}`);
    }
  });
});

describe('providers without their required setting and without credentials either', () => {
  let proxy: Started;
  before(async () => {
    const config = { svc: { features: 'none' }, routers: { default: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } } } };
    const noCredentials = { AZURE_OPENAI_API_KEY: '', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_BEARER_TOKEN_BEDROCK: '', AWS_PROFILE: '' };
    proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', AWS_REGION: '', AWS_DEFAULT_REGION: '', ...noCredentials }, 'proxy.ready', ['--config', writeConfig(config)]);
  });
  after(async () => {
    await stopProcess(proxy);
  });

  test('the missing setting is named (400), not the missing key (503): a key alone would not make the provider work', async () => {
    for (const [model, message] of [['azure/gpt-4o', AZURE], ['bedrock/amazon.nova-lite-v1:0', BEDROCK]] as const) {
      const res = await post(proxy, '/ai/chat/completions', { model, messages });
      assert.equal(res.status, 400, model);
      assert.deepEqual(await res.json(), { error: { message, type: 'invalid_request_error', param: 'model', code: 'provider_not_configured' } }, model);
    }
  });
});
