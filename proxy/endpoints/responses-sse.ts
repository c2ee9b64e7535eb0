/**
 * The Responses API's stream framing: Server-Sent Events whose `event` names the event type and whose
 * `data` is its JSON with the same `type` (`response.created`, `response.output_text.delta`, …,
 * `response.completed`); no closing sentinel. A stream the gateway has to cut (the provider's
 * connection lost or silent mid-answer) ends with the API's `error` event,
 * `{"type":"error","code","message","param"}`, which the openai SDKs raise as an error.
 * Source: OpenAI API reference, "Responses" → "Streaming events" (`error`:
 * https://platform.openai.com/docs/api-reference/responses-streaming/error).
 */
import type { StreamFraming } from './types.ts';

/** The `type` member of one event's JSON text (`error` when it has none it can be read by). */
function eventType(json: string): string {
  try {
    const type = (JSON.parse(json) as { type?: unknown }).type;
    return typeof type === 'string' && /^[a-z_.]+$/.test(type) ? type : 'error';
  } catch {
    return 'error';
  }
}

/**
 * The `data` of an `error` event for a gateway error body `{"error": {message, type, param, code}}`
 * (the Responses kinds' error shape): the error's members at the top level, `code` its code or else its type.
 */
export function responsesErrorEventData(json: string): string {
  let error: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(json) as { error?: unknown };
    if (parsed && typeof parsed.error === 'object' && parsed.error !== null) error = parsed.error as Record<string, unknown>;
  } catch {
    error = { message: json };
  }
  return JSON.stringify({ type: 'error', code: error.code ?? error.type ?? null, message: error.message ?? 'stream failed', param: error.param ?? null });
}

/** SSE as OpenAI's Responses API streams it. */
export const responsesSse: StreamFraming = {
  contentType: 'text/event-stream; charset=utf-8',
  // The gateway writes its own events only in tests and errors; the event name is the data's type.
  chunk: (json) => `event: ${eventType(json)}\ndata: ${json}\n\n`,
  error: (json) => `event: error\ndata: ${responsesErrorEventData(json)}\n\n`,
  doneData: null,
};
