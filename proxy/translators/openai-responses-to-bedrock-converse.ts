/**
 * The translator from OpenAI's Responses API (client dialect `openai-responses`) to Bedrock's Converse API (wire
 * format `bedrock-converse`), so a Responses client is served by Bedrock's models. It goes through chat completions
 * (openai-responses-to-openai-chat/through-chat.ts): the Responses request becomes a chat body for the `bedrock`
 * profile and model table, which the chat → Converse translator (./openai-chat-to-bedrock-converse.ts) maps; the
 * Converse answer and event stream come back through it as a chat completion and chunks, and become the Responses
 * object and events. What the chat → Converse translator does not carry, or would name by the chat body's members,
 * is settled here:
 *
 * | chat member (from Responses) | Converse |
 * | --- | --- |
 * | `reasoning_effort` (`reasoning.effort`) | removed and recorded: Converse sets reasoning per model in `additionalModelRequestFields`, which this route does not write |
 * | `user` (`safety_identifier` or `user`) | removed and recorded: Converse has no end-user member |
 * | `response_format` `json_schema` (`text.format`) | `outputConfig.textFormat`, by the chat → Converse translator (Converse's structured output: `name`, `schema`, `description` carried, `strict` honoured) |
 * | `response_format` `json_object` | refused (400 naming `text.format.type`): Converse has no JSON mode without a schema |
 * | `tools[i].function.strict: true` (`tools[i].strict`, `tools[i].tools[j].strict`) | removed and recorded, as on the chat route (./openai-chat-to-bedrock-converse/tools.ts) |
 *
 * What the chat → Converse translator removes of the messages (an image's `detail`) is recorded under the Responses
 * member it came from (`input[2].content[1].detail`); `parallel_tool_calls: false` is recorded by it as it is named.
 * Sources: https://platform.openai.com/docs/api-reference/responses,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { badRequest } from '../errors.ts';
import { openAIChatToBedrockConverse } from './openai-chat-to-bedrock-converse.ts';
import { dropChatMember, dropStrictTools, responsesThroughChat } from './openai-responses-to-openai-chat/through-chat.ts';
import { isRecord } from './shared/values.ts';
import type { MappingTranslator } from './types.ts';

/** Fits the chat body to the Converse mapping (see the table above). */
function adaptToConverse(body: ChatCompletionRequest, removed: string[], request: Record<string, unknown>): null {
  if (isRecord(body.response_format) && body.response_format.type === 'json_object') {
    throw badRequest('text.format.type "json_object": Bedrock Converse has no JSON mode without a schema; send a json_schema format', 'text.format.type', 'unsupported_parameter');
  }
  dropChatMember(body, 'reasoning_effort', 'reasoning.effort', removed);
  const userFrom = request.safety_identifier !== undefined && request.safety_identifier !== null ? 'safety_identifier' : 'user';
  dropChatMember(body, 'user', userFrom, removed);
  // Recorded here under the Responses names; the chat translator would name the chat tools.
  dropStrictTools(body, request, removed);
  return null;
}

/** `openai-responses` → `bedrock-converse`, through chat completions. */
export const openAIResponsesToBedrockConverse: MappingTranslator = responsesThroughChat('bedrock-converse', {
  chat: openAIChatToBedrockConverse,
  provider: 'bedrock',
  adapt: adaptToConverse,
});
