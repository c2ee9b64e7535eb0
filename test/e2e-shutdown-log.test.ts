/**
 * End-to-end: SIGTERM while requests are still in flight past `server.shutdown-timeout`. The proxy
 * cuts what is left at the timeout, and every request it had accepted (body parsed) is still logged
 * exactly once, before the log queue is flushed and the process exits: a stream cut by the shutdown
 * as the gateway's 502 `gateway_shutdown` with the bytes streamed so far, a request still waiting
 * for its provider the same way, with its access-log `request` line. A cut stream ends with its
 * dialect's error event (`gateway_shutdown`), as a provider's failure mid-stream does, rather than a
 * bare connection close (which the SDKs report as "terminated").
 *
 * Real processes: stub upstream (test/support/stub-upstream.ts: `endless-stream`, `hang`), admin
 * on a fresh PostgreSQL database, and the proxy (stopped by the test itself).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, waitFor, type Stack } from './support/stack.ts';

const SHUTDOWN_TIMEOUT_MS = 1000;

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({ ...defaultConfig(stubUrl), server: { 'shutdown-timeout': `${SHUTDOWN_TIMEOUT_MS}ms` } }),
    proxyEnv: { LOG_LEVEL: 'info' },
  });
});
after(async () => {
  await stack?.stop();
});

/** A request left open: what it received so far, whether its response broke or ended, and its case tag. */
interface Open {
  tag: string;
  status: Promise<number>;
  received: () => string;
  done: Promise<'ended' | 'broken'>;
}

/** Sends `body` to `path` tagged `Svc-Property-Case: tag` and keeps reading whatever comes. */
function open(path: string, body: Record<string, unknown>, tag: string): Open {
  let text = '';
  let settle!: (v: 'ended' | 'broken') => void;
  const done = new Promise<'ended' | 'broken'>((r) => (settle = r));
  const status = new Promise<number>((resolve) => {
    const req = http.request(
      `${stack.gatewayUrl}${path}`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', 'svc-property-case': tag } },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => settle('ended'));
        res.on('error', () => settle('broken'));
        res.on('aborted', () => settle('broken'));
      },
    );
    req.on('error', () => {
      resolve(0);
      settle('broken');
    });
    req.end(JSON.stringify(body));
  });
  return { tag, status, received: () => text, done };
}

interface Row {
  id: string;
  status: number;
  error: unknown;
  streamed: boolean;
}

async function rowsOf(tag: string): Promise<Row[]> {
  return stack.db.sql<Row[]>`select id::text as id, status, error, streamed from request_log where properties->>'case' = ${tag}`;
}

test(`SIGTERM with streams and a waiting request past shutdown-timeout (${SHUTDOWN_TIMEOUT_MS} ms): each is logged once, as cut by the shutdown, before the exit`, { timeout: 60_000 }, async () => {
  const run = Date.now().toString(36);
  const chatStream = open('/ai/chat/completions', { model: 'openai/endless-stream', stream: true, messages: [{ role: 'user', content: `${run}-chat` }] }, `${run}-chat`);
  // Messages translated to OpenAI chat: the stream the client gets is made by the gateway's mapper.
  const messagesStream = open('/v1/messages', { model: 'openai/endless-stream', stream: true, max_tokens: 64, messages: [{ role: 'user', content: `${run}-msg` }] }, `${run}-msg`);
  // Still waiting for the provider's headers when the shutdown comes.
  const waiting = open('/ai/chat/completions', { model: 'openai/hang', messages: [{ role: 'user', content: `${run}-hang` }] }, `${run}-hang`);
  assert.equal(await chatStream.status, 200);
  assert.equal(await messagesStream.status, 200);
  await waitFor(() => chatStream.received().includes('tok3') && messagesStream.received().includes('tok3'));

  const exited = new Promise<number | null>((resolve) => stack.proxy.child.once('exit', (code) => resolve(code)));
  const t0 = Date.now();
  stack.proxy.child.kill('SIGTERM');
  const code = await exited;
  const elapsed = Date.now() - t0;
  const out = stack.proxy.output();
  assert.equal(code, 0, out);
  // No upper bound: under load the exit may come late; the cut responses and the records below prove the point.
  assert.ok(elapsed >= SHUTDOWN_TIMEOUT_MS - 50, `exited after ${elapsed} ms`);
  // The streams end with their dialect's error event; the request still waiting has its connection closed.
  for (const o of [chatStream, messagesStream]) assert.equal(await o.done, 'ended', `${o.tag}: the stream ended with an error event, not a bare close`);
  assert.equal(await waiting.done, 'broken', `${waiting.tag}: the shutdown cut the response`);
  const chatTail = chatStream.received().trimEnd().split('\n\n').at(-1)!;
  assert.match(chatTail, /^data: /, chatTail);
  const chatError = JSON.parse(chatTail.slice('data: '.length)) as { error: { code: string; message: string } };
  assert.equal(chatError.error.code, 'gateway_shutdown', chatTail);
  assert.match(chatError.error.message, /gateway shut down/);
  const msgTail = messagesStream.received().trimEnd().split('\n\n').at(-1)!;
  assert.match(msgTail, /^event: error\ndata: /, msgTail);
  const msgError = JSON.parse(msgTail.slice(msgTail.indexOf('data: ') + 'data: '.length)) as { type: string; error: { type: string; message: string } };
  assert.equal(msgError.type, 'error', msgTail);
  assert.match(msgError.error.message, /gateway shut down/);

  // Acknowledged by admin before the exit: stored already, no proxy left to send them.
  const flushLine = out.split('\n').find((l) => l.includes('"msg":"log queue flushed"'));
  assert.ok(flushLine, out);
  const flush = JSON.parse(flushLine) as { flushed: boolean; acknowledged: number };
  assert.equal(flush.flushed, true, flushLine);
  assert.ok(flush.acknowledged >= 3, `the cut requests' records were among those flushed: ${flushLine}`);
  for (const o of [chatStream, messagesStream, waiting]) {
    const rows = await rowsOf(o.tag);
    assert.equal(rows.length, 1, `${o.tag}: one row (got ${rows.length})\n${out}`);
    assert.equal(rows[0]!.status, 502, `${o.tag}: logged as the gateway's cut`);
    assert.match(JSON.stringify(rows[0]!.error), /gateway shut down/, o.tag);
    const rec = await fetchRecord(stack, rows[0]!.id);
    assert.equal(rec.properties['svc-client-closed'] ?? 'false', 'false', `${o.tag}: the gateway cut it, not the client`);
  }
  // The bytes streamed before the cut are in the record.
  const chatRow = (await rowsOf(chatStream.tag))[0]!;
  assert.equal(chatRow.streamed, true);
  const chatRec = await fetchRecord(stack, chatRow.id);
  assert.match(JSON.stringify(chatRec.llmSchema.response), /tok0 tok1 tok2 tok3/);
  const msgRec = await fetchRecord(stack, (await rowsOf(messagesStream.tag))[0]!.id);
  assert.match(JSON.stringify(msgRec.llmSchema.response), /tok0 tok1 tok2 tok3/);

  // One access-log `request` line per request, saying why.
  const lines = out.split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('gateway_shutdown'));
  assert.equal(lines.length, 3, out);
});
