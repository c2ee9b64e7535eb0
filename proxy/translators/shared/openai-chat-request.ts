/**
 * Readers of an OpenAI chat-completions request body, for translators into other wire formats: message text,
 * tool-call arguments, stop sequences, the output-token cap, and the members no other format can express.
 * Source: OpenAI API reference, "Create chat completion" (https://platform.openai.com/docs/api-reference/chat/create).
 */
import type { ChatCompletionRequest, ChatMessage } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';

/** The text of an OpenAI message content (a string, or the `text` of its `text` / `input_text` parts, joined). */
export function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && (part.type === 'text' || part.type === 'input_text') && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
}

/**
 * Parses an assistant tool call's `arguments` JSON string into an object (an empty string is `{}`).
 * @throws {GatewayError} 400 naming `param` when the text is not JSON.
 */
export function parseToolArguments(text: string | undefined, param: string): unknown {
  if (text === undefined || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`${param} is not valid JSON`, param);
  }
}

/** OpenAI's `stop` (a string or an array of strings) as a list without empty strings; undefined when absent or empty. */
export function stopList(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (typeof stop === 'string') return stop === '' ? undefined : [stop];
  if (Array.isArray(stop)) {
    const list = stop.filter((s): s is string => typeof s === 'string' && s !== '');
    return list.length ? list : undefined;
  }
  return undefined;
}

/** The client's output-token cap (tokens): `max_completion_tokens`, else `max_tokens`; undefined when neither is set. */
export function maxTokensOf(body: ChatCompletionRequest): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Rejects request members no native wire format can express: `n` > 1.
 * @throws {GatewayError} 400 `unsupported_parameter` naming `n`.
 */
export function assertSingleChoice(body: ChatCompletionRequest, provider: string): void {
  const n = body.n;
  if (typeof n === 'number' && n > 1) throw badRequest(`${provider} does not support n > 1`, 'n', 'unsupported_parameter');
}
