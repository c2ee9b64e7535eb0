/**
 * OpenAI chat `file` content parts (`{ type: 'file', file: { file_data, filename } }`) read for the wire formats that
 * take a PDF's bytes inline (Anthropic's and Bedrock Converse's `document` blocks).
 * Source: https://platform.openai.com/docs/api-reference/chat/create (`messages[].content[]`, file content part).
 */
import { badRequest } from '../../errors.ts';
import { parseDataUrl, type DataUrl } from './data-url.ts';
import { recordUnmapped } from './request-members.ts';
import { isRecord } from './values.ts';

/** The members of a part's `file` object that are read: the PDF and its name. */
const FILE_MEMBERS = new Set(['file_data', 'filename']);

/** A file part's PDF: its `file_data` parsed (media type `application/pdf`), and the part's `file` object (for `filename`). */
export interface PdfFile {
  data: DataUrl;
  file: Record<string, unknown>;
}

/**
 * The PDF of the file content part `part` at path `p` (`messages[1].content[0]`): its `file.file_data` as a base64 PDF
 * `data:` URL. The members of `file` other than `file_data` and `filename`, and those of `part` not in `partMembers`
 * (what the caller's wire format maps, e.g. `type`, `file`, `cache_control`), are pushed to `removed` as paths.
 * @throws {GatewayError} 400 naming `<p>.file.file_data` when it is no base64 PDF `data:` URL (`provider`, e.g.
 *   `anthropic`, named as the one that accepts only those).
 */
export function pdfDataOf(part: Record<string, unknown>, p: string, provider: string, partMembers: ReadonlySet<string>, removed: string[]): PdfFile {
  const file = isRecord(part.file) ? part.file : {};
  const data = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
  if (!data || data.mediaType !== 'application/pdf') {
    throw badRequest(`${p}: ${provider} accepts files only as PDF data URLs in file.file_data`, `${p}.file.file_data`);
  }
  recordUnmapped(file, FILE_MEMBERS, `${p}.file`, removed);
  recordUnmapped(part, partMembers, p, removed);
  return { data, file };
}
