/**
 * Content parts of Responses `message` items (and of `function_call_output` outputs) as chat-completions content.
 *
 * - `input_text` → a `text` part; text-only content is sent as one string, parts joined by a blank line;
 * - `input_image` → an `image_url` part (`image_url` a URL or a `data:` URL; `detail` `low`/`high` kept, `auto` is
 *   chat's default, `original` removed and recorded); a Files API `file_id` is refused (400): chat image parts take
 *   URLs only; a provider without images (DeepSeek) refuses the part (400);
 * - `input_file` → a `file` part (`file_data`, `filename`) where the provider takes file parts (OpenAI, Azure,
 *   OpenRouter, unknown), `file_id` only where the provider can resolve OpenAI file ids (OpenAI, Azure); `file_url`
 *   is refused (400): chat file parts take inline data only;
 * - in an assistant message: `output_text` (and `input_text`) → text, `refusal` → its text; `annotations` and
 *   `logprobs` the model wrote earlier are removed and recorded when not empty.
 * Sources: https://platform.openai.com/docs/api-reference/responses/create (input content),
 * https://platform.openai.com/docs/api-reference/chat/create (`text`, `image_url`, `file` parts).
 */
import type { ChatContentPart } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { targetName, type RequestBuild } from './build.ts';

/** Separator of text parts joined into one message string. */
export const PART_SEPARATOR = '\n\n';

const TEXT_MEMBERS = new Set(['type', 'text']);
const IMAGE_MEMBERS = new Set(['type', 'image_url', 'file_id', 'detail']);
const FILE_MEMBERS = new Set(['type', 'file_data', 'file_id', 'filename']);
const REFUSAL_MEMBERS = new Set(['type', 'refusal']);

/**
 * One part of a user message or tool output as a chat part (see the module comment).
 * @throws {GatewayError} 400 naming the part's member the provider cannot take, or `<path>.type` for another part type.
 */
export function userPart(raw: unknown, path: string, b: RequestBuild): ChatContentPart {
  const part = objectAt(raw, path);
  switch (part.type) {
    case 'input_text':
      recordUnmapped(part, TEXT_MEMBERS, path, b.removed);
      return { type: 'text', text: stringAt(part.text, `${path}.text`) };
    case 'input_image':
      return imagePart(part, path, b);
    case 'input_file':
      return filePart(part, path, b);
    default:
      throw badRequest(`${path}.type ${JSON.stringify(part.type)} cannot be translated for ${targetName(b)} here`, `${path}.type`);
  }
}

function imagePart(part: Record<string, unknown>, path: string, b: RequestBuild): ChatContentPart {
  if (!b.profile.images) throw badRequest(`${path}: ${targetName(b)} does not accept images`, path);
  if (part.file_id !== undefined && part.file_id !== null) {
    throw badRequest(`${path}.file_id: an OpenAI file id cannot be resolved for ${targetName(b)}; send image_url (a URL or a data: URL)`, `${path}.file_id`);
  }
  const url = stringAt(part.image_url, `${path}.image_url`);
  recordUnmapped(part, IMAGE_MEMBERS, path, b.removed);
  const image: { url: string; detail?: string } = { url };
  if (part.detail === 'low' || part.detail === 'high') image.detail = part.detail;
  else if (part.detail !== undefined && part.detail !== null && part.detail !== 'auto') b.removed.push(`${path}.detail`);
  return { type: 'image_url', image_url: image };
}

function filePart(part: Record<string, unknown>, path: string, b: RequestBuild): ChatContentPart {
  if (part.file_url !== undefined && part.file_url !== null) {
    throw badRequest(`${path}.file_url: chat completions take files inline only; send file_data`, `${path}.file_url`);
  }
  const file: Record<string, string> = {};
  if (part.file_id !== undefined && part.file_id !== null) {
    if (!b.profile.fileIds) {
      throw badRequest(`${path}.file_id: an OpenAI file id cannot be resolved for ${targetName(b)}; send file_data`, `${path}.file_id`);
    }
    file.file_id = stringAt(part.file_id, `${path}.file_id`);
  } else {
    if (!b.profile.fileParts) throw badRequest(`${path}: ${targetName(b)} does not accept files`, path);
    file.file_data = stringAt(part.file_data, `${path}.file_data`);
  }
  if (typeof part.filename === 'string' && part.filename !== '') file.filename = part.filename;
  recordUnmapped(part, FILE_MEMBERS, path, b.removed);
  return { type: 'file', file };
}

/**
 * The text of an assistant message's content: a string, or `output_text` / `input_text` / `refusal` parts
 * concatenated (one model turn, so no separator).
 * @throws {GatewayError} 400 naming a part of another type.
 */
export function assistantText(content: unknown, path: string, b: RequestBuild): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content parts`, path);
  let text = '';
  content.forEach((raw, j) => {
    const p = `${path}[${j}]`;
    const part = objectAt(raw, p);
    if (part.type === 'output_text' || part.type === 'input_text') {
      text += stringAt(part.text, `${p}.text`);
      recordUnmapped(part, TEXT_MEMBERS, p, b.removed);
    } else if (part.type === 'refusal') {
      text += stringAt(part.refusal, `${p}.refusal`);
      recordUnmapped(part, REFUSAL_MEMBERS, p, b.removed);
    } else {
      throw badRequest(`${p}.type ${JSON.stringify(part.type)} cannot be translated in an assistant message`, `${p}.type`);
    }
  });
  return text;
}

/**
 * Text-only content (`system` and `developer` messages) as one string, parts joined by {@link PART_SEPARATOR}.
 * @throws {GatewayError} 400 naming a part that is not `input_text`.
 */
export function textOnly(content: unknown, path: string, b: RequestBuild): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content parts`, path);
  return content
    .map((raw, j) => {
      const p = `${path}[${j}]`;
      const part = objectAt(raw, p);
      if (part.type !== 'input_text') throw badRequest(`${p}.type must be "input_text" here, got ${JSON.stringify(part.type)}`, `${p}.type`);
      recordUnmapped(part, TEXT_MEMBERS, p, b.removed);
      return stringAt(part.text, `${p}.text`);
    })
    .join(PART_SEPARATOR);
}

/** Parts as a message's content: one string when they are all text (joined by {@link PART_SEPARATOR}), else the parts. */
export function partsContent(parts: ChatContentPart[]): string | ChatContentPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => p.text as string).join(PART_SEPARATOR);
  return parts;
}
