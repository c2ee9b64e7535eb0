/**
 * Unit: `encodedSecretPattern` (shared/secret-form.ts) finds a credential however a provider encoded it (JSON
 * `\uXXXX` escapes in either hex case, two-character escapes, percent-encoding of UTF-8 bytes, a JSON-escaped `%`,
 * any mix), including non-ASCII characters and one beyond the BMP, and nothing that decodes to something else;
 * `redactErrorBody` (proxy/upstream/provider-secrets.ts) keeps the rest of the body byte for byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodedSecretPattern, secretForm } from '../shared/secret-form.ts';
import { redactErrorBody } from '../proxy/upstream/provider-secrets.ts';

const u = (s: string, upper = false): string => s.split('').map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).map((e) => (upper ? e.toUpperCase().replace('\\U', '\\u') : e)).join('');
const pct = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

test('an ASCII key with `/` and `-` is found in every encoding, mixed, and nothing else is', () => {
  const key = 'sk-proj/ab+CD-0123';
  const p = encodedSecretPattern(secretForm(key)!);
  const forms = [key, u(key), u(key, true), key.replaceAll('/', '\\/'), key.replaceAll('-', '%2D'), pct(key).toUpperCase(), key.replaceAll('-', '\\u00252d'), `${u('sk')}-proj\\/${pct('ab+CD')}-0123`];
  for (const form of forms) assert.equal(`x ${form} y`.replace(p, '***'), 'x *** y', form);
  for (const other of ['sk-proj/ab+CD-0124', u('sk-proj/ab+CD-012'), 'sk-proj%2Fab+CD-01']) assert.equal(other.replace(p, '***'), other, other);
});

test('a non-ASCII key (searched as latin1 of its UTF-8 bytes) is found as its bytes, percent-encoded, or \\u-escaped code points', () => {
  const key = 'clé-secrète-😀-0';
  const searched = secretForm(key)!;
  const p = encodedSecretPattern(searched);
  const latin1 = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
  for (const form of [latin1(key), pct(key), u(key), latin1('clé-') + u('secrète-😀') + pct('-0')]) assert.equal(`[${form}]`.replace(p, '***'), '[***]', form);
  // `\u00c3` is the code point Ã, not the byte C3: no match.
  assert.equal(u(latin1('é')).replace(encodedSecretPattern(latin1('é')), '***'), u(latin1('é')));
});

test('redactErrorBody redacts an escaped echo in place and leaves an unencoded body as it is', () => {
  const key = 'sk-provider-openai-secret';
  const body = Buffer.from(`{"error":{"message":"Incorrect API key provided: sk\\u002dprovider\\u002Dopenai%2dsecret. See https:\\/\\/x.y\\/a%20b."}}`);
  assert.equal(redactErrorBody(body, key, null).toString(), '{"error":{"message":"Incorrect API key provided: ***. See https:\\/\\/x.y\\/a%20b."}}');
  const clean = Buffer.from('{"error":{"message":"no key here: \\u0041 50%"}}');
  assert.equal(redactErrorBody(clean, key, null), clean);
});
