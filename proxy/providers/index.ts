/**
 * The provider registry: one transport per provider config name, each bound at start to the translator of every
 * endpoint kind it serves (./binding.ts). The request path holds the binding {@link bindingFor} returns (one per
 * endpoint kind and provider). Adding a provider means adding its transport module and one line in
 * {@link TRANSPORTS}.
 */
import type { ProviderConfig } from '../../shared/config.ts';
import { PROVIDERS, type ProviderName } from '../../shared/providers.ts';
import type { EndpointName } from '../endpoints/types.ts';
import { anthropic } from './anthropic.ts';
import { awsCredentialsFromEnv } from './aws-sigv4.ts';
import { azure } from './azure.ts';
import { bedrock, BEDROCK_CREDENTIALS_HINT } from './bedrock.ts';
import { bindEndpoints, type ProviderBinding, type ProviderBindings } from './binding.ts';
import { OPENAI_NATIVE, openAICompatible } from './openai-compatible.ts';
import type { ProviderTransport } from './types.ts';

/** Every provider transport, keyed by config name. */
export const TRANSPORTS: Readonly<Partial<Record<ProviderName, ProviderTransport>>> = {
  openai: openAICompatible('openai', ['chat', 'embeddings', 'messages', 'responses', 'input_tokens', 'stored_response'], OPENAI_NATIVE),
  groq: openAICompatible('groq', ['chat', 'messages', 'responses']),
  mistral: openAICompatible('mistral'),
  deepseek: openAICompatible('deepseek', ['chat', 'messages', 'responses']),
  xai: openAICompatible('xai', ['chat', 'messages', 'responses']),
  together: openAICompatible('together'),
  fireworks: openAICompatible('fireworks'),
  openrouter: openAICompatible('openrouter', ['chat', 'messages', 'responses']),
  ollama: openAICompatible('ollama'),
  gemini: openAICompatible('gemini'),
  anthropic,
  bedrock,
  azure,
};

function bindAll(): Partial<Record<ProviderName, ProviderBindings>> {
  const bindings: Partial<Record<ProviderName, ProviderBindings>> = {};
  for (const name of Object.keys(TRANSPORTS) as ProviderName[]) bindings[name] = bindEndpoints(TRANSPORTS[name]!);
  return bindings;
}

/** Every provider's bindings (transport + translator per endpoint kind it serves), keyed by config name; built when this module loads. */
export const BINDINGS: Readonly<Partial<Record<ProviderName, ProviderBindings>>> = bindAll();

/** True when the gateway can route to the provider (it has a transport). */
export function hasProvider(name: ProviderName): boolean {
  return TRANSPORTS[name] !== undefined;
}

/**
 * The binding of a provider at one endpoint kind (its transport and the translator chosen for the pair, built
 * once at start), or undefined when the gateway cannot route to the provider or the provider does not serve
 * that endpoint kind. The same object on every call.
 */
export function bindingFor(name: ProviderName, endpoint: EndpointName): ProviderBinding | undefined {
  return BINDINGS[name]?.[endpoint];
}

/**
 * The environment variable(s) a provider still needs before the gateway may send it anything, or
 * null when it has its credentials or needs none.
 * - providers with a key variable (`PROVIDERS[name].keyEnv`: openai, anthropic, azure, groq, ...):
 *   that variable, when `config.apiKey` is unset or empty;
 * - bedrock: AWS SigV4 keys or `AWS_BEARER_TOKEN_BEDROCK`, read from `env` as the transport reads them;
 * - ollama: none (a local server that takes no key), so never missing.
 * @param config the provider's effective config (its `apiKey` was read from the environment at start).
 * @param env the environment Bedrock's credentials come from.
 */
export function missingCredentials(config: ProviderConfig, env: Record<string, string | undefined> = process.env): string | null {
  if (config.name === 'bedrock') return awsCredentialsFromEnv(env) || env.AWS_BEARER_TOKEN_BEDROCK ? null : BEDROCK_CREDENTIALS_HINT;
  const keyEnv = PROVIDERS[config.name].keyEnv;
  return keyEnv !== null && !config.apiKey ? keyEnv : null;
}
