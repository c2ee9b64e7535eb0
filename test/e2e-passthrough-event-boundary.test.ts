/**
 * A passed-through event stream goes to the client up to its last whole event (proxy/upstream/sse-boundary.ts).
 * Before, the gateway wrote each provider chunk on as it came, so when the provider cut its stream in the middle
 * of an event (or the gateway shut down there), the gateway's error event was glued to half an event
 * (`data: {"id":…,"object":"chat.completiodata: {"error":…}`) and the OpenAI SDK threw "Could not parse message
 * into JSON" instead of the gateway's error. Checked: the cut stream's bytes and what the `openai` SDK raises;
 * a stream whose every event spans 7-byte pieces still reaches the client byte for byte; and the boundary
 * search on LF, CRLF and CR framing.
 *
 * Real processes (test/support/stack.ts): stub upstream (models `reset-mid-event`, `split-events`), admin on a
 * fresh PostgreSQL database, the proxy.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { endOfWholeEvents } from '../proxy/upstream/sse-boundary.ts';
import { fetchRecord, startStack, type Stack } from './support/stack.ts';

const RECORDED = readFileSync(new URL('./fixtures/providers/openai/chat-completion-stream.sse', import.meta.url));
const FIRST_EVENT = RECORDED.subarray(0, RECORDED.indexOf('\n\n') + 2).toString();

describe('endOfWholeEvents', () => {
  const end = (text: string) => endOfWholeEvents(Buffer.from(text));
  test('a chunk ending with a whole event is sent whole, in each line-ending form', () => {
    assert.equal(end('data: a\n\n'), 9);
    assert.equal(end('data: a\r\n\r\n'), 11);
    assert.equal(end('data: a\n\ndata: b\n\n'), 18);
  });
  test('the start of an event waits; a chunk with no boundary waits whole', () => {
    assert.equal(end('data: a\n\ndata: {"par'), 9);
    assert.equal(end('data: a\r\n\r\ndata: b\r\n'), 11);
    assert.equal(end('data: a\r\rdata: b'), 9);
    assert.equal(end('data: {"partial'), 0);
    assert.equal(end('data: a\n'), 0);
    assert.equal(end(''), 0);
  });
});

describe('a passed-through event stream', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  const request = (model: string) => ({ model: `openai/${model}`, messages: [{ role: 'user' as const, content: 'x' }], stream: true as const });

  test('cut by the provider mid-event: the half event is not sent; the error event follows the last whole one', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(request('reset-mid-event')),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.startsWith(FIRST_EVENT), `the first event whole: ${JSON.stringify(text.slice(0, 200))}`);
    const rest = text.slice(FIRST_EVENT.length);
    assert.match(rest, /^data: \{"error":/, `then the gateway's error event, nothing before it: ${JSON.stringify(rest)}`);
    assert.match(rest, /upstream_disconnected/);
    assert.ok(rest.endsWith('\n\n'));
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /connection lost mid-response/);
  });

  test('the openai SDK gets the first chunk, then the gateway’s error as an APIError (it threw a SyntaxError before)', async () => {
    const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/v1`, apiKey: stack.apiKey, maxRetries: 0 });
    const stream = await client.chat.completions.create(request('reset-mid-event'));
    const chunks: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError, `an APIError, got ${String(err)}`);
        assert.match(String((err as Error).message), /connection lost mid-response/);
        return true;
      },
    );
    assert.equal(chunks.length, 1);
  });

  test('every event split across 7-byte pieces: the client gets the provider’s bytes exactly, and the SDK the whole answer', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(request('split-events')),
    });
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(RECORDED), 'byte for byte');
    const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/v1`, apiKey: stack.apiKey, maxRetries: 0 });
    let content = '';
    for await (const chunk of await client.chat.completions.create(request('split-events'))) content += chunk.choices[0]?.delta.content ?? '';
    const expected = RECORDED.toString()
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
      .join('');
    assert.equal(content, expected);
  });
});
