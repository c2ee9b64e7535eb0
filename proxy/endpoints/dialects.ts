/**
 * The client dialect of each endpoint kind: the one table both the endpoint kind modules
 * (`EndpointKind.dialect`) and the provider layer's binding (proxy/providers/binding.ts) read.
 * A leaf module (type imports only) so that binding every provider when proxy/providers/index.ts
 * loads never waits on the endpoint kind modules, nor they on it.
 */
import type { Dialect } from '../translators/types.ts';
import type { EndpointName } from './types.ts';

/**
 * The dialect a client speaks at each endpoint kind, as translators are keyed (`openai-chat`,
 * `openai-embeddings`, `anthropic-messages`, `openai-responses`). Messages and its token count share
 * Anthropic's dialect: the same body, the same error shape; Responses, its input token count and its
 * stored responses share OpenAI's Responses dialect.
 */
export const ENDPOINT_DIALECTS: Readonly<Record<EndpointName, Dialect>> = {
  chat: 'openai-chat',
  embeddings: 'openai-embeddings',
  messages: 'anthropic-messages',
  count_tokens: 'anthropic-messages',
  responses: 'openai-responses',
  input_tokens: 'openai-responses',
  stored_response: 'openai-responses',
};
