/**
 * One server-sent event that never ends cannot take the proxy's memory. Found by the resilience run: a provider
 * answered `text/event-stream` and then `data: ` and 1 MB pieces of `y` with no line end, forever; the log's
 * response recorder (and, on a translated route, the stream translator) kept parsing it, its event parser buffering
 * every byte, and the proxy went from 252 MB to 3.46 GB in 55 s and died (`Reached heap limit`), losing every other
 * request in flight and every queued log record. No timeout applied, since bytes kept arriving.
 *
 * Now an event (passthrough: a line) longer than 16 MiB (MAX_STREAM_EVENT_CHARS) ends the answer with the
 * gateway's error event (502 `upstream_response_too_large`, in the client's dialect) and stops the provider, on a
 * passed-through stream (proxy/upstream/exchange.ts) as on a translated one (the stream translator's bound,
 * proxy/translators/shared/translator-stream.ts); the recorder and the response capture bound their own parsers.
 * Checked here, through real processes (test/support/stack.ts; the stub's `endless-event` and `big-event-<MiB>`):
 * the client's answer ends with that error and none of the event's bytes, the stub sent at most the bound and a
 * little more, the proxy's heap and external memory (its own /metrics, sampled while the streams run) stay below a
 * few times the bound (six streams in a row, over 200 MB sent: what each held is let go), however long the event, the request is logged,
 * and the proxy answers the next request; a legitimate 10 MiB event still reaches the client whole (log row marked
 * bodyTruncated). Memory is asserted from the proxy's metrics sampled while the streams run, not from timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStack, uniq, type Stack } from './support/stack.ts';

const MIB = 1024 * 1024;
/** MAX_STREAM_EVENT_CHARS: the bound of one event (passthrough: one line). */
const BOUND = 16 * MIB;
/** Before the fix nothing ended the stream: the test stops it once the stub has sent this much. */
const WATCHDOG = 200 * MIB;
/** What the stub may have sent past the bound before the proxy stopped it (socket buffers both ways). */
const SLACK = 16 * MIB;

interface Streamed {
  status: number;
  id: string | null;
  bytes: number;
  /** The answer's last 64 KiB, as text. */
  tail: string;
  /** The stub's bytes sent when the stream ended; true when the watchdog had to stop it. */
  stubBytes: number;
  stoppedByWatchdog: boolean;
  /** Highest `nodejs_heap_size_used_bytes` + `nodejs_external_memory_bytes` the proxy reported meanwhile. */
  peakMemory: number;
}

/** One value of the proxy's Prometheus text. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text);
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

async function memory(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  return metric(text, 'nodejs_heap_size_used_bytes') + metric(text, 'nodejs_external_memory_bytes');
}

/** POSTs `body` (its first message's content is `tag`) to `path` and reads the answer to its end, watching the stub and the proxy's memory. */
async function stream(stack: Stack, path: string, body: Record<string, unknown>, tag: string, headers: Record<string, string> = {}): Promise<Streamed> {
  const abort = new AbortController();
  let stoppedByWatchdog = false;
  let peakMemory = 0;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      peakMemory = Math.max(peakMemory, await memory(stack));
      const sent = ((await (await fetch(`${stack.stubUrl}/__sent`)).json()) as Record<string, number>)[tag] ?? 0;
      if (sent > WATCHDOG) {
        stoppedByWatchdog = true;
        abort.abort();
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let bytes = 0;
  let tail = Buffer.alloc(0);
  let status = 0;
  let id: string | null = null;
  try {
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    status = res.status;
    id = res.headers.get('svc-id');
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += piece.length;
      tail = Buffer.concat([tail, piece]);
      if (tail.length > 64 * 1024) tail = tail.subarray(tail.length - 64 * 1024);
    }
  } catch (err) {
    if (!stoppedByWatchdog) throw err;
  } finally {
    watching = false;
    await watch;
  }
  peakMemory = Math.max(peakMemory, await memory(stack));
  const sent = ((await (await fetch(`${stack.stubUrl}/__sent`)).json()) as Record<string, number>)[tag] ?? 0;
  return { status, id, bytes, tail: tail.toString('utf8'), stubBytes: sent, stoppedByWatchdog, peakMemory };
}

/** The proxy still answers: a plain chat completion. */
async function stillServes(stack: Stack): Promise<void> {
  const res = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { object: string }).object, 'chat.completion');
}

describe('a stream event that never ends', () => {
  let stack: Stack;
  let baseline = 0;
  before(async () => {
    stack = await startStack();
    baseline = await memory(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  const chat = (model: string, tag: string) => ({ model: `openai/${model}`, messages: [{ role: 'user', content: tag }], stream: true });

  test('passed through: the answer ends with the gateway error event, the provider is stopped, memory stays bounded', async () => {
    const tag = `pass-${uniq()}`;
    const got = await stream(stack, '/ai/chat/completions', chat('endless-event', tag), tag);
    assert.equal(got.stoppedByWatchdog, false, `the stream did not end: the stub sent ${got.stubBytes} bytes, the client got ${got.bytes}, proxy memory peaked at ${got.peakMemory}`);
    assert.equal(got.status, 200);
    assert.match(got.tail, /^data: \{"error":/, `only the gateway's error event, none of the event's bytes: ${JSON.stringify(got.tail.slice(0, 200))}`);
    assert.match(got.tail, /upstream_response_too_large/);
    assert.ok(got.tail.endsWith('\n\n'));
    assert.ok(got.stubBytes <= BOUND + SLACK, `the provider was stopped near the bound: it sent ${got.stubBytes}`);
    assert.ok(got.peakMemory < baseline + 8 * BOUND, `proxy heap + external peaked at ${got.peakMemory} (baseline ${baseline})`);
    const rec = await fetchRecord(stack, got.id!);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /upstream_response_too_large|stream line longer than/);
    await stillServes(stack);
  });

  test('translated (Messages client, chat provider): the Anthropic error event, the provider stopped, memory bounded', async () => {
    const tag = `msg-${uniq()}`;
    const body = { model: 'openai/endless-event', max_tokens: 16, messages: [{ role: 'user', content: tag }], stream: true };
    const got = await stream(stack, '/v1/messages', body, tag, { 'anthropic-version': '2023-06-01' });
    assert.equal(got.stoppedByWatchdog, false, `the stream did not end: the stub sent ${got.stubBytes} bytes, the client got ${got.bytes}, proxy memory peaked at ${got.peakMemory}`);
    assert.equal(got.status, 200);
    assert.match(got.tail, /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*stream event/, JSON.stringify(got.tail.slice(-400)));
    assert.ok(!got.tail.includes('yyyy'));
    assert.ok(got.stubBytes <= BOUND + SLACK, `the provider was stopped near the bound: it sent ${got.stubBytes}`);
    assert.ok(got.peakMemory < baseline + 8 * BOUND, `proxy heap + external peaked at ${got.peakMemory} (baseline ${baseline})`);
    await fetchRecord(stack, got.id!);
    await stillServes(stack);
  });

  test('six in a row on both routes (over 200 MB from the stub): what one held is let go, memory does not add up', async () => {
    const all: Streamed[] = [];
    for (let i = 0; i < 6; i++) {
      const tag = `many-${i}-${uniq()}`;
      all.push(
        i % 2 === 0
          ? await stream(stack, '/ai/chat/completions', chat('endless-event', tag), tag)
          : await stream(stack, '/v1/messages', { model: 'openai/endless-event', max_tokens: 16, messages: [{ role: 'user', content: tag }], stream: true }, tag, { 'anthropic-version': '2023-06-01' }),
      );
    }
    for (const got of all) assert.equal(got.stoppedByWatchdog, false, `a stream did not end (stub sent ${got.stubBytes})`);
    const total = all.reduce((n, got) => n + got.stubBytes, 0);
    const peak = Math.max(...all.map((got) => got.peakMemory));
    assert.ok(total >= 6 * BOUND, `the stub sent ${total}`);
    assert.ok(peak < baseline + 8 * BOUND, `proxy heap + external peaked at ${peak} (baseline ${baseline}) while ${total} bytes streamed`);
    await stillServes(stack);
  });

  test('a legitimate 10 MiB event still reaches the client whole; its log row is marked bodyTruncated', async () => {
    const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(chat('big-event-10', 'big')),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const content = /"content":"(x+)"/.exec(text)?.[1] ?? '';
    assert.equal(content.length, 10 * MIB);
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    const id = res.headers.get('svc-id')!;
    await fetchRecord(stack, id);
    const [row] = await stack.db.sql<Array<{ extra: { bodyTruncated: boolean } }>>`select extra from request_log where id = ${id}`;
    assert.equal(row!.extra.bodyTruncated, true);
  });

  test('translated: a legitimate 10 MiB event reaches the Messages client whole', async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'openai/big-event-10', max_tokens: 16, messages: [{ role: 'user', content: 'big' }], stream: true }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    const content = /"text":"(x+)"/.exec(text)?.[1] ?? '';
    assert.equal(content.length, 10 * MIB);
    assert.match(text, /event: message_stop/);
  });
});
