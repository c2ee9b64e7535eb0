/**
 * The proxy loads undici's Agent from its module file (proxy/upstream-agent.ts): it must be the
 * class undici's index exports, and work as one.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import * as undici from 'undici';
import { Agent } from '../proxy/upstream-agent.ts';

test('the Agent loaded from its module is the one undici exports', () => {
  assert.equal(Agent, undici.Agent);
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
