/**
 * Anthropic's token count (Anthropic API reference, "Count tokens in a Message":
 * https://docs.anthropic.com/en/api/messages-count-tokens) as an endpoint kind:
 * `POST /v1/messages/count_tokens`, `/ai/v1/messages/count_tokens`,
 * `/router/<name>/v1/messages/count_tokens`. Sent to Anthropic as it came; for any other provider
 * the gateway answers `{"input_tokens": N}` itself, from its estimate with that provider's
 * tokenizer (../stages/count-tokens.ts). A metadata call: counted in the metrics and the access
 * log, not written to the request log (it generates nothing and costs nothing).
 */
import { anthropicErrorShape } from './anthropic-errors.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { anthropicOfBareModel } from './messages.ts';
import { validateCountTokensBody } from './messages-members.ts';
import { countTokensReading } from './messages-reading.ts';
import { messagesToChatForCount } from '../translators/anthropic-messages-to-openai-chat/index.ts';
import type { EndpointKind, LocalCount } from './types.ts';

/** The gateway's own count: the chat body the Messages → chat translator would send, answered as `{"input_tokens": N}`. */
const messagesLocalCount: LocalCount = {
  chatBody: messagesToChatForCount,
  answer: (tokens) => `{"input_tokens":${tokens}}`,
};

/** count_tokens. Routers choose from their `chat` pool, as for Messages. */
export const countTokens: EndpointKind = {
  name: 'count_tokens',
  dialect: ENDPOINT_DIALECTS.count_tokens,
  paths: ['/v1/messages/count_tokens', '/ai/v1/messages/count_tokens'],
  routerTail: '/v1/messages/count_tokens',
  routerLabel: 'router:count_tokens',
  loadBalance: 'chat',
  validate: validateCountTokensBody,
  errorBody: anthropicErrorShape,
  framing: null,
  reading: countTokensReading,
  // No output to make room for: the header is ignored.
  tokenLimits: null,
  // Counts are not cached.
  completion: null,
  prompts: false,
  providerOfBareModel: anthropicOfBareModel,
  forwardsClientHeaders: true,
  localCount: messagesLocalCount,
  logged: false,
};
