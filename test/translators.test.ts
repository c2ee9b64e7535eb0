/**
 * The translator registry (proxy/translators/index.ts) and the binding of provider transports to translators
 * (proxy/providers/binding.ts): which translator each (dialect, wire format) pair and each (provider, endpoint
 * kind) resolves to, the identity translator's bytes, and what each binding the request path holds exposes.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import type { ProviderConfig } from '../shared/config.ts';
import { PROVIDERS, type ProviderName } from '../shared/providers.ts';
import { chatCompletions } from '../proxy/endpoints/chat-completions.ts';
import { ENDPOINT_DIALECTS } from '../proxy/endpoints/dialects.ts';
import { countTokens } from '../proxy/endpoints/count-tokens.ts';
import { embeddings } from '../proxy/endpoints/embeddings.ts';
import { inputTokens } from '../proxy/endpoints/input-tokens.ts';
import { messages } from '../proxy/endpoints/messages.ts';
import { responses } from '../proxy/endpoints/responses.ts';
import { storedResponses } from '../proxy/endpoints/stored-response.ts';
import type { EndpointName } from '../proxy/endpoints/types.ts';
import { bindEndpoints, bindProvider } from '../proxy/providers/binding.ts';
import { BINDINGS, bindingFor, hasProvider, TRANSPORTS } from '../proxy/providers/index.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from '../proxy/providers/types.ts';
import { clientErrorBody } from '../proxy/translators/dialects.ts';
import { TRANSLATOR_LIST, TRANSLATORS, translatorFor, translatorKey } from '../proxy/translators/index.ts';
import { openAIChatToAnthropicMessages } from '../proxy/translators/openai-chat-to-anthropic-messages.ts';
import { openAIChatToBedrockConverse } from '../proxy/translators/openai-chat-to-bedrock-converse.ts';
import { openAIEmbeddingsToBedrockEmbeddings } from '../proxy/translators/openai-embeddings-to-bedrock-embeddings.ts';
import { anthropicMessagesToBedrockInvoke } from '../proxy/translators/anthropic-messages-to-bedrock-invoke.ts';
import { anthropicMessagesToOpenAIChat } from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { openAIResponsesToOpenAIChat } from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
import { openAIResponsesToAnthropicMessages } from '../proxy/translators/openai-responses-to-anthropic-messages.ts';
import { openAIResponsesToBedrockConverse } from '../proxy/translators/openai-responses-to-bedrock-converse.ts';
import { anthropicMessagesIdentity, openAIChatIdentity, openAIEmbeddingsIdentity, openAIResponsesIdentity } from '../proxy/translators/passthrough.ts';
import type { Translator } from '../proxy/translators/types.ts';

const OPENAI_COMPATIBLE: readonly ProviderName[] = ['openai', 'groq', 'mistral', 'deepseek', 'xai', 'together', 'fireworks', 'openrouter', 'ollama', 'gemini'];
const CHAT_ONLY = new Set<ProviderName>(['groq', 'deepseek', 'xai', 'openrouter', 'anthropic']);

/** The translator each provider must be bound to at each endpoint kind (absent: the provider does not serve it). */
function expectedTranslator(provider: ProviderName, endpoint: EndpointName): Translator | undefined {
  // count_tokens: Anthropic's own endpoint; every other provider gets the gateway's estimate (no binding).
  if (endpoint === 'count_tokens') return provider === 'anthropic' ? anthropicMessagesIdentity : undefined;
  if (endpoint === 'messages') {
    if (provider === 'anthropic') return anthropicMessagesIdentity;
    if (provider === 'bedrock') return anthropicMessagesToBedrockInvoke;
    return anthropicMessagesToOpenAIChat;
  }
  // The Responses kinds: OpenAI natively (its token count too), Azure natively but for the token count.
  if (endpoint === 'responses' || endpoint === 'input_tokens' || endpoint === 'stored_response') {
    if (provider === 'openai') return openAIResponsesIdentity;
    if (provider === 'azure' && endpoint !== 'input_tokens') return openAIResponsesIdentity;
    // Every other OpenAI-compatible provider: Responses translated to chat completions; no stored responses or count.
    if (endpoint === 'responses' && OPENAI_COMPATIBLE.includes(provider)) return openAIResponsesToOpenAIChat;
    // Anthropic and Bedrock: Responses through chat to their own formats.
    if (endpoint === 'responses' && provider === 'anthropic') return openAIResponsesToAnthropicMessages;
    if (endpoint === 'responses' && provider === 'bedrock') return openAIResponsesToBedrockConverse;
    return undefined;
  }
  if (endpoint === 'embeddings' && CHAT_ONLY.has(provider)) return undefined;
  if (OPENAI_COMPATIBLE.includes(provider) || provider === 'azure') return endpoint === 'chat' ? openAIChatIdentity : openAIEmbeddingsIdentity;
  if (provider === 'anthropic') return openAIChatToAnthropicMessages;
  if (provider === 'bedrock') return endpoint === 'chat' ? openAIChatToBedrockConverse : openAIEmbeddingsToBedrockEmbeddings;
  throw new Error(`no expectation for ${provider}`);
}

function fakeTransport(wireFormats: ProviderTransport['wireFormats'], mapError?: ProviderTransport['mapError']): ProviderTransport {
  return {
    name: 'openai',
    wireFormats,
    buildRequest: (call, _endpoint, translator): UpstreamRequest => ({ url: new URL('http://x/'), method: 'POST', headers: {}, body: translator.translateRequest(call) }),
    ...(mapError ? { mapError } : {}),
  };
}

describe('translator registry', () => {
  it('keys are `${dialect}→${wireFormat}`, one translator each', () => {
    assert.equal(translatorKey('openai-chat', 'anthropic-messages'), 'openai-chat→anthropic-messages');
    assert.equal(TRANSLATORS.size, TRANSLATOR_LIST.length);
    for (const t of TRANSLATOR_LIST) assert.equal(TRANSLATORS.get(translatorKey(t.dialect, t.wireFormat)), t);
  });

  it('the identity is chosen exactly when dialect and wire format are the same format', () => {
    assert.equal(translatorFor('openai-chat', 'openai-chat'), openAIChatIdentity);
    assert.equal(translatorFor('openai-embeddings', 'openai-embeddings'), openAIEmbeddingsIdentity);
    for (const t of TRANSLATOR_LIST) assert.equal(t.identity, (t.dialect as string) === t.wireFormat, translatorKey(t.dialect, t.wireFormat));
  });

  it('the translators between different formats', () => {
    assert.equal(translatorFor('openai-chat', 'anthropic-messages'), openAIChatToAnthropicMessages);
    assert.equal(translatorFor('openai-chat', 'bedrock-converse'), openAIChatToBedrockConverse);
    assert.equal(translatorFor('openai-embeddings', 'bedrock-embeddings'), openAIEmbeddingsToBedrockEmbeddings);
  });

  it('a pair without a translator is undefined', () => {
    assert.equal(translatorFor('openai-embeddings', 'anthropic-messages'), undefined);
    assert.equal(translatorFor('openai-chat', 'bedrock-embeddings'), undefined);
    assert.equal(translatorFor('openai-chat', 'openai-embeddings'), undefined);
    assert.equal(translatorFor('openai-embeddings', 'bedrock-converse'), undefined);
  });

  it('the identity sends the client bytes with the model spliced when present, else the body serialized', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] } as ChatCompletionRequest;
    const rawBody = Buffer.from('{"model" : "m",  "messages":[{"role":"user","content":"hi"}]}');
    assert.equal(openAIChatIdentity.translateRequest({ body, stream: false, requestId: 'r', rawBody }), rawBody);
    assert.equal(openAIChatIdentity.translateRequest({ body, stream: false, requestId: 'r' }).toString('utf8'), JSON.stringify(body));
    assert.equal(openAIEmbeddingsIdentity.translateRequest({ body, stream: false, requestId: 'r', rawBody }), rawBody);
  });

  it('a provider error renders in OpenAI shape for both OpenAI dialects', () => {
    const error = { message: 'm', type: 'rate_limit_exceeded', param: null, code: 'c', extra: 1 };
    assert.deepEqual(clientErrorBody('openai-chat', error), { error });
    assert.deepEqual(clientErrorBody('openai-embeddings', error), { error });
  });
});

describe('provider bindings', () => {
  it('every provider × endpoint kind resolves to the expected translator, once at start', () => {
    for (const provider of Object.keys(PROVIDERS) as ProviderName[]) {
      assert.ok(TRANSPORTS[provider], `${provider} has a transport`);
      for (const endpoint of Object.keys(ENDPOINT_DIALECTS) as EndpointName[]) {
        const binding = bindingFor(provider, endpoint);
        const expected = expectedTranslator(provider, endpoint);
        assert.equal(binding?.translator, expected, `${provider} ${endpoint}`);
        if (!binding) continue;
        assert.equal(binding.transport, TRANSPORTS[provider]);
        assert.equal(binding.dialect, ENDPOINT_DIALECTS[endpoint]);
        assert.equal(binding.passthrough, expected!.identity);
        assert.equal(bindingFor(provider, endpoint), binding, 'the same binding object on every lookup');
      }
    }
  });

  it('the endpoint kind modules name the dialect the bindings translate from (one table)', () => {
    assert.equal(chatCompletions.dialect, ENDPOINT_DIALECTS.chat);
    assert.equal(embeddings.dialect, ENDPOINT_DIALECTS.embeddings);
    assert.equal(messages.dialect, ENDPOINT_DIALECTS.messages);
    assert.equal(countTokens.dialect, ENDPOINT_DIALECTS.count_tokens);
    assert.equal(responses.dialect, ENDPOINT_DIALECTS.responses);
    assert.equal(inputTokens.dialect, ENDPOINT_DIALECTS.input_tokens);
    assert.equal(storedResponses.dialect, ENDPOINT_DIALECTS.stored_response);
    assert.equal(messages.dialect, 'anthropic-messages');
  });

  it('the bindings: endpoint kinds served, passthrough, and mapping only where it applies', () => {
    const config = { name: 'openai', baseUrl: '', apiKey: null, apiVersion: null, deployments: {}, region: null, models: [], anthropicBetas: null } as ProviderConfig;
    const call: ProviderCall = { config, body: { model: 'm', messages: [] }, stream: true, requestId: 'r' };
    for (const name of Object.keys(TRANSPORTS) as ProviderName[]) {
      assert.equal(hasProvider(name), true, name);
      const transport = TRANSPORTS[name]!;
      const bindings = BINDINGS[name]!;
      assert.deepEqual(Object.keys(bindings), Object.keys(transport.wireFormats));
      for (const endpoint of Object.keys(bindings) as EndpointName[]) {
        const binding = bindings[endpoint]!;
        const where = `${name} ${endpoint}`;
        assert.equal(bindingFor(name, endpoint), binding, `${where}: built once`);
        assert.equal(binding.passthrough, expectedTranslator(name, endpoint)!.identity, where);
        // Errors are mapped unless the provider's own error shape is the client dialect's.
        assert.equal(binding.mapsErrors, transport.mapError !== undefined && !(transport.nativeErrorDialects ?? []).includes(binding.dialect), where);
        // Streams: untouched through an identity, else mapped only where the translator streams (chat, Messages, Responses).
        assert.equal(binding.streams, binding.passthrough || endpoint === 'chat' || endpoint === 'messages' || endpoint === 'responses', where);
        if (binding.passthrough) {
          assert.throws(() => binding.mapResponse(Buffer.from('{}'), call), /passes responses through/, where);
          assert.throws(() => binding.createStreamMapper(call), /no stream translation/, where);
        } else if (binding.streams) {
          assert.equal(typeof binding.createStreamMapper(call).pipe, 'function', where);
        } else {
          assert.throws(() => binding.createStreamMapper(call), /no stream translation/, where);
        }
        if (!binding.mapsErrors) assert.throws(() => binding.mapError(500, Buffer.from('')), /errors pass through/, where);
      }
    }
    assert.equal(bindingFor('openai', 'chat')!.mapsErrors, false, 'OpenAI-compatible errors pass through');
    assert.equal(bindingFor('openai', 'messages')!.mapsErrors, true, "OpenAI-compatible errors are mapped to Anthropic's shape for Messages clients");
    assert.equal(bindingFor('azure', 'chat')!.mapsErrors, true, 'Azure errors are mapped though its answers pass through');
    assert.equal(bindingFor('anthropic', 'chat')!.mapsErrors, true, "Anthropic's errors are mapped for chat clients");
    assert.equal(bindingFor('anthropic', 'messages')!.mapsErrors, false, "Anthropic's errors pass through to Messages clients");
    assert.equal(bindingFor('anthropic', 'count_tokens')!.passthrough, true);
  });

  it('a provider has no binding at an endpoint kind it does not serve (choose-provider answers 400 unsupported_endpoint)', () => {
    assert.equal(bindingFor('anthropic', 'embeddings'), undefined);
    assert.equal(BINDINGS.anthropic!.embeddings, undefined);
  });

  it('binding fails at start when no translator joins the dialect and the wire format', () => {
    assert.throws(() => bindProvider(fakeTransport({ embeddings: 'anthropic-messages' }), 'embeddings'), /no translator from openai-embeddings to anthropic-messages/);
    assert.throws(() => bindProvider(fakeTransport({ chat: 'openai-chat' }), 'embeddings'), /does not serve embeddings/);
    assert.throws(() => bindEndpoints(fakeTransport({ chat: 'openai-chat', embeddings: 'anthropic-messages' })), /no translator from openai-embeddings to anthropic-messages/);
    // Each binding passes through or translates on its own: a provider may do both at different endpoint kinds.
    const mixed = bindEndpoints(fakeTransport({ chat: 'openai-chat', embeddings: 'bedrock-embeddings' }));
    assert.equal(mixed.chat!.passthrough, true);
    assert.equal(mixed.embeddings!.passthrough, false);
  });

  it('a bound transport builds through its translator and renders its errors for the dialect', async () => {
    const binding = bindEndpoints(fakeTransport({ chat: 'anthropic-messages' }, (status) => ({ message: `s${status}`, type: 'server_error', param: null, code: null }))).chat!;
    const config = { name: 'openai', baseUrl: '', apiKey: null, apiVersion: null, deployments: {}, region: null, models: [], anthropicBetas: null } as ProviderConfig;
    const req = await binding.buildRequest({ config, body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, stream: false, requestId: 'r' });
    assert.equal(JSON.parse(req.body.toString('utf8')).max_tokens, 4096, 'the Anthropic translator wrote the body');
    assert.deepEqual(binding.mapError(503, Buffer.from('')), { error: { message: 's503', type: 'server_error', param: null, code: null } });
  });
});
