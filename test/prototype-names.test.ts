/**
 * Names a client or a provider chooses, looked up in the gateway's tables: one named like an `Object.prototype`
 * property (`constructor`, `toString`, `__proto__`) is an unknown name, never Object.prototype's member.
 * - an Anthropic error `type` (proxy/translators/wire/anthropic-messages.ts `anthropicError`) and a neutral error type
 *   rendered for Messages clients (`anthropicErrorType`);
 * - Gemini's thought signatures carried by tool call id (proxy/translators/shared/carried-reasoning.ts);
 * - the id prefix of a listed input item by its type (proxy/response-store/items.ts);
 * - a Bedrock exception name (proxy/translators/wire/bedrock.ts `bedrockErrorType`: `x-amzn-ErrorType`, a body's
 *   `__type`, a stream's `:exception-type`);
 * - an image data URL's media type sent to Bedrock Converse (proxy/translators/openai-chat-to-bedrock-converse/messages.ts).
 * The top-level request members are covered end to end by test/e2e-hostile-members.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatCompletionRequest, ChatMessage } from '../shared/chat.ts';
import { mapBedrockError } from '../proxy/providers/bedrock.ts';
import { itemsPage } from '../proxy/response-store/items.ts';
import { toConverseRequest } from '../proxy/translators/openai-chat-to-bedrock-converse.ts';
import { decodeCarried, encodeCarried, restoreThoughtSignatures, type CarriedReasoning } from '../proxy/translators/shared/carried-reasoning.ts';
import { anthropicError, anthropicErrorType } from '../proxy/translators/wire/anthropic-messages.ts';
import { bedrockErrorType } from '../proxy/translators/wire/bedrock.ts';
import { refusal } from './support/refusal.ts';

const NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

describe('Anthropic error types', () => {
  for (const name of NAMES) {
    test(`a provider's error type "${name}" is typed by the status`, () => {
      const error = anthropicError({ type: name, message: 'bad' }, 400);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.code, name);
      assert.equal(anthropicError({ type: name, message: 'bad' }, 503).type, 'server_error');
    });

    test(`a neutral type "${name}" without a status is api_error for a Messages client`, () => {
      assert.equal(anthropicErrorType(name), 'api_error');
    });
  }

  test('known types still map', () => {
    assert.equal(anthropicError({ type: 'rate_limit_error', message: 'slow down' }, 429).type, 'rate_limit_exceeded');
    assert.equal(anthropicErrorType('insufficient_quota'), 'billing_error');
  });
});

/** The `extra_content` of tool call `i` of `m` (where the signature goes back). */
const extraOf = (m: ChatMessage, i: number): unknown => (m.tool_calls![i] as unknown as Record<string, unknown>).extra_content;

describe("Gemini's thought signatures by tool call id", () => {
  const message = (ids: string[]): ChatMessage => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
  });

  for (const name of NAMES) {
    test(`a tool call "${name}" without a signature gets none`, () => {
      const carried: CarriedReasoning = { google: { message: 'msg-sig', tool_calls: { other: 'sig-1' } } };
      const m = message([name, 'other']);
      restoreThoughtSignatures(m, carried);
      assert.equal(extraOf(m, 0), undefined);
      assert.deepEqual(extraOf(m, 1), { google: { thought_signature: 'sig-1' } });
    });

    test(`a tool call "${name}" with a signature keeps it through the carrier`, () => {
      const carrier = 'gateway-reasoning:' + Buffer.from(`{"google":{"tool_calls":{${JSON.stringify(name)}:"sig-x"}}}`).toString('base64url');
      const carried = decodeCarried(carrier)!;
      assert.equal(decodeCarried(encodeCarried(carried)) !== null, true);
      const m = message([name]);
      restoreThoughtSignatures(m, decodeCarried(encodeCarried(carried))!);
      assert.deepEqual(extraOf(m, 0), { google: { thought_signature: 'sig-x' } });
    });
  }
});

describe('input item ids', () => {
  test('an item of type "constructor" or "toString" without an id is listed as item_…', () => {
    const page = itemsPage(
      [
        { type: 'constructor', text: 'a' },
        { type: 'toString', text: 'b' },
        { type: 'message', role: 'user', content: 'c' },
      ],
      'resp_abc',
      { limit: 10, order: 'asc', after: null },
    );
    assert.deepEqual(
      (page.data as Array<{ id: string }>).map((i) => i.id),
      ['item_abc0000', 'item_abc0001', 'msg_abc0002'],
    );
  });
});

describe('Bedrock exception names', () => {
  // `Constructor` and `ToString` too: the lookup lower-cases the first letter of AWS's PascalCase names.
  for (const name of [...NAMES, 'Constructor', 'ToString', 'HasOwnProperty']) {
    test(`an exception named "${name}" is typed by the status`, () => {
      assert.equal(bedrockErrorType(name, 400), 'invalid_request_error');
      assert.equal(bedrockErrorType(name, 503), 'server_error');
      const error = mapBedrockError(400, Buffer.from(JSON.stringify({ message: 'bad' })), { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/` });
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.code, name);
      assert.equal(JSON.parse(JSON.stringify(error)).type, 'invalid_request_error');
    });
  }

  test('known names still map', () => {
    assert.equal(bedrockErrorType('ThrottlingException', 400), 'rate_limit_exceeded');
    assert.equal(bedrockErrorType('validationException', 500), 'invalid_request_error');
  });
});

describe('image media types sent to Bedrock Converse', () => {
  const withImage = (url: string): ChatCompletionRequest => ({
    model: 'anthropic.claude-3-haiku',
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
  });

  for (const name of NAMES) {
    test(`an image data URL of media type "${name}" is refused, naming the member`, () => {
      const err = refusal(() => toConverseRequest(withImage(`data:${name};base64,iVBORw0KGgo=`)));
      assert.equal(err.param, 'messages[0].content[0].image_url.url');
    });
  }

  test('a png still maps', () => {
    const converse = toConverseRequest(withImage('data:image/png;base64,iVBORw0KGgo='));
    assert.deepEqual(converse.messages[0]!.content[0], { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } });
  });
});
