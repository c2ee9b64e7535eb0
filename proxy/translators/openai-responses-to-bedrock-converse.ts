/**
 * The translator from OpenAI's Responses API (client dialect `openai-responses`) to Bedrock's Converse API (wire
 * format `bedrock-converse`), so a Responses client is served by Bedrock's models. It goes through chat completions
 * (openai-responses-to-openai-chat/through-chat.ts): the Responses request becomes a chat body for the `bedrock`
 * profile and model table, which the chat → Converse translator (./openai-chat-to-bedrock-converse.ts) maps; the
 * Converse answer and event stream come back through it as a chat completion and chunks, and become the Responses
 * object and events. What the chat → Converse translator does not carry is settled here:
 *
 * | chat member (from Responses) | Converse |
 * | --- | --- |
 * | `reasoning_effort` (`reasoning.effort`) | removed and recorded: Converse sets reasoning per model in `additionalModelRequestFields`, which this route does not write |
 * | `user` (`safety_identifier` or `user`) | removed and recorded: Converse has no end-user member |
 * | `parallel_tool_calls` | removed and recorded: Converse has no such switch |
 * | `response_format` (`text.format` `json_schema` / `json_object`) | refused (400 naming `text.format.type`): Converse has no structured output mode |
 *
 * Sources: https://platform.openai.com/docs/api-reference/responses,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { badRequest } from '../errors.ts';
import { openAIChatToBedrockConverse } from './openai-chat-to-bedrock-converse.ts';
import { dropChatMember, responsesThroughChat } from './openai-responses-to-openai-chat/through-chat.ts';
import type { MappingTranslator } from './types.ts';

/** Fits the chat body to the Converse mapping (see the table above). */
function adaptToConverse(body: ChatCompletionRequest, removed: string[], request: Record<string, unknown>): null {
  if (body.response_format !== undefined) {
    throw badRequest('text.format.type: Bedrock Converse has no structured output mode; send the request without text.format', 'text.format.type');
  }
  dropChatMember(body, 'reasoning_effort', 'reasoning.effort', removed);
  const userFrom = request.safety_identifier !== undefined && request.safety_identifier !== null ? 'safety_identifier' : 'user';
  dropChatMember(body, 'user', userFrom, removed);
  dropChatMember(body, 'parallel_tool_calls', 'parallel_tool_calls', removed);
  return null;
}

/** `openai-responses` → `bedrock-converse`, through chat completions. */
export const openAIResponsesToBedrockConverse: MappingTranslator = responsesThroughChat('bedrock-converse', {
  chat: openAIChatToBedrockConverse,
  provider: 'bedrock',
  adapt: adaptToConverse,
});
