/**
 * Where a Messages response's usage is, and how its stream folds into one `message` for the log
 * (Anthropic API reference, "Streaming messages":
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming). A stream is `message_start`
 * (the message with empty content and the input usage), per block `content_block_start`,
 * `content_block_delta` (`text_delta`, `thinking_delta`, `signature_delta`, `input_json_delta`,
 * `citations_delta`) and `content_block_stop`, then `message_delta` (`stop_reason`,
 * `stop_sequence`, cumulative output usage) and `message_stop`.
 */
import type { Json, ResponseReading, TextBudget } from './types.ts';

/** The partial JSON of a `tool_use` block's input, by block, until its `content_block_stop`. */
const partialJson = new WeakMap<Json, string>();

/** The usage of a stream event: `message_start`'s message usage, or `message_delta`'s. */
function usageInEvent(event: Json): unknown {
  if (event.type === 'message_start') return event.message?.usage ?? null;
  if (event.type === 'message_delta') return event.usage ?? null;
  return null;
}

/**
 * Joins a stream's usage parts: `message_delta`'s counts are cumulative and win where they are
 * numbers; what only `message_start` said (input and cache counts) is kept.
 */
export function mergeMessagesUsage(previous: unknown, next: unknown): unknown {
  if (previous === null || typeof previous !== 'object') return next;
  const merged: Json = { ...(previous as Json) };
  for (const [k, v] of Object.entries(next as Json)) if (v !== null && v !== undefined) merged[k] = v;
  return merged;
}

/** One `content_block_delta` applied to its block. Texts grow through the recorder's budget. */
function applyDelta(block: Json, delta: Json, text: TextBudget): void {
  switch (delta.type) {
    case 'text_delta':
      if (typeof delta.text === 'string') block.text = text.append(block.text, delta.text);
      return;
    case 'thinking_delta':
      if (typeof delta.thinking === 'string') block.thinking = text.append(block.thinking, delta.thinking);
      return;
    case 'signature_delta':
      if (typeof delta.signature === 'string') block.signature = delta.signature;
      return;
    case 'input_json_delta':
      if (typeof delta.partial_json === 'string') partialJson.set(block, text.append(partialJson.get(block), delta.partial_json));
      return;
    case 'citations_delta':
      if (delta.citation !== undefined) ((block.citations ??= []) as unknown[]).push(delta.citation);
      return;
    default:
  }
}

/** A block's collected input JSON becomes its `input` (left as the text when it does not parse: a cut stream). */
function closeBlock(block: Json): void {
  const partial = partialJson.get(block);
  if (partial === undefined) return;
  partialJson.delete(block);
  try {
    block.input = partial === '' ? {} : JSON.parse(partial);
  } catch {
    block.input = partial;
  }
}

/**
 * Folds one Messages stream event into the `message` assembled so far (`into` null before
 * `message_start`): blocks by `index`, deltas into them, `stop_reason`/`stop_sequence` from
 * `message_delta`. `ping`, `message_stop` and unknown events change nothing.
 */
export function foldMessagesEvent(into: Json | null, event: Json, text: TextBudget): Json {
  const message = into ?? { type: 'message', role: 'assistant', content: [] };
  switch (event.type) {
    case 'message_start': {
      const m = (event.message ?? {}) as Json;
      for (const k in m) if (k !== 'content' && k !== 'usage') message[k] = m[k];
      if (!Array.isArray(message.content)) message.content = [];
      return message;
    }
    case 'content_block_start':
      if (typeof event.index === 'number' && event.content_block && typeof event.content_block === 'object') message.content[event.index] = { ...event.content_block };
      return message;
    case 'content_block_delta': {
      const block = message.content[event.index] as Json | undefined;
      if (block && event.delta && typeof event.delta === 'object') applyDelta(block, event.delta as Json, text);
      return message;
    }
    case 'content_block_stop': {
      const block = message.content[event.index] as Json | undefined;
      if (block) closeBlock(block);
      return message;
    }
    case 'message_delta': {
      const d = (event.delta ?? {}) as Json;
      if (d.stop_reason !== undefined) message.stop_reason = d.stop_reason;
      if (d.stop_sequence !== undefined) message.stop_sequence = d.stop_sequence;
      return message;
    }
    default:
      return message;
  }
}

/** The blocks of a message cut before their `content_block_stop`: a `tool_use` input still partial becomes its `input` (as text when it does not parse). */
function closeOpenBlocks(message: Json): void {
  if (!Array.isArray(message.content)) return;
  for (const block of message.content as unknown[]) if (block && typeof block === 'object') closeBlock(block as Json);
}

/** Messages: `usage` of a `message`; a stream's usage from `message_start` merged with `message_delta`'s. */
export const messagesReading: ResponseReading = {
  usageInBody: (body) => body.usage || null,
  usageInChunk: usageInEvent,
  mergeUsage: mergeMessagesUsage,
  foldChunk: foldMessagesEvent,
  closeCutBody: closeOpenBlocks,
};

/** count_tokens: `{"input_tokens": N}` is its whole answer, kept as the usage; never streamed. */
export const countTokensReading: ResponseReading = {
  usageInBody: (body) => (typeof body.input_tokens === 'number' ? { input_tokens: body.input_tokens } : null),
  usageInChunk: () => null,
  mergeUsage: null,
  foldChunk: null,
};
