/**
 * The translator registry: one translator per (client dialect, provider wire format), keyed
 * `${dialect}→${wireFormat}`. The provider layer (proxy/providers/index.ts) looks a translator up once per
 * (endpoint kind, provider) at start, never per request. Adding a translator means adding its module and one
 * line in {@link TRANSLATOR_LIST}.
 */
import { anthropicMessagesToOpenAIChat } from './anthropic-messages-to-openai-chat/index.ts';
import { openAIChatToAnthropicMessages } from './openai-chat-to-anthropic-messages.ts';
import { openAIChatToBedrockConverse } from './openai-chat-to-bedrock-converse.ts';
import { openAIEmbeddingsToBedrockEmbeddings } from './openai-embeddings-to-bedrock-embeddings.ts';
import { openAIResponsesToOpenAIChat } from './openai-responses-to-openai-chat/index.ts';
import { openAIResponsesToAnthropicMessages } from './openai-responses-to-anthropic-messages.ts';
import { openAIResponsesToBedrockConverse } from './openai-responses-to-bedrock-converse.ts';
import { anthropicMessagesToBedrockInvoke } from './anthropic-messages-to-bedrock-invoke.ts';
import { anthropicMessagesIdentity, openAIChatIdentity, openAIEmbeddingsIdentity, openAIResponsesIdentity } from './passthrough.ts';
import type { Dialect, Translator, WireFormat } from './types.ts';

/** Every translator the gateway has: the identities first, then one per pair of different formats. */
export const TRANSLATOR_LIST: readonly Translator[] = [
  openAIChatIdentity,
  openAIEmbeddingsIdentity,
  anthropicMessagesIdentity,
  openAIResponsesIdentity,
  openAIChatToAnthropicMessages,
  openAIChatToBedrockConverse,
  openAIEmbeddingsToBedrockEmbeddings,
  anthropicMessagesToOpenAIChat,
  anthropicMessagesToBedrockInvoke,
  openAIResponsesToOpenAIChat,
  openAIResponsesToAnthropicMessages,
  openAIResponsesToBedrockConverse,
];

/** The registry key of a (dialect, wire format) pair: `openai-chat→anthropic-messages`. */
export function translatorKey(dialect: Dialect, wireFormat: WireFormat): string {
  return `${dialect}→${wireFormat}`;
}

function register(list: readonly Translator[]): ReadonlyMap<string, Translator> {
  const map = new Map<string, Translator>();
  for (const translator of list) {
    const key = translatorKey(translator.dialect, translator.wireFormat);
    if (map.has(key)) throw new Error(`two translators for ${key}`);
    if (translator.identity !== ((translator.dialect as string) === translator.wireFormat)) {
      throw new Error(`translator ${key}: identity must be exactly the pairs of equal formats`);
    }
    map.set(key, translator);
  }
  return map;
}

/** The registry, built when this module loads. */
export const TRANSLATORS: ReadonlyMap<string, Translator> = register(TRANSLATOR_LIST);

/**
 * The translator from a client dialect to a provider wire format: the identity when they are the same format;
 * undefined when the gateway has no translator for the pair (the provider cannot serve that dialect).
 */
export function translatorFor(dialect: Dialect, wireFormat: WireFormat): Translator | undefined {
  return TRANSLATORS.get(translatorKey(dialect, wireFormat));
}
