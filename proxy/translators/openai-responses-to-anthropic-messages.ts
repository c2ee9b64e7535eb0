/**
 * The translator from OpenAI's Responses API (client dialect `openai-responses`) to Anthropic's Messages API (wire
 * format `anthropic-messages`), so a Responses client (Codex, the AI SDK, LangChain, the Agents SDK) is served by
 * Anthropic. It goes through chat completions (openai-responses-to-openai-chat/through-chat.ts): the Responses request
 * becomes a chat body (input items, tools with namespaces flattened, hosted tools removed and recorded, …) for the
 * `anthropic` profile and model table, which the chat → Messages translator (./openai-chat-to-anthropic-messages.ts)
 * maps; Anthropic's message and stream come back through it as a chat completion and chunks, and become the Responses
 * object and events. What the chat → Messages translator does not carry is settled here:
 *
 * | chat member (from Responses) | Messages |
 * | --- | --- |
 * | `reasoning_effort` (`reasoning.effort`) | removed and recorded: extended thinking would need its signed thinking blocks sent back in every tool-use turn, which this route does not carry, so thinking is not turned on |
 * | `response_format` `json_schema` (`text.format`) | `output_config.format: {type: "json_schema", schema}` (Anthropic's structured output; `name`, `description` and `strict` have no place there and are not sent) |
 * | `response_format` `json_object` | refused (400 naming `text.format.type`): Anthropic has no JSON mode |
 * | no `max_tokens` (no `max_output_tokens`) | the model table's default output tokens of the model (Anthropic requires `max_tokens`; the Responses API's default is the model's limit), else the chat → Messages default |
 *
 * Sources: https://platform.openai.com/docs/api-reference/responses, https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { getModelInfo } from '../../shared/models.ts';
import { badRequest } from '../errors.ts';
import { openAIChatToAnthropicMessages } from './openai-chat-to-anthropic-messages.ts';
import { dropChatMember, responsesThroughChat } from './openai-responses-to-openai-chat/through-chat.ts';
import { isRecord } from './shared/values.ts';
import type { MappingTranslator } from './types.ts';

/** Fits the chat body to the Messages mapping (see the table above); returns the step adding `output_config`, if any. */
function adaptToMessages(body: ChatCompletionRequest, removed: string[]): ((wire: Record<string, unknown>) => void) | null {
  dropChatMember(body, 'reasoning_effort', 'reasoning.effort', removed);
  if (body.max_tokens === undefined && body.max_completion_tokens === undefined) {
    const defaultTokens = getModelInfo('anthropic', body.model)?.defaultOutputTokens;
    if (defaultTokens) body.max_tokens = defaultTokens;
  }
  const format = body.response_format;
  if (format === undefined) return null;
  delete body.response_format;
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.json_schema)) {
    throw badRequest('text.format.type "json_object": Anthropic has no JSON mode; send a json_schema format', 'text.format.type');
  }
  const schema = format.json_schema.schema;
  return (wire) => {
    wire.output_config = { ...(isRecord(wire.output_config) ? wire.output_config : {}), format: { type: 'json_schema', schema } };
  };
}

/** `openai-responses` → `anthropic-messages`, through chat completions. */
export const openAIResponsesToAnthropicMessages: MappingTranslator = responsesThroughChat('anthropic-messages', {
  chat: openAIChatToAnthropicMessages,
  provider: 'anthropic',
  adapt: adaptToMessages,
});
