/**
 * The translator from OpenAI's Responses API (client dialect `openai-responses`) to OpenAI chat completions (wire
 * format `openai-chat`), so a Responses client (Codex, the Vercel AI SDK's default `openai(…)`, LangChain with
 * `useResponsesApi`, the Agents SDK) is served by every OpenAI-compatible chat provider: Groq, DeepSeek, Mistral,
 * Gemini, xAI, Ollama, Together, Fireworks, OpenRouter (and OpenAI or Azure at chat completions).
 *
 * - request: ./request.ts (top-level members), ./input.ts and ./content.ts (the conversation), ./tools.ts and
 *   ./tool-names.ts (tools, namespaces, hosted tools, tool choice); what the providers differ on is
 *   ../shared/openai-chat-target.ts; removed members go to `call.removed`, changed tool names to `call.toolNames`;
 * - response: ./response.ts (`chat.completion` → `response`), ./output.ts (items, ids, usage), ./echo.ts (the
 *   response object and the echoed parameters);
 * - stream: ./stream.ts (chunk SSE → Responses SSE, event by event);
 * - input_tokens: ./count.ts (the chat body to estimate).
 * Sources: https://platform.openai.com/docs/api-reference/responses, https://platform.openai.com/docs/api-reference/chat.
 */
import { upstreamBadResponse } from '../shared/provider-errors.ts';
import { isRecord, parseJson } from '../shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from '../types.ts';
import { toChatRequest } from './request.ts';
import { toResponse } from './response.ts';
import { createResponsesStreamTranslator } from './stream.ts';

export { responsesToChatForCount } from './count.ts';
export { responseEcho, responseObject, type ResponseEcho, type ResponseState } from './echo.ts';
export { responseIdOf, responsesUsage, type ResponsesUsage } from './output.ts';
export { toChatRequest, type ChatRequestResult, type RequestPurpose } from './request.ts';
export { toResponse } from './response.ts';
export { createResponsesStreamTranslator } from './stream.ts';
export { flatToolName, toolNamesOf, type ToolNameMap } from './tool-names.ts';
export { hostedToolTypes } from './tools.ts';

/**
 * The provider's chat body (UTF-8 JSON bytes) for the client's Responses body; the removed members' paths are pushed
 * to `call.removed` when present, and the changed tool names set on `call.toolNames` when there are any.
 * @throws {GatewayError} 400 naming the member the provider cannot honour (see ./request.ts).
 */
function translateRequest(call: TranslatorCall): Buffer {
  const { body, removed, toolNames } = toChatRequest(call.body, call.provider);
  if (removed.length && call.removed) call.removed.push(...removed);
  if (toolNames.size) call.toolNames = toolNames;
  return Buffer.from(JSON.stringify(body));
}

/** A 2xx `chat.completion` body as a Responses `response`; 502 `upstream_bad_response` in OpenAI's shape for any other body. */
function translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed) || !Array.isArray(parsed.choices) || parsed.choices.length === 0) {
    const message = `${call.provider ?? 'the provider'} returned a response that is not a chat completion`;
    return upstreamBadResponse(message);
  }
  return { status: 200, body: toResponse(parsed, call) };
}

/** `openai-responses` → `openai-chat`. */
export const openAIResponsesToOpenAIChat: MappingTranslator = {
  dialect: 'openai-responses',
  wireFormat: 'openai-chat',
  identity: false,
  translateRequest,
  translateResponse,
  createStreamTranslator: createResponsesStreamTranslator,
};
