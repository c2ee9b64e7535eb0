/**
 * OpenAI's stream framing: Server-Sent Events whose `data` is one JSON chunk, ended by
 * `data: [DONE]`; a stream that fails mid-way ends with `data: {"error":{...}}`
 * (https://platform.openai.com/docs/api-reference/chat-streaming).
 */
import type { StreamFraming } from './types.ts';

/** SSE as OpenAI's chat completions stream it. */
export const openAISse: StreamFraming = {
  contentType: 'text/event-stream; charset=utf-8',
  chunk: (json) => `data: ${json}\n\n`,
  error: (json) => `data: ${json}\n\n`,
  doneData: '[DONE]',
};
