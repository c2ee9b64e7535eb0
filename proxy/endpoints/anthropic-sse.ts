/**
 * Anthropic's stream framing for the Messages kinds: Server-Sent Events whose `event` names the
 * event type and whose `data` is its JSON with the same `type` (`message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `ping`); a failed stream ends with `event: error`. No closing
 * sentinel: `message_stop` is an event like the others.
 * Source: Anthropic API reference, "Streaming messages" (https://docs.anthropic.com/en/docs/build-with-claude/streaming).
 */
import type { StreamFraming } from './types.ts';

/** The `type` member of one event's JSON text (`error` when it has none it can be read by). */
function eventType(json: string): string {
  try {
    const type = (JSON.parse(json) as { type?: unknown }).type;
    return typeof type === 'string' && /^[a-z_]+$/.test(type) ? type : 'error';
  } catch {
    return 'error';
  }
}

/** SSE as Anthropic's Messages API streams it. */
export const anthropicSse: StreamFraming = {
  contentType: 'text/event-stream; charset=utf-8',
  // The gateway writes its own chunks only in tests and errors; the event name is the data's type.
  chunk: (json) => `event: ${eventType(json)}\ndata: ${json}\n\n`,
  error: (json) => `event: error\ndata: ${json}\n\n`,
  doneData: null,
};
