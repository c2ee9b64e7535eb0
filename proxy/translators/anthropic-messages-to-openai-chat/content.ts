/**
 * Messages content blocks a user sends (text, image, document) as chat-completions content parts, and the joining
 * of text blocks into one string.
 * Sources: https://docs.anthropic.com/en/api/messages (content blocks),
 * https://platform.openai.com/docs/api-reference/chat/create (user message content parts: `text`, `image_url`, `file`).
 */
import type { ChatContentPart } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { isPresent, objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { targetName, type RequestBuild } from './build.ts';

/** Separator of text blocks joined into one message string (system, user and tool-result text). */
export const BLOCK_SEPARATOR = '\n\n';

const TEXT_MEMBERS = new Set(['type', 'text']);
const IMAGE_MEMBERS = new Set(['type', 'source']);
const DOCUMENT_MEMBERS = new Set(['type', 'source', 'title', 'context']);

/** The text of a `text` block (its other members, such as `cache_control` and `citations`, recorded as removed). */
export function textOfBlock(block: Record<string, unknown>, path: string, b: RequestBuild): string {
  const text = stringAt(block.text, `${path}.text`);
  recordUnmapped(block, TEXT_MEMBERS, path, b.removed, isPresent);
  return text;
}

/**
 * Text-only content (a string or `text` blocks, as `system` and `role: "system"` messages hold) as one string,
 * blocks joined by {@link BLOCK_SEPARATOR}.
 * @throws {GatewayError} 400 naming the block when one is not `text`.
 */
export function textOnly(content: unknown, path: string, b: RequestBuild): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of text blocks`, path);
  const texts: string[] = [];
  content.forEach((raw, j) => {
    const block = objectAt(raw, `${path}[${j}]`);
    if (block.type !== 'text') throw badRequest(`${path}[${j}].type must be "text" here, got ${JSON.stringify(block.type)}`, `${path}[${j}].type`);
    texts.push(textOfBlock(block, `${path}[${j}]`, b));
  });
  return texts.join(BLOCK_SEPARATOR);
}

/**
 * An `image` block as an `image_url` part: a base64 source becomes a `data:<media type>;base64,` URL, a `url` source
 * its URL.
 * @throws {GatewayError} 400 naming the block when the provider takes no images (DeepSeek), or naming `source.type`
 *   for a Files API (`file`) source, which no OpenAI-compatible provider can read.
 */
export function imagePart(block: Record<string, unknown>, path: string, b: RequestBuild): ChatContentPart {
  if (!b.profile.images) throw badRequest(`${path}: ${targetName(b)} does not accept images`, path);
  const source = objectAt(block.source, `${path}.source`);
  recordUnmapped(block, IMAGE_MEMBERS, path, b.removed, isPresent);
  if (source.type === 'base64') {
    const mediaType = stringAt(source.media_type, `${path}.source.media_type`);
    const data = stringAt(source.data, `${path}.source.data`);
    return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
  }
  if (source.type === 'url') return { type: 'image_url', image_url: { url: stringAt(source.url, `${path}.source.url`) } };
  throw badRequest(`${path}.source.type ${JSON.stringify(source.type)}: only base64 and url image sources can be translated`, `${path}.source.type`);
}

/**
 * A `document` block as content parts:
 * - a base64 PDF → a `file` part (`file_data` a `data:application/pdf;base64,` URL, `filename` the title or
 *   `document.pdf`), preceded by a text part with the `context` when there is one;
 * - a plain-text (`text`) or `content` source → one text part: title, context and the text, joined by blank lines.
 * `citations` (and any other member) is recorded as removed: the provider cannot cite.
 * @throws {GatewayError} 400 naming the block when a PDF goes to a provider that takes no `file` parts, or naming
 *   `source.type` for `url` and `file` sources (chat completions take documents inline only).
 */
export function documentParts(block: Record<string, unknown>, path: string, b: RequestBuild): ChatContentPart[] {
  const source = objectAt(block.source, `${path}.source`);
  const title = typeof block.title === 'string' && block.title !== '' ? block.title : undefined;
  const context = typeof block.context === 'string' && block.context !== '' ? block.context : undefined;
  recordUnmapped(block, DOCUMENT_MEMBERS, path, b.removed, isPresent);
  switch (source.type) {
    case 'base64': {
      const mediaType = stringAt(source.media_type, `${path}.source.media_type`);
      if (mediaType !== 'application/pdf') {
        throw badRequest(`${path}.source.media_type must be application/pdf for a base64 document`, `${path}.source.media_type`);
      }
      if (!b.profile.fileParts) throw badRequest(`${path}: ${targetName(b)} does not accept PDF documents`, path);
      const file: ChatContentPart = {
        type: 'file',
        file: { filename: title ?? 'document.pdf', file_data: `data:application/pdf;base64,${stringAt(source.data, `${path}.source.data`)}` },
      };
      return context ? [{ type: 'text', text: context }, file] : [file];
    }
    case 'text':
      return [{ type: 'text', text: joinPresent(title, context, stringAt(source.data, `${path}.source.data`)) }];
    case 'content':
      return [{ type: 'text', text: joinPresent(title, context, textOnly(source.content, `${path}.source.content`, b)) }];
    default:
      throw badRequest(
        `${path}.source.type ${JSON.stringify(source.type)}: only base64 PDF, text and content document sources can be translated`,
        `${path}.source.type`,
      );
  }
}

function joinPresent(...parts: Array<string | undefined>): string {
  return parts.filter((p): p is string => p !== undefined).join(BLOCK_SEPARATOR);
}

/** Parts as a message's content: one string when they are all text (joined by {@link BLOCK_SEPARATOR}), else the parts. */
export function partsContent(parts: ChatContentPart[]): string | ChatContentPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => p.text as string).join(BLOCK_SEPARATOR);
  return parts;
}
