/**
 * End-to-end: request members named like `Object.prototype`'s own properties (`__proto__`, `valueOf`,
 * `hasOwnProperty`, `__defineGetter__`, `toString`, `constructor`) on the translated paths. Each is a member like any
 * other the provider has no place for: not sent, and named in `Svc-Removed-Members` and the log record's
 * `svc-removed-members` (Messages → chat completions, Responses → chat → Anthropic, and chat completions → Anthropic,
 * which already did); never a 500 nor silently dropped. An effort value with such a name (`output_config.effort`,
 * `reasoning.effort`) is a 400 naming the member, as any other unknown effort is.
 * Stub upstream (test/support/stub-upstream.ts), admin (real PostgreSQL) and proxy run as separate processes; the
 * bodies are sent as text, since a JavaScript object literal cannot hold an own `__proto__` member.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clearStubRequests, fetchRecord, startStack, stubRequests, type Stack } from './support/stack.ts';
import { removedPaths } from './support/refusal.ts';

let stack: Stack;

before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

/** Names `Object.prototype` answers for on a plain object. */
const PROTOTYPE_NAMES = ['__proto__', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'toString', 'constructor'];

/** A JSON body: `json` (without its closing brace) with `"<member>": {"a": 1}` added at the top level. */
function withMember(json: string, member: string): string {
  return `${json.slice(0, -1)},${JSON.stringify(member)}:{"a":1}}`;
}

function post(path: string, body: string): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' } });
}

const ROUTES: Array<{ name: string; path: string; body: string; upstream: RegExp }> = [
  {
    name: 'Messages → openai',
    path: '/v1/messages',
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    upstream: /\/chat\/completions$/,
  },
  {
    name: 'Responses → anthropic',
    path: '/ai/responses',
    body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', input: 'hi' }),
    upstream: /\/messages$/,
  },
  {
    name: 'chat completions → anthropic',
    path: '/ai/chat/completions',
    body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
    upstream: /\/messages$/,
  },
];

describe('a top-level member named like an Object.prototype property is removed and recorded', () => {
  for (const route of ROUTES) {
    for (const member of PROTOTYPE_NAMES) {
      test(`${route.name}: "${member}"`, async () => {
        await clearStubRequests(stack.stubUrl);
        const res = await post(route.path, withMember(route.body, member));
        const text = await res.text();
        assert.equal(res.status, 200, text.slice(0, 300));
        assert.deepEqual(removedPaths(res.headers.get('svc-removed-members')), [member]);
        const sent = (await stubRequests(stack.stubUrl)).filter((r) => route.upstream.test(r.url));
        assert.equal(sent.length, 1);
        assert.ok(!String(sent[0]!.raw).includes(JSON.stringify(member)), `"${member}" was sent: ${sent[0]!.raw}`);
        const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
        assert.deepEqual(JSON.parse(rec.request_properties['svc-removed-members']), [member]);
      });
    }
  }
});

describe('an effort named like an Object.prototype property is a 400 naming the member', () => {
  for (const effort of ['toString', 'constructor', '__proto__']) {
    test(`Messages → openai: output_config.effort "${effort}"`, async () => {
      for (const model of ['openai/gpt-4o-mini', 'openai/o3']) {
        const res = await post('/v1/messages', JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], output_config: { effort } }));
        const json = (await res.json()) as { type: string; error: { type: string; message: string } };
        assert.equal(res.status, 400, `${model}: ${JSON.stringify(json)}`);
        assert.equal(json.type, 'error');
        assert.match(json.error.message, /output_config\.effort/);
      }
    });

    test(`Responses → anthropic: reasoning.effort "${effort}"`, async () => {
      const res = await post('/ai/responses', JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', reasoning: { effort } }));
      const json = (await res.json()) as { error: { param: string } };
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(json.error.param, 'reasoning.effort');
    });
  }
});
