/**
 * Where each chat message of a translated Responses request came from, so that an error the chat → wire translator
 * throws (../through-chat.ts: Responses → chat → Anthropic or Bedrock) names the client's member, not the chat body's:
 * `messages[2].content[1].file.file_data` becomes `input[3].content[1].file_data`, and
 * `messages[4].tool_calls[1].function.arguments` becomes `input[7].arguments` (the second `function_call` item merged
 * into that assistant message). A path no origin covers keeps the message's item path, never a chat path.
 */
import { GatewayError } from '../../errors.ts';

/** The Responses members one chat message was made from. */
export interface MessageOrigin {
  /** The item (`input[3]`), `instructions`, or `input` for a string input; the first item of a merged message. */
  path: string;
  /** By chat content part index, the Responses part each came from (`input[3].content[1]`); null: none kept apart. */
  parts: string[] | null;
  /** By tool call index, the `function_call` (or `custom_tool_call`) item each came from. */
  calls: string[];
}

/** Chat part members → the Responses part's (`image_url.url` is `input_image.image_url`, `file.file_data` is `input_file.file_data`). */
const PART_MEMBERS: Record<string, string> = {
  '.text': '.text',
  '.type': '.type',
  '.image_url': '.image_url',
  '.image_url.url': '.image_url',
  '.image_url.detail': '.detail',
  '.file.file_data': '.file_data',
  '.file.file_id': '.file_id',
};

/** Chat tool call members → the `function_call` item's. */
const CALL_MEMBERS: Record<string, string> = { '.function.arguments': '.arguments', '.function.name': '.name', '.id': '.call_id' };

const MESSAGE_PATH = /^messages\[(\d+)\](?:\.(content|tool_calls)\[(\d+)\])?(.*)$/;

/** The Responses path of chat path `chatPath` (`messages[i]…`); other paths are returned as they are. */
export function responsesPathOf(chatPath: string, origins: readonly MessageOrigin[]): string {
  const m = MESSAGE_PATH.exec(chatPath);
  if (!m) return chatPath;
  const origin = origins[Number(m[1])];
  if (!origin) return 'input';
  const index = m[3] === undefined ? -1 : Number(m[3]);
  const rest = m[4]!;
  if (m[2] === 'content' && origin.parts?.[index] !== undefined) return origin.parts[index]! + (PART_MEMBERS[rest] ?? '');
  if (m[2] === 'tool_calls' && origin.calls[index] !== undefined) return origin.calls[index]! + (CALL_MEMBERS[rest] ?? '');
  return origin.path;
}

/** Chat paths inside an error message (`messages[2].content[1].file.file_data`). */
const PATHS_IN_TEXT = /messages\[\d+\](?:\.[a-z_]+|\[\d+\])*/g;

/**
 * `err` in the Responses client's terms: a 400 naming chat messages (param and message text) is rebuilt naming the
 * Responses members they came from; anything else is returned as it is.
 */
export function inResponsesTerms(err: unknown, origins: readonly MessageOrigin[]): unknown {
  if (!(err instanceof GatewayError) || err.param === null || !err.param.startsWith('messages')) return err;
  const message = err.message.replace(PATHS_IN_TEXT, (p) => responsesPathOf(p, origins));
  return new GatewayError(err.status, message, err.type, err.code, responsesPathOf(err.param, origins), err.headers);
}
