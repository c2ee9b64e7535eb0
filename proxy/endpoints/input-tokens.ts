/**
 * The Responses API's input token count (OpenAI API reference, "Responses" → "Get input token counts":
 * https://platform.openai.com/docs/api-reference/responses/input-tokens) as an endpoint kind:
 * `POST /v1/responses/input_tokens`, `/ai/responses/input_tokens`,
 * `/router/<name>/responses/input_tokens`. Sent to OpenAI as it came; for any other provider the
 * gateway answers `{"object": "response.input_tokens", "input_tokens": N}` itself, from its estimate
 * with that provider's tokenizer of the chat body the request becomes (../stages/count-tokens.ts). A
 * metadata call: counted in the metrics and the access log, not written to the request log.
 */
import { openAIErrorShape } from '../errors.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { openAIOfBareModel } from './responses.ts';
import { responsesToChatForCount } from '../translators/openai-responses-to-openai-chat/index.ts';
import { validateInputTokensBody } from './responses-members.ts';
import { inputTokensReading } from './responses-reading.ts';
import type { EndpointKind, LocalCount } from './types.ts';

/** The gateway's own count: the chat body the Responses → chat translator would send, answered as OpenAI answers it. */
const responsesLocalCount: LocalCount = {
  chatBody: responsesToChatForCount,
  answer: (tokens) => `{"object":"response.input_tokens","input_tokens":${tokens}}`,
};

/** input_tokens. Routers choose from their `chat` pool, as for Responses. */
export const inputTokens: EndpointKind = {
  name: 'input_tokens',
  dialect: ENDPOINT_DIALECTS.input_tokens,
  paths: ['/v1/responses/input_tokens', '/ai/responses/input_tokens'],
  routerTail: '/responses/input_tokens',
  routerLabel: 'router:input_tokens',
  loadBalance: 'chat',
  validate: validateInputTokensBody,
  errorBody: openAIErrorShape,
  framing: null,
  reading: inputTokensReading,
  // No output to make room for: the header is ignored.
  tokenLimits: null,
  // Counts are not cached.
  completion: null,
  prompts: false,
  providerOfBareModel: openAIOfBareModel,
  forwardsClientHeaders: true,
  localCount: responsesLocalCount,
  logged: false,
};
