/**
 * The translator from Anthropic's Messages API (client dialect `anthropic-messages`) to OpenAI chat completions
 * (wire format `openai-chat`), so a Messages client (Claude Code, the Anthropic SDK) is served by every
 * OpenAI-compatible provider: OpenAI, Azure, Groq, DeepSeek, Mistral, Gemini, xAI, Ollama, Together, Fireworks,
 * OpenRouter.
 *
 * - request: ./request.ts (top-level members), ./messages.ts and ./content.ts (the conversation), ./tools.ts (tools
 *   and tool choice), ../shared/openai-chat-target.ts (what the providers differ on); removed members go to `call.removed`;
 * - response: ./response.ts (`chat.completion` → `message`);
 * - stream: ./stream.ts (chunk SSE → Messages SSE, event by event);
 * - count_tokens: ./count.ts (the chat body to estimate);
 * - thinking signatures that carry a provider's reasoning state: ./carried-reasoning.ts.
 * Sources: https://docs.anthropic.com/en/api/messages, https://platform.openai.com/docs/api-reference/chat.
 */
import { isRecord, parseJson } from '../shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from '../types.ts';
import { anthropicErrorBody } from '../wire/anthropic-messages.ts';
import { toChatRequest } from './request.ts';
import { toMessage } from './response.ts';
import { createMessagesStreamTranslator } from './stream.ts';

export { messagesToChatForCount } from './count.ts';
export { toChatRequest, type ChatRequestResult, type RequestPurpose } from './request.ts';
export { messagesUsage, toMessage } from './response.ts';
export { createMessagesStreamTranslator } from './stream.ts';

/**
 * The provider's chat body (UTF-8 JSON bytes) for the client's Messages body, with the removed members' paths pushed
 * to `call.removed` when present.
 * @throws {GatewayError} 400 naming the member the provider cannot honour (see ./request.ts).
 */
function translateRequest(call: TranslatorCall): Buffer {
  const { body, removed } = toChatRequest(call.body, call.provider);
  if (removed.length && call.removed) call.removed.push(...removed);
  return Buffer.from(JSON.stringify(body));
}

/** A 2xx `chat.completion` body as a Messages `message`; 502 `api_error` in Anthropic's shape for any other body. */
function translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed) || !Array.isArray(parsed.choices) || parsed.choices.length === 0) {
    return { status: 502, body: anthropicErrorBody('api_error', `${call.provider ?? 'the provider'} returned a response that is not a chat completion`) };
  }
  return { status: 200, body: toMessage(parsed, call) };
}

/** `anthropic-messages` → `openai-chat`. */
export const anthropicMessagesToOpenAIChat: MappingTranslator = {
  dialect: 'anthropic-messages',
  wireFormat: 'openai-chat',
  identity: false,
  translateRequest,
  translateResponse,
  createStreamTranslator: createMessagesStreamTranslator,
};
