/** Stage route: path → endpoint kind by Map lookup, router tails, unknown and undecodable names. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ENDPOINT_KINDS, KIND_BY_PATH, KIND_BY_ROUTER_TAIL } from '../proxy/endpoints/index.ts';
import { GatewayError } from '../proxy/errors.ts';
import { route } from '../proxy/stages/route.ts';
import { closeRuntime, makeContext, makeRuntime } from './support/stage-context.ts';

const gw = makeRuntime({
  doc: {
    routers: {
      r: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] }, embeddings: { strategy: 'latency', providers: ['mistral'] } } },
      'my.router': { 'load-balance': { chat: { strategy: 'latency', providers: ['groq'] } } },
    },
  },
});
after(() => closeRuntime(gw));

const routed = (path: string) => {
  const ctx = makeContext(gw, { path });
  route(ctx);
  return ctx;
};
const refused = (path: string, status: number, code: string) =>
  assert.throws(() => routed(path), (e: unknown) => e instanceof GatewayError && e.status === status && e.code === code, path);

test('/ai and /v1 paths name their endpoint kind; the route label is the path', () => {
  for (const [path, kind] of [['/ai/chat/completions', 'chat'], ['/v1/chat/completions', 'chat'], ['/ai/embeddings', 'embeddings'], ['/v1/embeddings', 'embeddings']] as const) {
    const ctx = routed(path);
    assert.equal(ctx.kind.name, kind, path);
    assert.equal(ctx.routeLabel, path);
    assert.equal(ctx.routerName, null);
    assert.equal(ctx.router, null);
  }
});

test('/router/<name>/<tail>: the router and the tail\'s kind; the label is router:<kind>', () => {
  const chat = routed('/router/r/chat/completions');
  assert.equal(chat.kind.name, 'chat');
  assert.equal(chat.routerName, 'r');
  assert.equal(chat.router, gw.routers.get('r'));
  assert.equal(chat.routeLabel, 'router:chat');
  const emb = routed('/router/r/embeddings');
  assert.equal(emb.kind.name, 'embeddings');
  assert.equal(emb.routeLabel, 'router:embeddings');
  // Names are percent-decoded before the lookup.
  assert.equal(routed('/router/my%2Erouter/chat/completions').routerName, 'my.router');
});

test('unknown paths and tails are 404 not_found; the label stays unmatched', () => {
  refused('/ai/completions', 404, 'not_found');
  refused('/ai/chat/completions/', 404, 'not_found');
  refused('/router/r', 404, 'not_found');
  refused('/router/r/', 404, 'not_found');
  refused('/router/r/chat', 404, 'not_found');
  refused('/router/r/models', 404, 'not_found');
  const ctx = makeContext(gw, { path: '/nope' });
  assert.throws(() => route(ctx));
  assert.equal(ctx.routeLabel, 'unmatched');
});

test('an unknown router is 404 router_not_found, names like Object.prototype members included', () => {
  refused('/router/nope/chat/completions', 404, 'router_not_found');
  refused('/router//chat/completions', 404, 'router_not_found');
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) refused(`/router/${name}/chat/completions`, 404, 'router_not_found');
});

test('a router name that is not valid percent-encoding is 400 invalid_router_name', () => {
  refused('/router/%E0%A4%A/chat/completions', 400, 'invalid_router_name');
  refused('/router/%/embeddings', 400, 'invalid_router_name');
});

test('no two endpoint kinds claim the same path or router tail', () => {
  for (const k of ENDPOINT_KINDS) {
    for (const p of k.paths) assert.equal(KIND_BY_PATH.get(p), k, p);
    assert.equal(KIND_BY_ROUTER_TAIL.get(k.routerTail), k, k.routerTail);
  }
  assert.equal(KIND_BY_PATH.size, ENDPOINT_KINDS.reduce((n, k) => n + k.paths.length, 0));
});
