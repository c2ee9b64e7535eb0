/**
 * OpenAI's Responses API (OpenAI API reference, "Responses" → "Create a model response":
 * https://platform.openai.com/docs/api-reference/responses/create) as an endpoint kind:
 * `POST /v1/responses`, `/ai/responses`, `/router/<name>/responses`, so an OpenAI client (the openai
 * SDKs, the Vercel AI SDK's default `openai(…)`, LangChain's `useResponsesApi`, the Agents SDK, Codex)
 * needs only its base URL pointed at the gateway (`…/v1`, `…/ai` or `…/router/<name>`). Errors in
 * OpenAI's shape, streams in the Responses API's SSE; a bare OpenAI model name (`gpt-…`, `o3`, …)
 * goes to the `openai` provider; the client's `x-codex-*`, `openai-*` and the few other headers
 * OpenAI reads reach OpenAI and Azure (their transports choose them). Of the token-limit handlers
 * `fallback` applies (estimated on the body seen as chat); truncate and middle-out do not (cutting
 * items would break function_call/function_call_output pairs and encrypted reasoning); managed
 * prompts do not (they hold chat messages). Its stored responses (GET/DELETE …/responses/{id}) are
 * ./stored-response.ts, its token count ./input-tokens.ts.
 */
import type { ProviderName } from '../../shared/providers.ts';
import { openAIErrorShape } from '../errors.ts';
import { OPENAI_ERROR_BODY } from './answer-completion.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { responsesChatView } from './responses-chat-view.ts';
import { validateResponsesBody } from './responses-members.ts';
import { responsesReading } from './responses-reading.ts';
import { responsesSse } from './responses-sse.ts';
import type { EndpointKind } from './types.ts';

/** Model names OpenAI gives its models (`gpt-4.1`, `o3-mini`, `o4-mini`, `chatgpt-4o-latest`, `codex-mini-latest`, `computer-use-preview`). */
const OPENAI_MODEL = /^(?:gpt-|o\d|chatgpt-|codex-|computer-use-)/;

/**
 * `openai` for a model named as OpenAI names its models (`gpt-…`, `o1`/`o3`/`o4…`, `chatgpt-…`,
 * `codex-…`, `computer-use-…`), else null (the model needs its `<provider>/` prefix). Codex and the
 * Agents SDK send bare names.
 */
export function openAIOfBareModel(model: string): ProviderName | null {
  return OPENAI_MODEL.test(model) ? 'openai' : null;
}

/** OpenAI Responses. Routers choose its providers from their `chat` pool, as for every chat dialect. */
export const responses: EndpointKind = {
  name: 'responses',
  dialect: ENDPOINT_DIALECTS.responses,
  paths: ['/v1/responses', '/ai/responses'],
  routerTail: '/responses',
  routerLabel: 'router:responses',
  loadBalance: 'chat',
  validate: validateResponsesBody,
  errorBody: openAIErrorShape,
  framing: responsesSse,
  reading: responsesReading,
  tokenLimits: { handlers: ['fallback'], chatView: responsesChatView, fromChatView: null },
  // Of the final events (responses-reading.ts), `response.failed` ends no answer; `response.incomplete`
  // (max_output_tokens, content filter) ends one as the model gave it.
  completion: { finalEvents: new Set(['response.completed', 'response.incomplete']), errorBody: OPENAI_ERROR_BODY },
  prompts: false,
  providerOfBareModel: openAIOfBareModel,
  forwardsClientHeaders: true,
  localCount: null,
  logged: true,
};
