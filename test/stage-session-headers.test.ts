/**
 * The session headers on the proxy (proxy/pipeline/headers.ts, proxy/stages/validate.ts,
 * proxy/observers/log-record.ts): what `checkSessionHeaders` refuses (a 400 naming the header) and
 * accepts at the limits, UTF-8 values, and the record's session members (`Svc-Session-Id` over
 * Claude Code's and Codex's own session ids, which count when it is absent).
 * Run: node --import tsx --test test/stage-session-headers.test.ts
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, test } from 'node:test';
import { GatewayError } from '../proxy/errors.ts';
import { sessionOf } from '../proxy/observers/log-record.ts';
import { checkSessionHeaders, logHeaders, MAX_SESSION_ID, MAX_SESSION_PATH, sessionHeaders } from '../proxy/pipeline/headers.ts';
import { route } from '../proxy/stages/route.ts';
import { validate } from '../proxy/stages/validate.ts';
import { closeRuntime, makeContext, makeRequest, makeRuntime } from './support/stage-context.ts';

const gw = makeRuntime();
after(() => closeRuntime(gw));

const req = (headers: Record<string, string>) => makeRequest({ headers }) as unknown as IncomingMessage;

/** The GatewayError `checkSessionHeaders` throws for `headers`, or null. */
function refusal(headers: Record<string, string>): GatewayError | null {
  try {
    checkSessionHeaders(req(headers));
    return null;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
}

test('refused: empty, over-long, a path not starting with /; each a 400 naming the header', () => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ 'Svc-Session-Id': '' }, 'Svc-Session-Id', /must not be empty/],
    [{ 'Svc-Session-Id': 'x'.repeat(MAX_SESSION_ID + 1) }, 'Svc-Session-Id', /at most 256 characters \(got 257\)/],
    [{ 'Svc-Session-Name': '' }, 'Svc-Session-Name', /must not be empty/],
    [{ 'Svc-Session-Name': 'n'.repeat(MAX_SESSION_ID + 1) }, 'Svc-Session-Name', /at most 256/],
    [{ 'Svc-Session-Path': 'plan/search' }, 'Svc-Session-Path', /must start with "\/"/],
    [{ 'Svc-Session-Path': '' }, 'Svc-Session-Path', /must start with "\/"/],
    [{ 'Svc-Session-Path': `/${'p'.repeat(MAX_SESSION_PATH)}` }, 'Svc-Session-Path', /at most 1024 characters \(got 1025\)/],
  ];
  for (const [headers, name, message] of cases) {
    const err = refusal(headers);
    assert.ok(err, JSON.stringify(headers).slice(0, 80));
    assert.equal(err.status, 400);
    assert.equal(err.param, name);
    assert.equal(err.code, 'invalid_header');
    assert.match(err.message, new RegExp(`^${name} `));
    assert.match(err.message, message);
  }
});

test('accepted: none sent, the limits, a root path, UTF-8 values counted in characters', () => {
  assert.equal(refusal({}), null);
  assert.equal(sessionHeaders(req({ 'x-other': '1' })), null);
  assert.equal(refusal({ 'Svc-Session-Id': 'i'.repeat(256), 'Svc-Session-Name': 'n'.repeat(256), 'Svc-Session-Path': `/${'p'.repeat(1023)}` }), null);
  assert.equal(refusal({ 'Svc-Session-Path': '/' }), null);
  // Node hands header bytes over as latin1: UTF-8 bytes are read back as UTF-8.
  const name = 'Résumé ✓'.repeat(32); // 256 characters, more bytes
  const s = sessionHeaders(req({ 'Svc-Session-Name': Buffer.from(name, 'utf8').toString('latin1') }));
  assert.equal(s?.name, name);
  assert.equal(refusal({ 'Svc-Session-Name': Buffer.from(name, 'utf8').toString('latin1') }), null);
  // Latin-1 text that is not UTF-8 stays as sent.
  assert.equal(sessionHeaders(req({ 'Svc-Session-Id': 'caf\u00e9' }))?.id, 'caf\u00e9');
});

test('validate refuses a bad session header with the endpoint kind', () => {
  const ctx = makeContext(gw, { path: '/v1/messages', headers: { 'x-api-key': 'k', 'Svc-Session-Path': 'nope' }, body: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
  route(ctx);
  assert.throws(() => validate(ctx), (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'Svc-Session-Path');
});

test("the record's session: Svc-Session-Id, else Claude Code's or Codex's own; path and name as sent", () => {
  const of = (headers: Record<string, string>) => sessionOf(makeContext(gw, { headers }));
  assert.deepEqual(of({}), { sessionId: null, sessionPath: null, sessionName: null });
  assert.deepEqual(of({ 'x-claude-code-session-id': 'cc-1' }), { sessionId: 'cc-1', sessionPath: null, sessionName: null });
  assert.deepEqual(of({ 'x-claude-code-session-id': 'cc-1', 'Svc-Session-Path': '/edit' }), { sessionId: 'cc-1', sessionPath: '/edit', sessionName: null });
  assert.deepEqual(of({ session_id: 'codex-1', 'Svc-Session-Name': 'fix bug' }), { sessionId: 'codex-1', sessionPath: null, sessionName: 'fix bug' });
  assert.deepEqual(of({ 'x-claude-code-session-id': 'cc-1', 'Svc-Session-Id': 'mine', 'Svc-Session-Path': '/a/b', 'Svc-Session-Name': 'N' }), {
    sessionId: 'mine',
    sessionPath: '/a/b',
    sessionName: 'N',
  });
});

test('logHeaders reads what the record carries in one pass: properties (repeats joined), override, user, the client session in its order', () => {
  const r = { rawHeaders: ['Svc-Property-Team', 'a', 'content-type', 'application/json', 'SVC-PROPERTY-team', 'b', 'Svc-Property-__proto__', 'x', 'Svc-Property-', 'skipped',
    'session-id', 'dash', 'Session_Id', 'underscore', 'Svc-User-Id', 'u1', 'svc-model-override', 'openai/gpt-4o', 'Svc-User-Id', 'second'] } as unknown as IncomingMessage;
  const h = logHeaders(r);
  assert.deepEqual(Object.entries(h.properties), [['team', 'a, b'], ['__proto__', 'x']]);
  assert.equal(Object.getPrototypeOf(h.properties), null);
  assert.equal(h.userId, 'u1', 'the first of a repeated header');
  assert.equal(h.modelOverride, 'openai/gpt-4o');
  assert.equal(h.clientSessionId, 'underscore', 'session_id before session-id');
  const claude = logHeaders({ rawHeaders: ['session_id', 'codex', 'X-Claude-Code-Session-Id', 'cc'] } as unknown as IncomingMessage);
  assert.equal(claude.clientSessionId, 'cc');
  const none = logHeaders({ rawHeaders: ['Authorization', 'Bearer k', 'Host', 'h'] } as unknown as IncomingMessage);
  assert.deepEqual(none, { modelOverride: null, userId: null, properties: none.properties, clientSessionId: null });
  assert.deepEqual({ ...none.properties }, {});
  assert.ok(Object.isFrozen(none.properties), 'the shared empty properties cannot be written');
});
