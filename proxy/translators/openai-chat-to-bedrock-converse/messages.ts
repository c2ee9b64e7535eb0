/**
 * An OpenAI chat `messages` list as Converse's `system` blocks and alternating `messages` turns, member by member:
 *
 * | chat member | Converse |
 * | --- | --- |
 * | `system`, `developer` messages | `system` text blocks; an image or file part there removed and recorded (Converse's system takes text only) |
 * | `user` messages | user turns; consecutive same-role turns merged |
 * | `assistant` `content`, `tool_calls` | assistant text and `toolUse` blocks (`id` → `toolUseId`, arguments JSON-parsed); a `refusal` part removed and recorded (Converse has no place for an earlier refusal) |
 * | `tool` messages | user `toolResult` blocks (`tool_call_id` → `toolUseId`; text, image and PDF parts as its content) |
 * | `text` / `input_text` parts | `text` blocks |
 * | `image_url` parts | `image` blocks from png, jpeg, gif or webp `data:` URLs (http(s) URLs refused: Converse takes bytes or S3 locations only); `detail` `low`/`high` removed and recorded (Converse sizes images itself; `auto` is that) |
 * | `file` parts | `document` blocks from a PDF `file_data`; `filename` → `name` (in the characters Converse allows) |
 * | `cache_control` (the LiteLLM convention), `prompt_cache_breakpoint` (OpenAI's explicit cache breakpoint) on a part | a `cachePoint` block after the part's (after the `toolResult` in a tool message) |
 * | any other part type (`input_audio`, …), role (`function`) | refused (400 naming it) |
 * | any other message or part member (`name`, `refusal`, `audio`, `function_call`, `reasoning_content`, …) | removed and recorded (`messages[2].name`) |
 *
 * A member set to null, `[]` or `{}` carries nothing and is not reported.
 * Sources: https://platform.openai.com/docs/api-reference/chat/create (`messages`),
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html.
 */
import type { ChatCompletionRequest, ChatMessage } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { parseDataUrl } from '../shared/data-url.ts';
import { toolCallsOf } from '../shared/openai-chat-request.ts';
import { pdfDataOf } from '../shared/pdf-file-part.ts';
import { recordUnmapped } from '../shared/request-members.ts';
import { appendTurn } from '../shared/turns.ts';
import { isRecord } from '../shared/values.ts';
import { CACHE_POINT, type ConverseBlock, type ConverseRequest } from '../wire/bedrock.ts';

const PLAIN_MEMBERS = new Set(['role', 'content']);
const ASSISTANT_MEMBERS = new Set(['role', 'content', 'tool_calls']);
const TOOL_MESSAGE_MEMBERS = new Set(['role', 'content', 'tool_call_id']);
const TEXT_MEMBERS = new Set(['type', 'text', 'cache_control', 'prompt_cache_breakpoint']);
const IMAGE_MEMBERS = new Set(['type', 'image_url', 'cache_control', 'prompt_cache_breakpoint']);
const IMAGE_URL_MEMBERS = new Set(['url', 'detail']);
const FILE_PART_MEMBERS = new Set(['type', 'file', 'cache_control', 'prompt_cache_breakpoint']);

const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Where a content list sits: a system message keeps only text, an assistant message may hold refusal parts. */
type Place = 'system' | 'user' | 'assistant';

/** Bedrock document names allow letters, digits, single spaces, hyphens, parentheses and square brackets. */
function documentName(filename: unknown, fallback: string): string {
  const base = typeof filename === 'string' ? filename.replace(/\.[^.]*$/, '') : '';
  const cleaned = base.replace(/[^A-Za-z0-9 ()[\]-]+/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
  return cleaned || fallback;
}

function imagePart(part: Record<string, unknown>, p: string, removed: string[]): ConverseBlock {
  const image = isRecord(part.image_url) ? part.image_url : {};
  const data = typeof image.url === 'string' ? parseDataUrl(image.url) : null;
  // Own keys only: the client writes the media type, and "constructor" or "__proto__" is no image format.
  const format = data && Object.hasOwn(IMAGE_FORMATS, data.mediaType) ? IMAGE_FORMATS[data.mediaType] : undefined;
  if (!data || !format) throw badRequest(`${p}: bedrock accepts images only as png, jpeg, gif or webp base64 data: URLs`, `${p}.image_url.url`);
  // `auto` (OpenAI's default) leaves the resolution to the model, which is what Converse does.
  if (image.detail !== undefined && image.detail !== null && image.detail !== 'auto') removed.push(`${p}.image_url.detail`);
  recordUnmapped(image, IMAGE_URL_MEMBERS, `${p}.image_url`, removed);
  recordUnmapped(part, IMAGE_MEMBERS, p, removed);
  return { image: { format, source: { bytes: data.base64 } } };
}

function filePart(part: Record<string, unknown>, p: string, index: number, removed: string[]): ConverseBlock {
  const { data, file } = pdfDataOf(part, p, 'bedrock', FILE_PART_MEMBERS, removed);
  return { document: { format: 'pdf', name: documentName(file.filename, `document ${index + 1}`), source: { bytes: data.base64 } } };
}

/** The block of one content part, or null when it is removed (recorded) or carries nothing. */
function partBlock(part: unknown, p: string, index: number, place: Place, removed: string[]): ConverseBlock | null {
  if (!isRecord(part)) throw badRequest(`${p} must be an object`, p);
  switch (part.type) {
    case 'text':
    case 'input_text':
      if (typeof part.text !== 'string') throw badRequest(`${p}.text must be a string`, `${p}.text`);
      recordUnmapped(part, TEXT_MEMBERS, p, removed);
      return part.text === '' ? null : { text: part.text };
    case 'image_url':
    case 'file':
      if (place === 'system') {
        removed.push(p);
        return null;
      }
      return part.type === 'file' ? filePart(part, p, index, removed) : imagePart(part, p, removed);
    case 'refusal':
      if (place !== 'assistant') throw badRequest(`${p}: a refusal part belongs to an assistant message`, `${p}.type`);
      removed.push(p);
      return null;
    default:
      throw badRequest(`${p}: content part type ${JSON.stringify(part.type)} is not supported by bedrock`, `${p}.type`);
  }
}

/** True when a part asks for the prompt up to it to be cached (`cache_control`, or OpenAI's `prompt_cache_breakpoint`). */
function cachesHere(part: unknown): boolean {
  return isRecord(part) && ((part.cache_control !== undefined && part.cache_control !== null) || (part.prompt_cache_breakpoint !== undefined && part.prompt_cache_breakpoint !== null));
}

/** The blocks of a message's content (parts followed by their cache points), and whether a part asked for one. */
function contentBlocks(content: ChatMessage['content'], param: string, place: Place, removed: string[], cachePoints = true): { blocks: ConverseBlock[]; cached: boolean } {
  if (content === undefined || content === null) return { blocks: [], cached: false };
  if (typeof content === 'string') return { blocks: content === '' ? [] : [{ text: content }], cached: false };
  if (!Array.isArray(content)) throw badRequest(`${param} must be a string or an array of content parts`, param);
  const blocks: ConverseBlock[] = [];
  let cached = false;
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const block = partBlock(part, `${param}[${j}]`, j, place, removed);
    if (block) blocks.push(block);
    if (cachesHere(part)) {
      cached = true;
      if (cachePoints) blocks.push(CACHE_POINT);
    }
  }
  return { blocks, cached };
}

function assistantBlocks(message: ChatMessage, param: string, removed: string[]): ConverseBlock[] {
  const { blocks } = contentBlocks(message.content, `${param}.content`, 'assistant', removed);
  for (const { id, name, input } of toolCallsOf(message, param, removed)) blocks.push({ toolUse: { toolUseId: id, name, input } });
  return blocks;
}

/** A tool message's `toolResult` block, followed by a cache point when one of its parts asked for it. */
function toolResultBlocks(message: ChatMessage, param: string, removed: string[]): ConverseBlock[] {
  if (typeof message.tool_call_id !== 'string') throw badRequest(`${param}.tool_call_id is required`, `${param}.tool_call_id`);
  // A cache point cannot stand inside a tool result: it follows the result's block.
  const { blocks, cached } = contentBlocks(message.content, `${param}.content`, 'user', removed, false);
  const result: ConverseBlock = { toolResult: { toolUseId: message.tool_call_id, content: blocks } };
  return cached ? [result, CACHE_POINT] : [result];
}

/** The system blocks and alternating turns of an OpenAI message list, and whether the history holds tool blocks. */
export interface ConverseTurns {
  system: ConverseBlock[];
  messages: ConverseRequest['messages'];
  /** Converse refuses `toolUse` / `toolResult` blocks without a `toolConfig`. */
  hasToolBlocks: boolean;
}

/**
 * Maps `body.messages` (an array, checked by the caller) per the table above, pushing the paths of the members it
 * removes to `removed`.
 * @throws {GatewayError} 400 naming the message or part: an unknown role or part type, a malformed part, an image
 *   that is no png, jpeg, gif or webp data: URL, a file that is no PDF data: URL, a tool call without a function name
 *   or with arguments that are not JSON, a tool message without `tool_call_id`.
 */
export function converseTurns(body: ChatCompletionRequest, removed: string[]): ConverseTurns {
  const system: ConverseBlock[] = [];
  const messages: ConverseRequest['messages'] = [];
  let hasToolBlocks = false;
  for (let i = 0; i < body.messages.length; i++) {
    const message = body.messages[i];
    const param = `messages[${i}]`;
    if (!isRecord(message)) throw badRequest(`${param} must be an object`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentBlocks(message.content, `${param}.content`, 'system', removed).blocks);
        recordUnmapped(message, PLAIN_MEMBERS, param, removed);
        break;
      case 'user':
        appendTurn(messages, 'user', contentBlocks(message.content, `${param}.content`, 'user', removed).blocks);
        recordUnmapped(message, PLAIN_MEMBERS, param, removed);
        break;
      case 'assistant':
        if (message.tool_calls?.length) hasToolBlocks = true;
        appendTurn(messages, 'assistant', assistantBlocks(message, param, removed));
        recordUnmapped(message, ASSISTANT_MEMBERS, param, removed);
        break;
      case 'tool':
        hasToolBlocks = true;
        appendTurn(messages, 'user', toolResultBlocks(message, param, removed));
        recordUnmapped(message, TOOL_MESSAGE_MEMBERS, param, removed);
        break;
      default:
        throw badRequest(`${param}.role ${JSON.stringify(message.role)} is not supported by bedrock`, `${param}.role`);
    }
  }
  return { system, messages, hasToolBlocks };
}
