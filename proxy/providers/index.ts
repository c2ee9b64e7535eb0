/**
 * The provider registry: one adapter per provider config name. Adding a provider means adding its
 * module and one line here.
 */
import type { ProviderName } from '../../shared/providers.ts';
import { anthropic } from './anthropic.ts';
import { azure } from './azure.ts';
import { bedrock } from './bedrock.ts';
import { openAICompatible } from './openai-compatible.ts';
import type { ProviderAdapter } from './types.ts';

/** Every provider adapter, keyed by config name. */
export const ADAPTERS: Partial<Record<ProviderName, ProviderAdapter>> = {
  openai: openAICompatible('openai'),
  groq: openAICompatible('groq', ['chat']),
  mistral: openAICompatible('mistral'),
  deepseek: openAICompatible('deepseek', ['chat']),
  xai: openAICompatible('xai', ['chat']),
  together: openAICompatible('together'),
  fireworks: openAICompatible('fireworks'),
  openrouter: openAICompatible('openrouter', ['chat']),
  ollama: openAICompatible('ollama'),
  gemini: openAICompatible('gemini'),
  anthropic,
  bedrock,
  azure,
};

/** The adapter of a provider, or undefined when the gateway cannot route to it. */
export function adapterFor(name: ProviderName): ProviderAdapter | undefined {
  return ADAPTERS[name];
}
