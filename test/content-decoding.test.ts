/**
 * Unit tests: reading a provider's content-encoding (proxy/upstream/content-decoding.ts) and the log
 * recorder's decoded copy of an encoded answer (ResponseRecorder.decodeAs): whole, cut at the
 * recorder's cap, cut by the provider, past the cap once decoded, and not decodable.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { ResponseRecorder } from '../proxy/observers/response-recorder.ts';
import { codingOf, createDecoder, decodeSync } from '../proxy/upstream/content-decoding.ts';

const fixture = (p: string): Buffer => readFileSync(new URL(`./fixtures/providers/${p}`, import.meta.url));
test('codingOf: the coding in any case, trimmed; empty and identity are null', () => {
  assert.equal(codingOf(' GZIP '), 'gzip');
  assert.equal(codingOf('br'), 'br');
  assert.equal(codingOf('identity'), null);
  assert.equal(codingOf(' Identity'), null);
  assert.equal(codingOf(''), null);
  assert.equal(codingOf('gzip, br'), 'gzip, br');
});

test('createDecoder: gzip, x-gzip, deflate, br; other codings and lists are not read', () => {
  for (const e of ['gzip', 'x-gzip', 'deflate', 'br']) assert.ok(createDecoder(e), e);
  for (const e of ['zstd', 'compress', 'gzip, br']) assert.equal(createDecoder(e), null, e);
});

test('decodeSync: a cut gzip decodes as far as it goes; past maxBytes throws ERR_BUFFER_TOO_LARGE', () => {
  const text = Buffer.from('x'.repeat(100_000));
  const gz = zlib.gzipSync(text);
  const cut = decodeSync('gzip', gz.subarray(0, gz.length - 10), 1 << 20);
  assert.ok(cut.length > 0 && cut.length <= text.length);
  assert.throws(() => decodeSync('gzip', gz, 1000), { code: 'ERR_BUFFER_TOO_LARGE' });
  assert.throws(() => decodeSync('zstd', gz, 1000), /not one the gateway reads/);
});

test('recorder: an encoded JSON answer is kept as its decoded bytes (admin reads body and usage from them)', () => {
  const json = fixture('openai/chat-completion.json');
  for (const [enc, encode] of [['gzip', zlib.gzipSync], ['br', zlib.brotliCompressSync], ['deflate', zlib.deflateSync]] as const) {
    const rec = new ResponseRecorder(false, 1 << 20);
    rec.decodeAs(enc);
    const bytes = encode(json);
    for (let i = 0; i < bytes.length; i += 7) rec.push(bytes.subarray(i, i + 7));
    const out = rec.finish(200);
    assert.deepEqual(out.raw, json, enc);
  }
});

test('recorder: an encoded stream is folded from its decoded events, with usage', () => {
  const rec = new ResponseRecorder(true, 1 << 20);
  rec.decodeAs('gzip');
  rec.push(zlib.gzipSync(fixture('openai/chat-completion-stream.sse')));
  const out = rec.finish(200);
  assert.equal((out.body as any).choices[0].message.content, 'The capital of the UK is London.');
  assert.equal(out.usage?.prompt_tokens, 78);
});

test('recorder: an encoded error body is parsed as the error', () => {
  const rec = new ResponseRecorder(false, 1 << 20);
  rec.decodeAs('gzip');
  rec.push(zlib.gzipSync(fixture('openai/error-429.json')));
  const out = rec.finish(429);
  assert.match(String(out.error), /Rate limit reached/);
});

test('recorder: bytes that do not decode, or decode past the cap, are logged as a note, not as garbage', () => {
  const bad = new ResponseRecorder(false, 1 << 20);
  bad.decodeAs('gzip');
  bad.push(Buffer.from('not gzip'));
  const out = bad.finish(200);
  assert.equal(out.raw, null);
  assert.equal((out.body as any).content_encoding, 'gzip');

  const big = new ResponseRecorder(false, 1000);
  big.decodeAs('gzip');
  big.push(zlib.gzipSync(Buffer.from(`{"x":"${'y'.repeat(10_000)}"}`)));
  const over = big.finish(200);
  assert.equal(over.truncated, true);
  assert.equal(over.raw, null);
});
