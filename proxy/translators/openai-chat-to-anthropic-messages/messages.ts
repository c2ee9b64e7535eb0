/**
 * An OpenAI chat `messages` list as Anthropic's `system` blocks and alternating `messages` turns, member by member:
 *
 * | chat member | Messages |
 * | --- | --- |
 * | `system`, `developer` messages | `system` text blocks; a non-text part there (OpenAI takes only text) removed and recorded |
 * | `user` messages | user turns; consecutive same-role turns merged |
 * | `assistant` `content`, `tool_calls` | assistant text and `tool_use` blocks (arguments JSON-parsed); a `refusal` part or member removed and recorded (Anthropic has no place for an earlier refusal) |
 * | `tool` messages | user `tool_result` blocks (`tool_call_id` → `tool_use_id`) |
 * | `text` / `input_text` parts | `text` blocks; `cache_control` kept (the LiteLLM convention Anthropic understands) |
 * | `image_url` parts | `image` blocks: `data:` URLs as base64, http(s) URLs as url sources; `detail` `low`/`high` removed and recorded (Anthropic sizes images itself; `auto` is that) |
 * | `file` parts | `document` blocks from a PDF `file_data`; `filename` → `title` |
 * | any other part type (`input_audio`, …), role (`function`) | refused (400 naming it) |
 * | any other message or part member (`name`, `audio`, `function_call`, `reasoning_content`, …) | removed and recorded (`messages[2].name`) |
 *
 * A member set to null, `[]` or `{}` carries nothing and is not reported.
 * Sources: https://platform.openai.com/docs/api-reference/chat/create (`messages`), https://docs.anthropic.com/en/api/messages.
 */
import type { ChatCompletionRequest, ChatMessage } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { parseDataUrl } from '../shared/data-url.ts';
import { toolCallsOf } from '../shared/openai-chat-request.ts';
import { pdfDataOf } from '../shared/pdf-file-part.ts';
import { recordUnmapped } from '../shared/request-members.ts';
import { appendTurn } from '../shared/turns.ts';
import { isRecord } from '../shared/values.ts';
import type { AnthropicBlock, AnthropicMessageParam } from '../wire/anthropic-messages.ts';

const PLAIN_MEMBERS = new Set(['role', 'content']);
const ASSISTANT_MEMBERS = new Set(['role', 'content', 'tool_calls']);
const TOOL_MESSAGE_MEMBERS = new Set(['role', 'content', 'tool_call_id']);
const TEXT_MEMBERS = new Set(['type', 'text', 'cache_control']);
const IMAGE_MEMBERS = new Set(['type', 'image_url', 'cache_control']);
const IMAGE_URL_MEMBERS = new Set(['url', 'detail']);
const FILE_PART_MEMBERS = new Set(['type', 'file', 'cache_control']);

/** Where a content list sits: a system message keeps only text, an assistant message may hold refusal parts. */
type Place = 'system' | 'user' | 'assistant';

function imageBlock(url: string, param: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (data) {
    if (!data.mediaType.startsWith('image/')) throw badRequest(`${param}: expected an image data URL, got ${data.mediaType}`, param);
    return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw badRequest(`${param}: image URLs must be data: (base64) or http(s) URLs`, param);
}

function imagePart(part: Record<string, unknown>, p: string, removed: string[]): AnthropicBlock {
  const image = part.image_url;
  const url = typeof image === 'string' ? image : isRecord(image) ? image.url : undefined;
  if (typeof url !== 'string') throw badRequest(`${p}.image_url.url must be a string`, `${p}.image_url.url`);
  if (isRecord(image)) {
    // `auto` (OpenAI's default) leaves the resolution to the model, which is what Anthropic does.
    if (image.detail !== undefined && image.detail !== null && image.detail !== 'auto') removed.push(`${p}.image_url.detail`);
    recordUnmapped(image, IMAGE_URL_MEMBERS, `${p}.image_url`, removed);
  }
  recordUnmapped(part, IMAGE_MEMBERS, p, removed);
  return imageBlock(url, `${p}.image_url.url`);
}

function filePart(part: Record<string, unknown>, p: string, removed: string[]): AnthropicBlock {
  const { data, file } = pdfDataOf(part, p, 'anthropic', FILE_PART_MEMBERS, removed);
  const block: AnthropicBlock = { type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
  if (typeof file.filename === 'string' && file.filename !== '') block.title = file.filename;
  return block;
}

/** The block of one content part, or null when it is removed (recorded) or carries nothing. */
function partBlock(part: unknown, p: string, place: Place, removed: string[]): AnthropicBlock | null {
  if (!isRecord(part)) throw badRequest(`${p} must be an object`, p);
  let block: AnthropicBlock;
  switch (part.type) {
    case 'text':
    case 'input_text':
      if (typeof part.text !== 'string') throw badRequest(`${p}.text must be a string`, `${p}.text`);
      recordUnmapped(part, TEXT_MEMBERS, p, removed);
      if (part.text === '') return null;
      block = { type: 'text', text: part.text };
      break;
    case 'image_url':
    case 'file':
      if (place === 'system') {
        removed.push(p);
        return null;
      }
      block = part.type === 'file' ? filePart(part, p, removed) : imagePart(part, p, removed);
      break;
    case 'refusal':
      if (place !== 'assistant') throw badRequest(`${p}: a refusal part belongs to an assistant message`, `${p}.type`);
      removed.push(p);
      return null;
    default:
      throw badRequest(`${p}: content part type ${JSON.stringify(part.type)} is not supported by anthropic`, `${p}.type`);
  }
  if (part.cache_control !== undefined) block.cache_control = part.cache_control;
  return block;
}

function contentBlocks(content: ChatMessage['content'], param: string, place: Place, removed: string[]): AnthropicBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(`${param} must be a string or an array of content parts`, param);
  const blocks: AnthropicBlock[] = [];
  for (let j = 0; j < content.length; j++) {
    const block = partBlock(content[j], `${param}[${j}]`, place, removed);
    if (block) blocks.push(block);
  }
  return blocks;
}

function assistantBlocks(message: ChatMessage, param: string, removed: string[]): AnthropicBlock[] {
  const blocks = contentBlocks(message.content, `${param}.content`, 'assistant', removed);
  for (const { id, name, input } of toolCallsOf(message, param, removed)) blocks.push({ type: 'tool_use', id, name, input });
  return blocks;
}

function toolResult(message: ChatMessage, param: string, removed: string[]): AnthropicBlock {
  if (typeof message.tool_call_id !== 'string') throw badRequest(`${param}.tool_call_id is required`, `${param}.tool_call_id`);
  const blocks = typeof message.content === 'string' ? null : contentBlocks(message.content, `${param}.content`, 'user', removed);
  const content = blocks === null ? message.content : blocks.length ? blocks : '';
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content };
}

/** The system text blocks and alternating turns of an OpenAI message list. */
export interface AnthropicTurns {
  systemBlocks: AnthropicBlock[];
  messages: AnthropicMessageParam[];
}

/**
 * Maps `body.messages` (an array, checked by the caller) per the table above, pushing the paths of the members it
 * removes to `removed`.
 * @throws {GatewayError} 400 naming the message or part: an unknown role or part type, a malformed part, a tool call
 *   without a function name or with arguments that are not JSON, a tool message without `tool_call_id`.
 */
export function anthropicTurns(body: ChatCompletionRequest, removed: string[]): AnthropicTurns {
  const systemBlocks: AnthropicBlock[] = [];
  const messages: AnthropicMessageParam[] = [];
  for (let i = 0; i < body.messages.length; i++) {
    const message = body.messages[i];
    const param = `messages[${i}]`;
    if (!isRecord(message)) throw badRequest(`${param} must be an object`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        systemBlocks.push(...contentBlocks(message.content, `${param}.content`, 'system', removed));
        recordUnmapped(message, PLAIN_MEMBERS, param, removed);
        break;
      case 'user':
        appendTurn(messages, 'user', contentBlocks(message.content, `${param}.content`, 'user', removed));
        recordUnmapped(message, PLAIN_MEMBERS, param, removed);
        break;
      case 'assistant':
        appendTurn(messages, 'assistant', assistantBlocks(message, param, removed));
        recordUnmapped(message, ASSISTANT_MEMBERS, param, removed);
        break;
      case 'tool':
        appendTurn(messages, 'user', [toolResult(message, param, removed)]);
        recordUnmapped(message, TOOL_MESSAGE_MEMBERS, param, removed);
        break;
      default:
        throw badRequest(`${param}.role ${JSON.stringify(message.role)} is not supported by anthropic`, `${param}.role`);
    }
  }
  return { systemBlocks, messages };
}
