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
 * | `response_format` `json_schema` (`text.format`) | `output_config.format: {type: "json_schema", schema}` (Anthropic's structured output, ./shared/anthropic-output-format.ts: `name` is a label and `strict` is honoured, `description` removed and recorded as `text.format.description`) |
 * | `response_format` `json_object` | refused (400 naming `text.format.type`): Anthropic has no JSON mode |
 * | `tools[i].function.strict: true` (`tools[i].strict`, `tools[i].tools[j].strict`) | removed and recorded, as on the chat route (./openai-chat-to-anthropic-messages/tools.ts) |
 * | no `max_tokens` (no `max_output_tokens`) | the model table's default output tokens of the model (Anthropic requires `max_tokens`; the Responses API's default is the model's limit), else the chat → Messages default |
 * | `temperature` above 1 | refused (400 naming `temperature`) by the chat → Messages translator: Anthropic takes 0 to 1 |
 *
 * What the chat → Messages translator removes of the messages (an image's `detail`) is recorded under the Responses
 * member it came from (`input[2].content[1].detail`).
 * Sources: https://platform.openai.com/docs/api-reference/responses, https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { getModelInfo } from '../../shared/models.ts';
import { openAIChatToAnthropicMessages } from './openai-chat-to-anthropic-messages.ts';
import { dropChatMember, dropStrictTools, responsesThroughChat } from './openai-responses-to-openai-chat/through-chat.ts';
import { anthropicOutputFormat, type OutputFormatPaths } from './shared/anthropic-output-format.ts';
import { isRecord } from './shared/values.ts';
import type { MappingTranslator } from './types.ts';

/** Fits the chat body to the Messages mapping (see the table above); returns the step adding `output_config`, if any. */
function adaptToMessages(body: ChatCompletionRequest, removed: string[], request: Record<string, unknown>): ((wire: Record<string, unknown>) => void) | null {
  dropChatMember(body, 'reasoning_effort', 'reasoning.effort', removed);
  if (body.max_tokens === undefined && body.max_completion_tokens === undefined) {
    const defaultTokens = getModelInfo('anthropic', body.model)?.defaultOutputTokens;
    if (defaultTokens) body.max_tokens = defaultTokens;
  }
  // Recorded here under the Responses names; the chat translator would name the chat tools.
  dropStrictTools(body, request, removed);
  const response = body.response_format;
  if (response === undefined) return null;
  delete body.response_format;
  const format = anthropicOutputFormat(response, RESPONSES_FORMAT_PATHS, removed);
  if (!format) return null;
  return (wire) => {
    wire.output_config = { ...(isRecord(wire.output_config) ? wire.output_config : {}), format };
  };
}
/** Where a Responses client sent the structured output's members (the chat body's `response_format` came from there). */
const RESPONSES_FORMAT_PATHS: OutputFormatPaths = { format: 'text.format', schema: 'text.format' };

/** `openai-responses` → `anthropic-messages`, through chat completions. */
export const openAIResponsesToAnthropicMessages: MappingTranslator = responsesThroughChat('anthropic-messages', {
  chat: openAIChatToAnthropicMessages,
  provider: 'anthropic',
  adapt: adaptToMessages,
});
