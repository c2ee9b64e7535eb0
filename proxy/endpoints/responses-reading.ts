/**
 * Where a Responses answer's usage is, and how its stream folds into one `response` object for the log
 * (OpenAI API reference, "Responses" → "Streaming events":
 * https://platform.openai.com/docs/api-reference/responses-streaming). A stream is `response.created`
 * (the response, `status: "in_progress"`, empty `output`), `response.in_progress`, per output item
 * `response.output_item.added`, its parts (`response.content_part.added`, `response.output_text.delta`
 * … `.done`, `response.function_call_arguments.delta` … `.done`, `response.reasoning_summary_part.added`,
 * `response.reasoning_summary_text.delta`), `response.output_item.done` (the whole item), then one of
 * `response.completed`, `response.incomplete` or `response.failed` carrying the final response with its
 * `usage`. Texts are folded from the deltas through the recorder's budget, so what the log keeps of a
 * stream stays bounded however long the answer; the final events' repeated texts are not kept again.
 */
import type { Json, ResponseReading, TextBudget } from './types.ts';

/** Events whose `response` is the final one, with its usage. */
const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Members of a final item that hold texts the deltas already folded (not copied again). */
const TEXT_MEMBERS: ReadonlySet<string> = new Set(['content', 'summary', 'arguments', 'input']);
/** Length (UTF-16 units) above which a finished item's string member is kept through the budget. */
const LONG_STRING = 256;

/** The usage of a stream event: the final response's. */
function usageInEvent(event: Json): unknown {
  return FINAL_EVENTS.has(event.type) ? (event.response?.usage ?? null) : null;
}

/** The output item at the event's `output_index`, or undefined. */
function itemAt(response: Json, event: Json): Json | undefined {
  return typeof event.output_index === 'number' ? (response.output[event.output_index] as Json | undefined) : undefined;
}

/** The part at `list[index]` of an item (made empty, of `type`, when the stream skipped its `added` event). */
function partAt(item: Json, member: 'content' | 'summary', index: unknown, type: string): Json | undefined {
  if (typeof index !== 'number') return undefined;
  const list = (Array.isArray(item[member]) ? item[member] : (item[member] = [])) as Json[];
  return (list[index] ??= { type, text: '' });
}

/** The response members of a lifecycle event (`created`, `in_progress`, a final one), without its output and usage. */
function applyResponse(into: Json, response: unknown): void {
  if (!response || typeof response !== 'object') return;
  const r = response as Json;
  for (const k in r) if (k !== 'output' && k !== 'usage') into[k] = r[k];
}

/** One delta event applied to its item or part; false when the event is not a delta. */
function applyDelta(response: Json, event: Json, text: TextBudget): boolean {
  const delta = event.delta;
  if (typeof delta !== 'string') return false;
  const item = itemAt(response, event);
  if (!item) return true;
  let part: Json | undefined;
  switch (event.type) {
    case 'response.output_text.delta':
      part = partAt(item, 'content', event.content_index, 'output_text');
      if (part) part.text = text.append(part.text, delta);
      return true;
    case 'response.refusal.delta':
      part = partAt(item, 'content', event.content_index, 'refusal');
      if (part) part.refusal = text.append(part.refusal, delta);
      return true;
    case 'response.reasoning_text.delta':
      part = partAt(item, 'content', event.content_index, 'reasoning_text');
      if (part) part.text = text.append(part.text, delta);
      return true;
    case 'response.reasoning_summary_text.delta':
      part = partAt(item, 'summary', event.summary_index, 'summary_text');
      if (part) part.text = text.append(part.text, delta);
      return true;
    case 'response.function_call_arguments.delta':
      item.arguments = text.append(item.arguments, delta);
      return true;
    case 'response.custom_tool_call_input.delta':
      item.input = text.append(item.input, delta);
      return true;
    default:
      return false;
  }
}

/**
 * Folds one Responses stream event into the response assembled so far (`into` null before the
 * first): the response's members from the lifecycle events, items by `output_index`, parts by
 * `content_index`/`summary_index`, texts from the deltas, each finished item's other members
 * (`status`, ids, `encrypted_content`) from `response.output_item.done`. Unknown events change nothing.
 */
export function foldResponsesEvent(into: Json | null, event: Json, text: TextBudget): Json {
  const response = into ?? { object: 'response', output: [] };
  const type = event.type;
  if (typeof type !== 'string' || applyDelta(response, event, text)) return response;
  switch (type) {
    case 'response.output_item.added': {
      if (typeof event.output_index !== 'number' || !event.item || typeof event.item !== 'object') return response;
      const item: Json = { ...(event.item as Json) };
      for (const k of ['content', 'summary'] as const) if (Array.isArray(item[k])) item[k] = (item[k] as Json[]).map((p) => ({ ...p }));
      response.output[event.output_index] = item;
      return response;
    }
    case 'response.content_part.added':
    case 'response.reasoning_summary_part.added': {
      const item = itemAt(response, event);
      const member = type === 'response.content_part.added' ? 'content' : 'summary';
      const index = member === 'content' ? event.content_index : event.summary_index;
      if (item && typeof index === 'number' && event.part && typeof event.part === 'object') {
        const list = (Array.isArray(item[member]) ? item[member] : (item[member] = [])) as Json[];
        list[index] = { ...(event.part as Json) };
      }
      return response;
    }
    case 'response.output_item.done': {
      if (typeof event.output_index !== 'number' || !event.item || typeof event.item !== 'object') return response;
      const done = event.item as Json;
      const item = (response.output[event.output_index] ??= {}) as Json;
      for (const k in done) {
        if (TEXT_MEMBERS.has(k) && item[k] !== undefined) continue;
        const v = done[k];
        // A long string (an image's base64 result, encrypted reasoning) counts against the budget too.
        item[k] = typeof v === 'string' && v.length > LONG_STRING ? text.append(null, v) : v;
      }
      return response;
    }
    default:
      if (type.startsWith('response.') && event.response) applyResponse(response, event.response);
      return response;
  }
}

/**
 * Lifecycle events whose response a final event repeats in full. Each carries the request's tools and
 * instructions echoed (tens of KB for Codex), so the log parses them only when no final event came.
 */
const SUPERSEDED_EVENTS: ReadonlySet<string> = new Set(['response.created', 'response.queued', 'response.in_progress']);

/** Responses: `usage` of a response; a stream's usage from its final event (`response.completed` …). */
export const responsesReading: ResponseReading = {
  usageInBody: (body) => body.usage || null,
  usageInChunk: usageInEvent,
  mergeUsage: null,
  foldChunk: foldResponsesEvent,
  supersededEvents: SUPERSEDED_EVENTS,
  finalEvents: FINAL_EVENTS,
};

/** input_tokens: `{"object": "response.input_tokens", "input_tokens": N}`, kept as the usage; never streamed. */
export const inputTokensReading: ResponseReading = {
  usageInBody: (body) => (typeof body.input_tokens === 'number' ? { input_tokens: body.input_tokens } : null),
  usageInChunk: () => null,
  mergeUsage: null,
  foldChunk: null,
};
