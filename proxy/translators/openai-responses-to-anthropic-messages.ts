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
 *
 * Anthropic's answer is an ordered list of content blocks, which a chat completion cannot hold (one text, one
 * reasoning, then the tool calls): the non-streamed answer keeps that order, each run of `text`, `thinking` or
 * `tool_use` blocks one output item in turn (adjacent texts one message, adjacent thinking one reasoning item), as
 * the stream yields them: `[text, tool_use, text, thinking, text]` is `[message, function_call, message, reasoning,
 * message]`, not one message of the texts joined.
 * Sources: https://platform.openai.com/docs/api-reference/responses, https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { getModelInfo } from '../../shared/models.ts';
import { fromAnthropicMessage, openAIChatToAnthropicMessages } from './openai-chat-to-anthropic-messages.ts';
import { toResponse, type OutputSegment } from './openai-responses-to-openai-chat/response.ts';
import { dropChatMember, dropStrictTools, responsesThroughChat } from './openai-responses-to-openai-chat/through-chat.ts';
import { anthropicOutputFormat, type OutputFormatPaths } from './shared/anthropic-output-format.ts';
import { isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from './types.ts';
import type { AnthropicMessage } from './wire/anthropic-messages.ts';

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

/**
 * The output order of Anthropic's content `blocks` (see the module comment): a run of non-empty `text` blocks is one
 * message, a run of non-empty `thinking` blocks one reasoning, each `tool_use` the chat completion's next tool call
 * (`fromAnthropicMessage` makes one per `tool_use` block, in order); other blocks add nothing, as in the chat completion.
 */
export function anthropicOutputOrder(blocks: readonly unknown[]): OutputSegment[] {
  const order: OutputSegment[] = [];
  let calls = 0;
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    const last = order.at(-1);
    if (block.type === 'tool_use') order.push({ kind: 'tool', call: calls++ });
    else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
      if (last?.kind === 'message') last.text += block.text;
      else order.push({ kind: 'message', text: block.text, refusal: '' });
    } else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking !== '') {
      if (last?.kind === 'reasoning') last.text += block.thinking;
      else order.push({ kind: 'reasoning', text: block.thinking });
    }
  }
  return order;
}

const throughChat = responsesThroughChat('anthropic-messages', {
  chat: openAIChatToAnthropicMessages,
  provider: 'anthropic',
  adapt: adaptToMessages,
});

/** Anthropic's `message` as a Responses object in its blocks' order; a body that is not a message is the chat step's 502. */
function translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed) || !Array.isArray(parsed.content)) return throughChat.translateResponse(body, call);
  const chat = fromAnthropicMessage(parsed as unknown as AnthropicMessage) as unknown as Record<string, unknown>;
  return { status: 200, body: toResponse(chat, call, anthropicOutputOrder(parsed.content)) };
}

/** `openai-responses` → `anthropic-messages`, through chat completions (the non-streamed answer in Anthropic's block order). */
export const openAIResponsesToAnthropicMessages: MappingTranslator = { ...throughChat, translateResponse };
