/**
 * Reading a Responses SSE stream in tests: the events (framing and sequence numbers checked), the event grammar folded
 * into the output a client builds (OpenAI API reference, "Responses streaming"), byte splits of an input (every byte,
 * reproducible random sizes), running a stream translator over pieces, and an official `openai` client answered by a
 * given body. Test-side only.
 */
import { strict as assert } from 'node:assert';
import type { Transform } from 'node:stream';
import OpenAI from 'openai';

/** A small deterministic PRNG (mulberry32) so random splits are reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Split = 'whole' | 1 | { seed: number };
export const SPLITS: Split[] = ['whole', 1, { seed: 1 }, { seed: 42 }];

export function split(input: Buffer, how: Split): Buffer[] {
  if (how === 'whole') return [input];
  const pieces: Buffer[] = [];
  const next = how === 1 ? () => 1 : (() => { const r = rng(how.seed); return () => 1 + Math.floor(r() * 40); })();
  for (let i = 0; i < input.length; ) {
    const size = next();
    pieces.push(input.subarray(i, i + size));
    i += size;
  }
  return pieces;
}

export async function run(mapper: Transform, pieces: Buffer[]): Promise<string> {
  const out: Buffer[] = [];
  mapper.on('data', (d: Buffer) => out.push(Buffer.from(d)));
  const ended = new Promise<void>((resolve, reject) => {
    mapper.on('end', resolve);
    mapper.on('error', reject);
  });
  for (const piece of pieces) mapper.write(piece);
  mapper.end();
  await ended;
  return Buffer.concat(out).toString('utf8');
}

export interface Event {
  type: string;
  sequence_number: number;
  [member: string]: any;
}

/** The events of a Responses SSE body, asserting the framing (`event: <type>\ndata: <json>\n\n`, `type` equal to the event name) and the sequence numbers 0, 1, 2, …. */
export function events(text: string): Event[] {
  assert.ok(text.endsWith('\n\n'), 'the stream ends with a blank line');
  return text.slice(0, -2).split('\n\n').map((raw, i) => {
    const lines = raw.split('\n');
    assert.equal(lines.length, 2, `two lines per event: ${raw.slice(0, 80)}`);
    assert.ok(lines[0]!.startsWith('event: ') && lines[1]!.startsWith('data: '), raw.slice(0, 80));
    const data = JSON.parse(lines[1]!.slice('data: '.length)) as Event;
    assert.equal(data.type, lines[0]!.slice('event: '.length));
    assert.equal(data.sequence_number, i, 'sequence numbers count from 0 without gaps');
    return data;
  });
}

/**
 * Checks the Responses event grammar and folds the events into the output a client builds: created and in_progress
 * first; items added in output-index order from 0; every delta, part and done event naming an added item by
 * `output_index` and `item_id`, with content and summary indices in order; every item done once, as the fold built it
 * (text, summary, arguments); the last event completed / incomplete (every item done, the output equal to the fold's)
 * or failed (the output the items done so far).
 */
export function fold(list: Event[]): { final: Event; items: any[] } {
  assert.deepEqual(list.slice(0, 2).map((e) => e.type), ['response.created', 'response.in_progress']);
  assert.deepEqual(list[0]!.response, list[1]!.response);
  assert.equal(list[0]!.response.status, 'in_progress');
  assert.deepEqual(list[0]!.response.output, []);
  assert.equal(list[0]!.response.usage, null);
  const items: any[] = [];
  const done = new Set<number>();
  const item = (e: Event): any => {
    const it = items[e.output_index];
    assert.ok(it, `an added item at ${e.output_index} (${e.type})`);
    assert.ok(!done.has(e.output_index), `item ${e.output_index} is not done yet (${e.type})`);
    if (e.item_id !== undefined) assert.equal(e.item_id, it.id, 'item_id names the item');
    return it;
  };
  const final = list[list.length - 1]!;
  for (const e of list.slice(2, -1)) {
    switch (e.type) {
      case 'response.output_item.added':
        assert.equal(e.output_index, items.length, 'items are added in output-index order');
        items.push(structuredClone(e.item));
        break;
      case 'response.content_part.added':
        assert.equal(e.content_index, item(e).content.length);
        item(e).content.push(structuredClone(e.part));
        break;
      case 'response.output_text.delta':
        assert.equal(item(e).content[e.content_index].type, 'output_text');
        item(e).content[e.content_index].text += e.delta;
        break;
      case 'response.refusal.delta':
        item(e).content[e.content_index].refusal += e.delta;
        break;
      case 'response.output_text.done':
        assert.equal(e.text, item(e).content[e.content_index].text);
        break;
      case 'response.refusal.done':
        assert.equal(e.refusal, item(e).content[e.content_index].refusal);
        break;
      case 'response.content_part.done':
        assert.deepEqual(e.part, item(e).content[e.content_index]);
        break;
      case 'response.reasoning_summary_part.added':
        assert.equal(e.summary_index, item(e).summary.length);
        item(e).summary.push(structuredClone(e.part));
        break;
      case 'response.reasoning_summary_text.delta':
        item(e).summary[e.summary_index].text += e.delta;
        break;
      case 'response.reasoning_summary_text.done':
        assert.equal(e.text, item(e).summary[e.summary_index].text);
        break;
      case 'response.reasoning_summary_part.done':
        assert.deepEqual(e.part, item(e).summary[e.summary_index]);
        break;
      case 'response.function_call_arguments.delta':
        assert.equal(item(e).type, 'function_call');
        item(e).arguments += e.delta;
        break;
      case 'response.function_call_arguments.done':
        assert.equal(e.arguments, item(e).arguments);
        break;
      case 'response.custom_tool_call_input.delta':
        item(e).input += e.delta;
        break;
      case 'response.custom_tool_call_input.done':
        assert.equal(e.input, item(e).input);
        break;
      case 'response.output_item.done': {
        const built = item(e);
        assert.deepEqual({ ...e.item, status: undefined }, { ...built, status: undefined }, `item ${e.output_index} done as built`);
        items[e.output_index] = e.item;
        done.add(e.output_index);
        break;
      }
      default:
        assert.fail(`unexpected event ${e.type}`);
    }
  }
  if (final.type === 'response.failed') {
    assert.equal(final.response.status, 'failed');
    assert.deepEqual(final.response.output, items.filter((_, i) => done.has(i)));
  } else {
    assert.ok(final.type === 'response.completed' || final.type === 'response.incomplete', `the last event ends the response, got ${final.type}`);
    assert.equal(done.size, items.length, 'every item is done before the response ends');
    assert.deepEqual(final.response.output, items);
  }
  assert.equal(final.response.id, list[0]!.response.id);
  return { final, items };
}

/** An `openai` client whose every request is answered by `body` (a translated stream or JSON response). */
export function clientAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': contentType } }),
  });
}

