/**
 * The proxy loads undici's Agent and header helpers from their module files
 * (proxy/upstream-agent.ts): they must be the ones undici's index exports, and work as such.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import * as undici from 'undici';
import { Agent, headerNameToString, parseHeaders } from '../proxy/upstream-agent.ts';

test('the Agent loaded from its module is the one undici exports', () => {
  assert.equal(Agent, undici.Agent);
});

test('the header helpers loaded from their module are the ones undici exports', () => {
  assert.equal(headerNameToString, undici.util.headerNameToString);
  assert.equal(parseHeaders, undici.util.parseHeaders);
  assert.equal(headerNameToString(Buffer.from('Content-Type')), 'content-type');
  assert.deepEqual(parseHeaders([Buffer.from('Set-Cookie'), Buffer.from('a=1'), Buffer.from('set-cookie'), Buffer.from('b=2')]), { 'set-cookie': ['a=1', 'b=2'] });
});

test('and it dispatches a request', async () => {
  const server = http.createServer((req, res) => res.end(`${req.method} ${req.url}`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const agent = new Agent({ connections: null });
  try {
    const { port } = server.address() as { port: number };
    const res = await agent.request({ origin: `http://127.0.0.1:${port}`, path: '/x?y=1', method: 'GET' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), 'GET /x?y=1');
  } finally {
    await agent.close();
    server.close();
  }
});
