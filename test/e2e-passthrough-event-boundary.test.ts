/**
 * A passed-through event stream goes to the client up to its last whole line (proxy/upstream/sse-boundary.ts), and an
 * error event that ends it starts as an event of its own. Before, the gateway wrote each provider chunk on as it
 * came, so when the provider cut its stream in the middle of a line (or the gateway shut down there), the gateway's
 * error event was glued to half an event (`data: {"id":…,"object":"chat.completiodata: {"error":…}`) and the
 * OpenAI SDK threw "Could not parse message into JSON" instead of the gateway's error. Checked: the cut stream's
 * bytes and what the `openai` SDK raises; a stream whose every event spans 7-byte pieces still reaches the client
 * byte for byte; the line-end search and the prefix that closes an event whose blank line did not come.
 *
 * Real processes (test/support/stack.ts): stub upstream (models `reset-mid-event`, `split-events`), admin on a
 * fresh PostgreSQL database, the proxy.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { cutPrefix, endOfWholeLines, withLastBytes } from '../proxy/upstream/sse-boundary.ts';
import { fetchRecord, startStack, type Stack } from './support/stack.ts';

const RECORDED = readFileSync(new URL('./fixtures/providers/openai/chat-completion-stream.sse', import.meta.url));
const FIRST_EVENT = RECORDED.subarray(0, RECORDED.indexOf('\n\n') + 2).toString();

describe('endOfWholeLines and cutPrefix', () => {
  const end = (text: string) => endOfWholeLines(Buffer.from(text));
  test('a chunk ending with a line end is sent whole, in each line-ending form', () => {
    assert.equal(end('data: a\n\n'), 9);
    assert.equal(end('data: a\r\n'), 9);
    assert.equal(end('data: a\r'), 8);
    assert.equal(end(': ping\n'), 7);
  });
  test('the start of a line waits; a chunk with no line end waits whole', () => {
    assert.equal(end('data: a\n\ndata: {"par'), 9);
    assert.equal(end('data: a\rdata: b'), 8);
    assert.equal(end('data: {"partial'), 0);
    assert.equal(end(''), 0);
  });
  test('the prefix closes an event whose lines came without their blank line, and is nothing after a whole event', () => {
    const after = (text: string) => cutPrefix(withLastBytes(-1, Buffer.from(text), Buffer.byteLength(text)));
    assert.equal(cutPrefix(-1), '');
    assert.equal(after('data: a\n\n'), '');
    assert.equal(after('data: a\r\n\r\n'), '');
    assert.equal(after('data: a\r\r'), '');
    assert.equal(after('event: content_block_delta\n'), '\n');
    assert.equal(after('data: a\r\n'), '\n');
    // After CR the LF may complete a CRLF: a second LF makes the blank line.
    assert.equal(after('data: a\r'), '\n\n');
    // The bytes kept span chunks.
    assert.equal(cutPrefix(withLastBytes(withLastBytes(-1, Buffer.from('data: a\n'), 8), Buffer.from('\n'), 1)), '');
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

  test('cut by the provider mid-line: the half line is not sent; the error event follows as an event of its own', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(request('reset-mid-event')),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.startsWith(FIRST_EVENT), `the first event whole: ${JSON.stringify(text.slice(0, 200))}`);
    const rest = text.slice(FIRST_EVENT.length);
    assert.match(rest, /^data: \{"error":/, `then the gateway's error event, nothing of the cut line before it: ${JSON.stringify(rest)}`);
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
