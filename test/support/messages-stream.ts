/**
 * Reads a recorded Anthropic Messages stream (test/fixtures/providers/anthropic/*.sse) the way the
 * proxy's log recorder hands it to admin: the events parsed with eventsource-parser, the usage
 * objects it carries (`message_start.message.usage`, each `message_delta.usage`), and the content
 * folded into one `message` (Anthropic API reference, "Streaming Messages"). Test-side only: the
 * proxy's own fold lives with its endpoint kind.
 */
import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';

type Json = Record<string, any>;

/** A fixture of test/fixtures/providers/anthropic/ as text. */
export function anthropicFixture(name: string): string {
  return readFileSync(new URL(`../fixtures/providers/anthropic/${name}`, import.meta.url), 'utf8');
}

/** What a Messages stream gives the log: its events, its usage objects in order, the folded message. */
export interface ReadStream {
  events: Json[];
  /** `message_start.message.usage`, then every `message_delta.usage`, as sent. */
  usages: Json[];
  /** The message assembled from the events (`usage` as `message_start` sent it). */
  message: Json;
}

/** Parses and folds an SSE text of Anthropic's Messages stream. */
export function readMessagesStream(sse: string): ReadStream {
  const events: Json[] = [];
  const parser = createParser({ onEvent: (e) => events.push(JSON.parse(e.data) as Json) });
  parser.feed(sse);
  const usages: Json[] = [];
  let message: Json = {};
  const partialJson = new Map<number, string>();
  for (const e of events) {
    if (e.type === 'message_start') {
      message = structuredClone(e.message);
      usages.push(e.message.usage);
    } else if (e.type === 'content_block_start') {
      message.content[e.index] = structuredClone(e.content_block);
    } else if (e.type === 'content_block_delta') {
      const block = message.content[e.index];
      const d = e.delta;
      if (d.type === 'text_delta') block.text += d.text;
      else if (d.type === 'thinking_delta') block.thinking += d.thinking;
      else if (d.type === 'signature_delta') block.signature = d.signature;
      else if (d.type === 'input_json_delta') partialJson.set(e.index, (partialJson.get(e.index) ?? '') + d.partial_json);
    } else if (e.type === 'content_block_stop') {
      const json = partialJson.get(e.index);
      if (json) message.content[e.index].input = JSON.parse(json);
    } else if (e.type === 'message_delta') {
      Object.assign(message, e.delta);
      usages.push(e.usage);
    }
  }
  return { events, usages, message };
}
