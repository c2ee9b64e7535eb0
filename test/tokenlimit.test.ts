/**
 * Tests of the token estimator and the token-limit exception handlers (proxy/tokenlimit/).
 * Run: node --import tsx --test test/tokenlimit.test.ts
 *
 * Counting vectors are the examples of OpenAI's cookbook "How to count tokens with tiktoken"
 * (https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb),
 * whose outputs show the `prompt_tokens` the OpenAI API reported for them.
 * Pathological inputs are run here for results and bounds only; their speed is measured by
 * bench/estimate.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest, ChatMessage } from '../shared/chat.ts';
import { GatewayError } from '../proxy/errors.ts';
import { getModelInfo } from '../shared/models.ts';
import { createRequire } from 'node:module';
import {
  analyzeChat,
  analyzeWithSpec,
  countTextsInFull,
  countTextTokens,
  countTokens,
  estimateChatTokens,
  estimateSpec,
  newExactBudget,
  setTokenizerBackend,
  tokenizerBackendName,
  warmUpEstimator,
  type EncodingName,
} from '../shared/token-estimate.ts';
import { applyTokenLimit, assertFits, parseTokenLimitHandler, tightestTarget, type ModelLimits, type TokenLimitHandler } from '../proxy/tokenlimit/index.ts';
import { removableGroups } from '../proxy/tokenlimit/middle-out.ts';
import { normalizeText } from '../proxy/tokenlimit/slots.ts';
import { prose, rng } from './support/text.ts';

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/** The cookbook's example conversation (section 6). API: 129 prompt tokens on gpt-3.5-turbo/gpt-4, 124 on gpt-4o/gpt-4o-mini. */
const COOKBOOK_MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.' },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  { role: 'system', name: 'example_user', content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage." },
  { role: 'system', name: 'example_assistant', content: "Let's talk later when we're less busy about how to do better." },
  { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

/** The cookbook's tool example (section 7). API: 105 prompt tokens on gpt-3.5-turbo/gpt-4, 101 on gpt-4o/gpt-4o-mini. */
const COOKBOOK_TOOLS_BODY: ChatCompletionRequest = {
  model: 'x',
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_current_weather',
        description: 'Get the current weather in a given location',
        parameters: {
          type: 'object',
          properties: {
            location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
            unit: { type: 'string', description: 'The unit of temperature to return', enum: ['celsius', 'fahrenheit'] },
          },
          required: ['location'],
        },
      },
    },
  ],
  messages: [
    { role: 'system', content: 'You are a helpful assistant that can answer to questions about the weather.' },
    { role: 'user', content: "What's the weather like in San Francisco?" },
  ],
};


const resolver = {
  resolve(s: string): { provider: string; model: string } {
    const slash = s.indexOf('/');
    return slash > 0 ? { provider: s.slice(0, slash), model: s.slice(slash + 1) } : { provider: 'openai', model: s };
  },
};

/** Small, known limits for tests (tokens). */
const LIMITS: Record<string, ModelLimits> = {
  'openai/gpt-4o': { contextWindow: 2000, maxOutputTokens: 500, defaultOutputTokens: 500 }, // allowed 1500
  'openai/gpt-4o-mini': { contextWindow: 1200, maxOutputTokens: 200, defaultOutputTokens: 200 }, // allowed 1000
  'anthropic/claude-sonnet-4-5': { contextWindow: 20000, maxOutputTokens: 1000, defaultOutputTokens: 1000 }, // allowed 19000
  'openai/gpt-4': { contextWindow: 1000, maxOutputTokens: 200, defaultOutputTokens: 200 }, // allowed 800
};
const opts = {
  modelInfo: (provider: string, model: string): ModelLimits | null => LIMITS[`${provider}/${model}`] ?? null,
  factor: (provider: string): number => (provider === 'anthropic' ? 1.2 : 1),
};

function body(messages: ChatMessage[], model = 'openai/gpt-4o', extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model, messages, ...extra };
}

/**
 * Whole-string token counts straight from the libraries (no chunking, no sampling), as the
 * cookbook's `len(encoding.encode(value))`; special-token text counts as ordinary text.
 */
const requireCjs = createRequire(import.meta.url);
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const gptTokenizer: Record<EncodingName, { countTokens(t: string, o: unknown): number }> = {
  o200k_base: requireCjs('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: requireCjs('gpt-tokenizer/encoding/cl100k_base'),
};
function wholeCount(text: string, encoding: EncodingName): number {
  return gptTokenizer[encoding].countTokens(text, NO_SPECIAL);
}
function jsTiktokenCount(text: string, encoding: EncodingName): number {
  const { Tiktoken } = requireCjs('js-tiktoken/lite') as { Tiktoken: new (r: unknown) => { encode(t: string, a: string[], d: string[]): number[] } };
  const ranks = requireCjs(`js-tiktoken/ranks/${encoding}`) as { default?: unknown };
  return new Tiktoken(ranks.default ?? ranks).encode(text, [], []).length;
}

/**
 * OpenAI's cookbook `num_tokens_from_messages` for gpt-4o / gpt-4 (tokens_per_message 3,
 * tokens_per_name 1, every value of every message counted, +3 for the reply priming), strings
 * counted whole by `count`.
 */
function cookbookCount(messages: ChatMessage[], encoding: EncodingName, count = wholeCount): number {
  let n = 3;
  for (const m of messages) {
    n += 3;
    for (const [key, value] of Object.entries(m)) {
      n += count(String(value), encoding);
      if (key === 'name') n += 1;
    }
  }
  return n;
}

/**
 * One user message whose cookbook count is exactly `target` tokens: prose (about 5.99 characters
 * per token) a little short of it, padded with " the" (one token each after a non-space).
 */
function userMessageOfTokens(target: number, encoding: EncodingName, seed = 5): ChatMessage[] {
  const textTokens = target - 7; // 3 per message + "user" (1) + 3 reply priming
  const text = prose(Math.floor(textTokens * 5.9), seed, 100_000).trimEnd();
  const pad = textTokens - wholeCount(text, encoding);
  assert.ok(pad >= 0 && pad < textTokens * 0.03, `padding ${pad}`);
  return [{ role: 'user', content: text + ' the'.repeat(pad) }];
}

/** Deterministic Chinese-like text: common Han characters with a comma or full stop every ~15 characters. */
function cjkText(chars: number, seed: number): string {
  const han = '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身';
  const r = rng(seed);
  let s = '';
  while (s.length < chars) {
    s += han[Math.floor(r() * han.length)];
    const x = r();
    if (x < 0.05) s += '，';
    else if (x < 0.07) s += '。';
    else if (x < 0.075) s += String(Math.floor(r() * 2000));
  }
  return s;
}

function textOf(m: ChatMessage | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

// ---------------------------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------------------------

describe('estimateChatTokens: the cookbook examples (API prompt_tokens)', () => {
  for (const backend of ['gpt-tokenizer', 'js-tiktoken'] as const) {
    it(`${backend}: 129 tokens on gpt-3.5-turbo / gpt-4 (cl100k_base), 124 on gpt-4o / gpt-4o-mini (o200k_base)`, () => {
      setTokenizerBackend(backend);
      assert.equal(tokenizerBackendName(), backend);
      const b = body(COOKBOOK_MESSAGES, 'x');
      for (const m of ['gpt-3.5-turbo', 'gpt-4-0613', 'gpt-4']) assert.equal(estimateChatTokens(b, 'openai', m), 129, m);
      for (const m of ['gpt-4o', 'gpt-4o-mini', 'gpt-4o-2024-08-06']) assert.equal(estimateChatTokens(b, 'openai', m), 124, m);
    });
    it(`${backend}: with the weather tool, 105 tokens on gpt-3.5-turbo / gpt-4, 101 on gpt-4o / gpt-4o-mini`, () => {
      setTokenizerBackend(backend);
      for (const m of ['gpt-3.5-turbo', 'gpt-4']) assert.equal(estimateChatTokens(COOKBOOK_TOOLS_BODY, 'openai', m), 105, m);
      for (const m of ['gpt-4o', 'gpt-4o-mini']) assert.equal(estimateChatTokens(COOKBOOK_TOOLS_BODY, 'openai', m), 101, m);
    });
  }
  it('defaults to gpt-tokenizer (same counts, faster) and warms up idempotently', () => {
    setTokenizerBackend('gpt-tokenizer');
    warmUpEstimator();
    warmUpEstimator();
    assert.equal(tokenizerBackendName(), 'gpt-tokenizer');
  });
});

describe('estimateSpec: encodings and factors', () => {
  it('o200k_base for gpt-4o, gpt-4.1, o-series, gpt-5; cl100k_base for gpt-4 and gpt-3.5', () => {
    for (const m of ['gpt-4o', 'gpt-4o-mini', 'chatgpt-4o-latest', 'gpt-4.1', 'gpt-4.1-nano', 'o1', 'o1-mini', 'o3', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-oss-120b']) {
      assert.deepEqual(estimateSpec('openai', m), { encoding: 'o200k_base', factor: 1, openaiFamily: true }, m);
    }
    for (const m of ['gpt-4', 'gpt-4-turbo', 'gpt-4-0613', 'gpt-3.5-turbo', 'gpt-35-turbo']) {
      assert.deepEqual(estimateSpec('openai', m), { encoding: 'cl100k_base', factor: 1, openaiFamily: true }, m);
    }
    assert.equal(estimateSpec('openrouter', 'openai/gpt-4o').openaiFamily, true);
    assert.equal(estimateSpec('groq', 'openai/gpt-oss-120b').factor, 1);
  });
  it('other models: o200k_base times the provider factor', () => {
    const spec = estimateSpec('anthropic', 'claude-sonnet-4-5', { factor: () => 1.2 });
    assert.deepEqual(spec, { encoding: 'o200k_base', factor: 1.2, openaiFamily: false });
    const b = body(COOKBOOK_MESSAGES);
    assert.equal(estimateChatTokens(b, 'anthropic', 'claude-sonnet-4-5', { factor: () => 1.2 }), Math.ceil(124 * 1.2));
    assert.equal(estimateChatTokens(b, 'someprovider', 'some-model', { factor: () => 1 }), 124);
    // the shared table's factor by default
    assert.ok(estimateChatTokens(b, 'anthropic', 'claude-sonnet-4-5') >= 124);
  });
});

describe('counting in chunks', () => {
  it('chunking at spaces gives the unchunked count on normal text', async () => {
    const { countTokens: whole } = await import('gpt-tokenizer/encoding/o200k_base');
    const text = prose(30_000, 7);
    assert.equal(countTextTokens(text, 'o200k_base'), whole(text));
    const code = 'function f(a, b) {\n  return a   +   b; // sum\n}\n\n\tconst x = [1, 2, 3].map((v) => v * 2);\n'.repeat(200);
    assert.equal(countTextTokens(code, 'o200k_base'), whole(code));
  });
  it('cuts only at pre-tokenizer piece boundaries: CJK, JSON, base64, mixed scripts count as the whole text', () => {
    setTokenizerBackend('gpt-tokenizer');
    const r = rng(21);
    const b64 = Array.from({ length: 20_000 }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[Math.floor(r() * 64)]).join('');
    const json = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item_${i}`, url: `https://example.com/p/${i}?q=${i * 13}`, v: r() })));
    const mixed = 'Ünïcödé—“quotes”…‘x’ cafe\u0301 東京タワー（とうきょうタワー）は、日本の東京都港区芝公園にある総合電波塔。1958年12月23日竣工。😀𝒜𝟘\r\n'.repeat(300);
    for (const [name, text] of Object.entries({ cjk: cjkText(30_000, 3), base64: b64, json, minified: json.replace(/\s+/g, ''), mixed })) {
      for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
        assert.equal(countTextTokens(text, encoding), wholeCount(text, encoding), `${name} ${encoding}`);
      }
    }
    assert.equal(analyzeChat(body([{ role: 'user', content: cjkText(3000, 1) }]), 'openai', 'gpt-4o').exact, true);
    const long = analyzeChat(body([{ role: 'user', content: 'x'.repeat(1000) }]), 'openai', 'gpt-4o');
    assert.equal(long.sampled, false);
    assert.equal(long.exact, false, 'one 1,000-letter piece had to be cut: possibly off the tokenizer\'s count');
  });
  it('cuts only at piece boundaries on random mixes of letters, marks, digits, apostrophes, CR/LF, odd spaces and astral characters', () => {
    setTokenizerBackend('gpt-tokenizer');
    const alphabet = ['a', 'Z', 'é', 'e\u0301', '\u0301', '東', 'ア', '1', '23', '٣', 'Ⅻ', "'", 's', 'll', ' ', '  ', '\n', '\r\n', '\t', '\u0085', '\ufeff', '\u00a0', '\u3000', '.', ',', '/', '(', '"', '$', '😀', '𝒜', '𝟘', '-', '#', '\u200b', '<|endoftext|>', 'ǅ'];
    const r = rng(8);
    for (let k = 0; k < 150; k++) {
      const sub = alphabet.filter(() => r() < 0.35);
      let text = 'x';
      while (text.length < 300 + k * 10) text += (sub.length > 0 ? sub : alphabet)[Math.floor(r() * (sub.length || alphabet.length))];
      for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
        assert.equal(countTextTokens(text, encoding), wholeCount(text, encoding), `${encoding}: ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
  });
  it('special-token text is ordinary text', () => {
    assert.ok(countTokens('<|endoftext|> <|im_start|>') > 2);
  });
  it('a sampled estimate of a large body stays within 5% of the exact count, above it by the margin', () => {
    const text = prose(400_000, 3);
    const exact = countTextTokens(text, 'o200k_base');
    const a = analyzeChat(body([{ role: 'user', content: text }]), 'openai', 'gpt-4o');
    assert.equal(a.exact, false);
    const err = a.tokens / (exact + 3 + 1 + 3) - 1;
    assert.ok(Math.abs(err) < 0.05, `error ${(err * 100).toFixed(2)}%`);
    assert.equal(analyzeChat(body([{ role: 'user', content: text }]), 'openai', 'gpt-4o').tokens, a.tokens, 'deterministic');
    assert.ok(a.tokens <= a.bound);
  });
});

describe('pathological bodies estimate without hanging (results and bounds only)', () => {
  const MB = 1_000_000;
  const r = rng(11);
  let unicode = '';
  while (unicode.length < MB / 3) {
    const cp = 0x20 + Math.floor(r() * 0xfff0);
    if (cp < 0xd800 || cp > 0xdfff) unicode += String.fromCodePoint(cp);
  }
  const cases: Record<string, string> = {
    '1 MB without spaces': 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(MB / 36),
    '1 MB of spaces': ' '.repeat(MB),
    '1 MB of one repeated character': 'a'.repeat(MB),
    '1 MB of random letters': Array.from({ length: MB }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join(''),
    '1 MB of random unicode': unicode,
  };
  for (const [name, text] of Object.entries(cases)) {
    it(name, () => {
      const a = analyzeChat(body([{ role: 'user', content: text }]), 'openai', 'gpt-4o');
      assert.ok(Number.isFinite(a.tokens) && a.tokens > 0);
      assert.ok(a.tokens <= a.bound, `${a.tokens} <= ${a.bound}`);
      assert.ok(a.bound <= Buffer.byteLength(text) + 10);
    });
  }
  it('10,000 content parts, arrays nested 10,000 deep, and image parts', () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', text: `part ${i} ` }));
    const flat = analyzeChat(body([{ role: 'user', content: parts }]), 'openai', 'gpt-4o');
    assert.ok(flat.tokens >= 20_000 && flat.tokens <= flat.bound);

    let nested: unknown = [{ type: 'text', text: 'deep' }];
    for (let i = 0; i < 10_000; i++) nested = [nested, { type: 'text', text: 'x' }];
    const deep = analyzeChat(body([{ role: 'user', content: nested as ChatMessage['content'] }]), 'openai', 'gpt-4o');
    assert.ok(deep.tokens >= 10_000 && deep.tokens <= deep.bound);

    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(MB)}` } };
    const low = { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } };
    const img = analyzeChat(body([{ role: 'user', content: [{ type: 'text', text: 'describe' }, image, low] }]), 'openai', 'gpt-4o');
    // 3 + role + "describe" + 765 + 85 + 3 — the base64 data is not counted as text
    assert.ok(img.tokens > 850 && img.tokens < 870, String(img.tokens));
    assert.ok(img.tokens <= img.bound);
  });
});

// ---------------------------------------------------------------------------------------------
// Header and result basics
// ---------------------------------------------------------------------------------------------

describe('parseTokenLimitHandler', () => {
  it('accepts the three handlers; absent or empty means none', () => {
    assert.equal(parseTokenLimitHandler('truncate'), 'truncate');
    assert.equal(parseTokenLimitHandler(' Middle-Out '), 'middle-out');
    assert.equal(parseTokenLimitHandler('fallback'), 'fallback');
    assert.equal(parseTokenLimitHandler(undefined), null);
    assert.equal(parseTokenLimitHandler(''), null);
  });
  it('any other value is a 400 naming the header', () => {
    for (const v of ['truncated', 'middle_out', 'none', 'truncate,fallback']) {
      assert.throws(
        () => parseTokenLimitHandler(v),
        (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'Svc-Token-Limit-Exception-Handler' && e.message.includes('Svc-Token-Limit-Exception-Handler'),
      );
    }
  });
});

describe('applyTokenLimit: unknown models and bodies within the limit', () => {
  it('an unknown model is skipped by truncate and middle-out, body untouched', () => {
    const b = body([{ role: 'user', content: prose(20_000) }], 'openai/unknown-model');
    for (const h of ['truncate', 'middle-out'] as const) {
      const r = applyTokenLimit(h, b, resolver, opts);
      assert.equal(r.skipped, 'unknown-model');
      assert.equal(r.changed, false);
      assert.equal(r.body, b);
      assert.equal(r.allowedInput, null);
      assert.equal(r.tokensBefore, null);
    }
  });
  it('bodies within the limit come back unchanged (same object, deepEqual), for every handler', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be   brief .' },
      { role: 'user', content: prose(2000) },
    ];
    for (const h of ['truncate', 'middle-out', 'fallback'] as TokenLimitHandler[]) {
      const b = body(messages);
      const snapshot = structuredClone(b);
      const r = applyTokenLimit(h, b, resolver, opts);
      assert.equal(r.changed, false, h);
      assert.equal(r.body, b, h);
      assert.deepEqual(r.body, snapshot, h);
      assert.equal(r.skipped, 'within-limit', h);
      assert.equal(r.allowedInput, 1500);
      assert.ok(r.tokensBefore !== null && r.tokensBefore <= 1500);
      assert.equal(r.model, 'gpt-4o');
      assert.equal(r.provider, 'openai');
    }
  });
  it('a body whose UTF-8 bytes fit the allowance is not counted (tokensBefore null)', () => {
    const b = body([{ role: 'user', content: 'hello there' }]);
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.equal(r.skipped, 'within-limit');
    assert.equal(r.tokensBefore, null);
    assert.equal(r.body, b);
  });
  it('the reserved output is max_completion_tokens / max_tokens / max_output_tokens, at most the model\'s output limit, else the default', () => {
    const b = body([{ role: 'user', content: 'hi' }]); // gpt-4o here: window 2000, output limit 500
    assert.equal(applyTokenLimit('truncate', b, resolver, opts).allowedInput, 1500);
    assert.equal(applyTokenLimit('truncate', { ...b, max_tokens: 100 }, resolver, opts).allowedInput, 1900);
    assert.equal(applyTokenLimit('truncate', { ...b, max_completion_tokens: 400, max_tokens: 100 }, resolver, opts).allowedInput, 1600);
    assert.equal(applyTokenLimit('truncate', { ...b, max_output_tokens: 499 }, resolver, opts).allowedInput, 1501);
    // More than the model can write reserves what it can write: the input allowance stays 1500.
    assert.equal(applyTokenLimit('truncate', { ...b, max_output_tokens: 1999 }, resolver, opts).allowedInput, 1500);
    assert.equal(applyTokenLimit('truncate', { ...b, max_tokens: 5000 }, resolver, opts).allowedInput, 1500);
    assert.equal(applyTokenLimit('fallback', { ...b, max_tokens: 5000 }, resolver, opts).allowedInput, 1500);
  });
  it('Svc-Model-Override (opts.modelOverride) names the model used, with or without body.model', () => {
    const b = { messages: [{ role: 'user', content: prose(5000) }] } as unknown as ChatCompletionRequest;
    const r = applyTokenLimit('truncate', b, resolver, { ...opts, modelOverride: 'openai/gpt-4o-mini' });
    assert.equal(r.model, 'gpt-4o-mini');
    assert.equal(r.allowedInput, 1000);
    assert.throws(() => applyTokenLimit('truncate', b, resolver, opts), (e: unknown) => e instanceof GatewayError && e.status === 400);
  });
  it('uses the shared model table by default', () => {
    const info = getModelInfo('openai', 'gpt-4');
    assert.ok(info, 'openai/gpt-4 is in shared/models.ts');
    const allowed = info.contextWindow - info.defaultOutputTokens;
    const b = body([{ role: 'user', content: prose(allowed * 10) }], 'openai/gpt-4');
    const r = applyTokenLimit('truncate', b, resolver);
    assert.equal(r.allowedInput, allowed);
    assert.ok(r.changed && r.tokensAfter !== null && r.tokensAfter <= allowed);
    assert.equal(estimateChatTokens(r.body, 'openai', 'gpt-4'), r.tokensAfter);
  });
});

// ---------------------------------------------------------------------------------------------
// truncate
// ---------------------------------------------------------------------------------------------

describe('truncate', () => {
  it('normalizes whitespace and punctuation spacing first; stops there when that fits', () => {
    assert.equal(normalizeText('  Hello ,   world  !\n\n( see   this ) \t '), 'Hello, world! (see this)');
    const spaced = prose(4000).split(' ').join(' \n\t  ') + ' .';
    const b = body([
      { role: 'system', content: 'You are   terse .' },
      { role: 'user', content: spaced },
    ]);
    const before = estimateChatTokens(b, 'openai', 'gpt-4o');
    assert.ok(before > 1500, String(before));
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.equal(r.changed, true);
    assert.equal(r.skipped, undefined);
    assert.equal(textOf(r.body.messages[0]), 'You are terse.');
    assert.ok(!textOf(r.body.messages[1]).includes('[truncated]'), 'no cut needed');
    assert.equal(textOf(r.body.messages[1]), normalizeText(spaced));
    assert.ok(r.tokensAfter! <= 1500);
    assert.equal(r.tokensBefore, before);
  });
  it('shortens the longest texts proportionally, system and last user message last; the result fits', () => {
    const system = `You are a careful assistant. ${prose(400, 2)}`;
    const lastUser = `Please answer: ${prose(400, 3)}`;
    const messages: ChatMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: prose(6000, 4) },
      { role: 'assistant', content: prose(3000, 5) },
      { role: 'user', content: [{ type: 'text', text: prose(300, 6) }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
      { role: 'user', content: lastUser },
    ];
    const b = body(messages);
    const snapshot = structuredClone(b);
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.deepEqual(b, snapshot, 'input not mutated');
    assert.ok(r.changed);
    assert.ok(r.tokensBefore! > 1500 && r.tokensAfter! <= 1500, `${r.tokensBefore} → ${r.tokensAfter}`);
    assert.equal(estimateChatTokens(r.body, 'openai', 'gpt-4o'), r.tokensAfter, 're-estimate');
    const out = r.body.messages;
    assert.equal(out.length, 5);
    assert.equal(textOf(out[0]), normalizeText(system), 'system message untouched');
    assert.equal(textOf(out[4]), normalizeText(lastUser), 'last user message untouched');
    const long = textOf(out[1]);
    const mid = textOf(out[2]);
    assert.ok(long.endsWith('… [truncated]') && mid.endsWith('… [truncated]'));
    assert.ok(normalizeText(messages[1]!.content as string).startsWith(long.replace(/ … \[truncated\]$/, '')), 'cut keeps the head, at a word boundary');
    // proportional: the longer text loses more
    assert.ok(6000 - long.length > 3000 - mid.length);
    assert.ok(Array.isArray(out[3]!.content) && out[3]!.content.length === 2, 'image part kept');
  });
  it('cuts the system and last user message when the others are not enough', () => {
    const b = body([
      { role: 'system', content: prose(5000, 8) },
      { role: 'user', content: 'short' },
      { role: 'user', content: prose(5000, 9) },
    ]);
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.ok(r.tokensAfter! <= 1500);
    assert.ok(textOf(r.body.messages[0]).endsWith('[truncated]'));
    assert.ok(textOf(r.body.messages[2]).endsWith('[truncated]'));
    assert.equal(estimateChatTokens(r.body, 'openai', 'gpt-4o'), r.tokensAfter);
  });
  it('works with a provider factor (non-OpenAI model) and a cl100k model', () => {
    const b = body([{ role: 'user', content: prose(150_000, 10) }], 'anthropic/claude-sonnet-4-5');
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.ok(r.tokensBefore! > 19000 && r.tokensAfter! <= 19000);
    assert.equal(estimateChatTokens(r.body, 'anthropic', 'claude-sonnet-4-5', { factor: opts.factor }), r.tokensAfter);
    const c = applyTokenLimit('truncate', body([{ role: 'user', content: prose(9000, 11) }], 'openai/gpt-4'), resolver, opts);
    assert.ok(c.tokensAfter! <= 800);
    assert.equal(estimateChatTokens(c.body, 'openai', 'gpt-4'), c.tokensAfter);
  });
  it('when images alone exceed the allowance, returns its smallest body, over the limit, which assertFits refuses', () => {
    const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }; // 765 tokens each
    const b = body([{ role: 'user', content: [{ type: 'text', text: prose(3000) }, image, image, image] }], 'openai/gpt-4o-mini');
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.equal(r.changed, true);
    assert.ok(r.tokensAfter! > r.allowedInput! && r.tokensAfter! < r.tokensBefore!, `${r.tokensBefore} → ${r.tokensAfter}`);
    const text = (r.body.messages[0]!.content as Array<{ text?: string }>)[0]!.text!;
    assert.ok(text.endsWith(' … [truncated]') && text.length > 50, `the last user message keeps its start: ${text}`);
    assert.equal(r.contextWindow, 1200);
    assert.throws(
      () => assertFits(r),
      (e: unknown) => e instanceof GatewayError && e.status === 400 && e.code === 'context_length_exceeded' && /context window of openai\/gpt-4o-mini: 1200 tokens, 200 of them reserved/.test(e.message),
    );
  });
  it('never cuts the first system message and the last user message below their start: over the limit instead', () => {
    // Ten middle messages at the marker still leave too little room for the two protected texts.
    const messages: ChatMessage[] = [
      { role: 'system', content: `SYSTEM ${prose(400, 40)}` },
      ...Array.from({ length: 10 }, (_, i): ChatMessage => ({ role: i % 2 ? 'assistant' : 'user', content: prose(400, 41 + i) })),
      { role: 'user', content: `QUESTION ${prose(400, 52)}` },
    ];
    const r = applyTokenLimit('truncate', body(messages), resolver, { ...opts, modelInfo: () => ({ contextWindow: 250, maxOutputTokens: 100, defaultOutputTokens: 100 }) });
    assert.equal(r.allowedInput, 150);
    assert.ok(r.tokensAfter! > 150, String(r.tokensAfter));
    assert.match(textOf(r.body.messages[0]), /^SYSTEM \S+.* … \[truncated\]$/);
    assert.match(textOf(r.body.messages[11]), /^QUESTION \S+.* … \[truncated\]$/);
    assert.equal(textOf(r.body.messages[5]), '… [truncated]', 'the others go down to the marker');
    assert.throws(() => assertFits(r), (e: unknown) => e instanceof GatewayError && e.code === 'context_length_exceeded');
    // Within the allowance assertFits lets the result through.
    assert.doesNotThrow(() => assertFits(applyTokenLimit('truncate', body(messages), resolver, opts)));
  });
  it('a 1 MB body comes out within the limit', () => {
    const b = body([{ role: 'user', content: prose(1_000_000, 12) }], 'anthropic/claude-sonnet-4-5');
    const r = applyTokenLimit('truncate', b, resolver, opts);
    assert.ok(r.tokensAfter! <= 19000);
    assert.equal(estimateChatTokens(r.body, 'anthropic', 'claude-sonnet-4-5', { factor: opts.factor }), r.tokensAfter);
  });
});

// ---------------------------------------------------------------------------------------------
// middle-out
// ---------------------------------------------------------------------------------------------

function agentConversation(): ChatMessage[] {
  return [
    { role: 'system', content: 'You are an agent. Use the tools.' },
    { role: 'user', content: `First question: ${prose(800, 20)}` },
    { role: 'assistant', content: prose(800, 21) },
    { role: 'user', content: prose(800, 22) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'search', arguments: '{"q":"weather"}' } },
        { id: 'call_b', type: 'function', function: { name: 'fetch', arguments: '{"url":"https://example.com"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_a', content: prose(1500, 23) },
    { role: 'tool', tool_call_id: 'call_b', content: prose(1500, 24) },
    { role: 'assistant', content: prose(800, 25) },
    { role: 'user', content: prose(800, 26) },
    { role: 'assistant', content: prose(800, 27) },
    { role: 'user', content: 'Last question: what now?' },
  ];
}

describe('middle-out', () => {
  it('groups an assistant tool call with its tool results', () => {
    const groups = removableGroups(agentConversation());
    assert.deepEqual(
      groups.map((g) => g.indices),
      [[1], [2], [3], [4, 5, 6], [7], [8], [9]],
    );
  });
  it('removes middle messages first, keeps the first system and last user message, tool call and results together; fits', () => {
    const messages = agentConversation();
    const b = body(messages, 'openai/gpt-4o-mini'); // allowed 1000
    const snapshot = structuredClone(b);
    const r = applyTokenLimit('middle-out', b, resolver, opts);
    assert.deepEqual(b, snapshot, 'input not mutated');
    assert.ok(r.changed);
    assert.equal(r.allowedInput, 1000);
    assert.ok(r.tokensBefore! > 1000 && r.tokensAfter! <= 1000, `${r.tokensBefore} → ${r.tokensAfter}`);
    assert.equal(estimateChatTokens(r.body, 'openai', 'gpt-4o-mini'), r.tokensAfter, 're-estimate');
    const out = r.body.messages;
    assert.equal(out[0], messages[0], 'first system message kept');
    assert.equal(out[out.length - 1], messages[messages.length - 1], 'last user message kept');
    // every kept message is an original one, unchanged (whole messages were removed)
    for (const m of out) assert.ok(messages.includes(m));
    // beginning and end kept: the first user message and the message before the last survive
    assert.ok(out.includes(messages[1]!) && out.includes(messages[9]!), 'head and tail kept');
    // the tool call and its two results went together
    assert.ok(!out.includes(messages[4]!) && !out.includes(messages[5]!) && !out.includes(messages[6]!));
    for (const m of out) {
      if (m.role === 'tool') assert.ok(out.some((a) => a.tool_calls?.some((c) => c.id === m.tool_call_id)), 'no orphan tool result');
    }
  });
  it('never leaves a tool call without its results (tight limit)', () => {
    const messages = agentConversation();
    for (const window of [700, 1200, 1800, 2400]) {
      const r = applyTokenLimit('middle-out', body(messages), resolver, {
        ...opts,
        modelInfo: () => ({ contextWindow: window, maxOutputTokens: 100, defaultOutputTokens: 100 }),
      });
      const out = r.body.messages;
      const hasCall = out.includes(messages[4]!);
      assert.equal(out.includes(messages[5]!) || out.includes(messages[6]!), hasCall, `window ${window}`);
      if (hasCall) assert.ok(out.includes(messages[5]!) && out.includes(messages[6]!));
      assert.ok(r.tokensAfter! <= window - 100, `window ${window}: ${r.tokensAfter}`);
      assert.equal(r.body.messages[0]!.role, 'system');
      assert.ok(textOf(out[out.length - 1]).startsWith('Last question'));
    }
  });
  it('then cuts the middle of the longest remaining text, keeping its head and tail', () => {
    const long = `BEGINNING ${prose(12_000, 30)} THE END`;
    const b = body([
      { role: 'system', content: 'Summarize.' },
      { role: 'assistant', content: prose(500, 31) },
      { role: 'user', content: long },
    ]);
    const r = applyTokenLimit('middle-out', b, resolver, opts);
    assert.ok(r.tokensAfter! <= 1500);
    assert.equal(estimateChatTokens(r.body, 'openai', 'gpt-4o'), r.tokensAfter);
    assert.equal(r.body.messages.length, 2, 'the middle message went first');
    const text = textOf(r.body.messages[1]);
    assert.ok(text.startsWith('BEGINNING ') && text.endsWith(' THE END'), 'head and tail kept');
    assert.ok(text.includes('… [truncated] …'));
  });
  it('keeps the head and tail of the system and last user message when even those cannot fit: over the limit, refused by assertFits', () => {
    const b = body([
      { role: 'system', content: `SYSTEM ${prose(2000, 32)} RULES` },
      { role: 'assistant', content: prose(500, 33) },
      { role: 'user', content: `QUESTION ${prose(2000, 34)} END` },
    ]);
    const r = applyTokenLimit('middle-out', b, resolver, { ...opts, modelInfo: () => ({ contextWindow: 150, maxOutputTokens: 100, defaultOutputTokens: 100 }) });
    assert.equal(r.allowedInput, 50);
    assert.ok(r.tokensAfter! > 50, String(r.tokensAfter));
    assert.equal(r.body.messages.length, 2);
    assert.match(textOf(r.body.messages[0]), /^SYSTEM .*… \[truncated\] …\n.* RULES$/s);
    assert.match(textOf(r.body.messages[1]), /^QUESTION .*… \[truncated\] …\n.* END$/s);
    assert.throws(() => assertFits(r), (e: unknown) => e instanceof GatewayError && e.code === 'context_length_exceeded' && /middle-out/.test(e.message));
  });
});

// ---------------------------------------------------------------------------------------------
// fallback
// ---------------------------------------------------------------------------------------------

describe('fallback', () => {
  it('switches to the fallback only when over the primary limit', () => {
    const model = 'openai/gpt-4o, anthropic/claude-sonnet-4-5';
    const small = body([{ role: 'user', content: prose(3000) }], model);
    const r1 = applyTokenLimit('fallback', small, resolver, opts);
    assert.equal(r1.provider, 'openai');
    assert.equal(r1.model, 'gpt-4o');
    assert.equal(r1.body.model, 'openai/gpt-4o', 'normalized to the primary');
    assert.equal(r1.changed, true);
    assert.equal(r1.skipped, 'within-limit');
    assert.deepEqual({ ...r1.body, model: small.model }, small, 'only the model changed');

    const big = body([{ role: 'user', content: prose(20_000) }], model);
    const r2 = applyTokenLimit('fallback', big, resolver, opts);
    assert.equal(r2.provider, 'anthropic');
    assert.equal(r2.model, 'claude-sonnet-4-5');
    assert.equal(r2.body.model, 'anthropic/claude-sonnet-4-5');
    assert.equal(r2.body.messages, big.messages, 'messages untouched');
    assert.equal(r2.skipped, undefined);
    assert.equal(r2.allowedInput, 19000);
    assert.ok(r2.tokensBefore! > 1500);
    assert.equal(r2.tokensAfter, estimateChatTokens(big, 'anthropic', 'claude-sonnet-4-5', { factor: opts.factor }));
  });
  it('router-style bare names, and a single model within the limit is left as is', () => {
    const big = body([{ role: 'user', content: prose(20_000) }], 'gpt-4o,gpt-4.1');
    const r = applyTokenLimit('fallback', big, resolver, { ...opts, modelInfo: (p, m) => (m === 'gpt-4.1' ? { contextWindow: 1e6, maxOutputTokens: 1000, defaultOutputTokens: 1000 } : opts.modelInfo(p, m)) });
    assert.equal(r.model, 'gpt-4.1');
    assert.equal(r.body.model, 'gpt-4.1');
    const one = body([{ role: 'user', content: 'hi' }], 'gpt-4o');
    const r1 = applyTokenLimit('fallback', one, resolver, opts);
    assert.equal(r1.changed, false);
    assert.equal(r1.body, one);
  });
  it('when no entry fits, the last is chosen and assertFits lets it through (the body is the client\'s)', () => {
    const b = body([{ role: 'user', content: prose(30_000) }], 'openai/gpt-4o,openai/gpt-4o-mini');
    const r = applyTokenLimit('fallback', b, resolver, opts);
    assert.equal(r.model, 'gpt-4o-mini');
    assert.equal(r.entry, 'openai/gpt-4o-mini');
    assert.ok(r.tokensAfter! > r.allowedInput!);
    assert.doesNotThrow(() => assertFits(r));
  });
  it('tightestTarget: the known target with the smallest input allowance for the body, else the first', () => {
    const targets = [
      { provider: 'groq', model: 'unknown' },
      { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      { provider: 'openai', model: 'gpt-4o' },
      { provider: 'openai', model: 'gpt-4o-mini' },
    ];
    const b = body([{ role: 'user', content: 'hi' }]);
    assert.equal(tightestTarget(b, targets, opts), targets[3], 'gpt-4o-mini: 1000 allowed');
    // max_tokens 100: gpt-4o 1900, gpt-4o-mini 1100 → still gpt-4o-mini; 450: gpt-4o 1550, mini capped at 200 → 1000
    assert.equal(tightestTarget({ ...b, max_tokens: 450 }, targets, opts), targets[3]);
    assert.equal(tightestTarget(b, targets.slice(0, 3), opts), targets[2]);
    assert.equal(tightestTarget(b, targets.slice(0, 1), opts), targets[0], 'none known: the first');
    assert.equal(tightestTarget(b, [], opts), null);
  });
  it('an unknown primary is kept (limits unknown)', () => {
    const b = body([{ role: 'user', content: prose(20_000) }], 'openai/mystery,openai/gpt-4o');
    const r = applyTokenLimit('fallback', b, resolver, opts);
    assert.equal(r.skipped, 'unknown-model');
    assert.equal(r.model, 'mystery');
    assert.equal(r.body.model, 'openai/mystery');
  });
});

// ---------------------------------------------------------------------------------------------
// Decisions at the allowance
// ---------------------------------------------------------------------------------------------

describe('decisions at the allowance are exact (the cookbook count decides, not the sample)', () => {
  setTokenizerBackend('gpt-tokenizer');
  const TOKENS = 118_617;
  const messages = userMessageOfTokens(TOKENS, 'o200k_base');
  const WINDOW = getModelInfo('openai', 'gpt-4o')!.contextWindow;
  const fitting = 128_000 - TOKENS; // max_tokens with which the body fills gpt-4o's window exactly

  it(`the test body counts ${TOKENS} tokens on gpt-4o by the cookbook (gpt-tokenizer and js-tiktoken), and the sample cannot tell`, () => {
    setTokenizerBackend('gpt-tokenizer');
    assert.equal(cookbookCount(COOKBOOK_MESSAGES, 'o200k_base'), 124, 'the cookbook helper reproduces the API count');
    assert.equal(cookbookCount(COOKBOOK_MESSAGES, 'cl100k_base'), 129);
    assert.equal(cookbookCount(messages, 'o200k_base'), TOKENS);
    assert.equal(cookbookCount(messages, 'o200k_base', jsTiktokenCount), TOKENS);
    assert.equal(WINDOW, 128_000);
    const sampled = analyzeChat(body(messages), 'openai', 'gpt-4o');
    assert.equal(sampled.sampled, true);
    assert.ok(sampled.low <= TOKENS && TOKENS < sampled.high, `range ${sampled.low}…${sampled.high}`);
    assert.ok(sampled.tokens > TOKENS, 'the sampled estimate with its margin alone would call the body over');
  });

  it('fallback keeps gpt-4o when the body fits exactly, switches with one output token more', () => {
    setTokenizerBackend('gpt-tokenizer');
    const model = 'openai/gpt-4o,openai/gpt-4.1';
    const fits = applyTokenLimit('fallback', body(messages, model, { max_tokens: fitting }), resolver);
    assert.equal(fits.model, 'gpt-4o');
    assert.equal(fits.body.model, 'openai/gpt-4o');
    assert.equal(fits.skipped, 'within-limit');
    assert.equal(fits.allowedInput, TOKENS);
    assert.equal(fits.tokensBefore, TOKENS);

    const over = applyTokenLimit('fallback', body(messages, model, { max_tokens: fitting + 1 }), resolver);
    assert.equal(over.model, 'gpt-4.1');
    assert.equal(over.body.model, 'openai/gpt-4.1');
    assert.equal(over.skipped, undefined);
    assert.equal(over.tokensBefore, TOKENS);
  });

  for (const handler of ['truncate', 'middle-out'] as const) {
    it(`${handler} leaves a body of exactly the allowance alone and cuts one over it just under`, () => {
      setTokenizerBackend('gpt-tokenizer');
      const b = body(messages, 'openai/gpt-4o', { max_completion_tokens: fitting });
      const kept = applyTokenLimit(handler, b, resolver);
      assert.equal(kept.changed, false);
      assert.equal(kept.body, b);
      assert.equal(kept.skipped, 'within-limit');
      assert.equal(kept.tokensBefore, TOKENS);

      const cut = applyTokenLimit(handler, { ...b, max_completion_tokens: fitting + 1 }, resolver);
      assert.equal(cut.changed, true);
      assert.equal(cut.tokensBefore, TOKENS);
      assert.ok(cut.tokensAfter! <= TOKENS - 1, String(cut.tokensAfter));
      assert.equal(cookbookCount(cut.body.messages, 'o200k_base'), cut.tokensAfter, 'tokensAfter is the cookbook count of the body sent');
      assert.ok(cut.tokensAfter! >= TOKENS - 1 - 0.01 * TOKENS, `cut no deeper than needed: ${cut.tokensAfter}`);
    });
  }

  it('cl100k (gpt-4) and CJK text: exact at the allowance, the sample decides away from it', () => {
    setTokenizerBackend('gpt-tokenizer');
    const cases: Array<[string, ChatMessage[], string]> = [
      ['cl100k prose', userMessageOfTokens(31_000, 'cl100k_base', 9), 'gpt-4'],
      ['o200k CJK', [{ role: 'system', content: 'Translate.' }, { role: 'user', content: cjkText(40_000, 4) }], 'gpt-4o'],
      ['cl100k CJK', [{ role: 'user', content: cjkText(30_000, 6) }], 'gpt-4'],
    ];
    for (const [name, msgs, model] of cases) {
      const spec = estimateSpec('openai', model);
      const exact = cookbookCount(msgs, spec.encoding);
      const sampled = analyzeWithSpec(body(msgs), spec);
      assert.ok(sampled.sampled && sampled.low <= exact && exact < sampled.high, `${name}: ${sampled.low}…${exact}…${sampled.high}`);
      for (const allowance of [exact, exact - 1]) {
        const a = analyzeWithSpec(body(msgs), spec, { allowance });
        assert.equal(a.tokens, exact, `${name} at ${allowance}`);
        assert.equal(a.exact, true, name);
      }
      // Outside the range the sample decides alone (no full count): bounded time away from the boundary.
      for (const allowance of [sampled.low - 1, sampled.high]) {
        const a = analyzeWithSpec(body(msgs), spec, { allowance });
        assert.equal(a.sampled, true, `${name} at ${allowance}`);
        assert.equal(a.tokens <= allowance, allowance >= sampled.high, `${name} at ${allowance}`);
      }
    }
  });

  it('full counts are charged to the request budget: new chunks only; past it the sample decides', () => {
    setTokenizerBackend('gpt-tokenizer');
    const msgs = userMessageOfTokens(30_000, 'o200k_base', 7);
    const spec = estimateSpec('openai', 'gpt-4o');
    const budget = newExactBudget(40_000);
    assert.equal(analyzeWithSpec(body(msgs), spec, { allowance: 30_000, budget }).tokens, 30_000);
    const left = budget.tokens;
    // ~30,000 charged; a little less: the " the the …" padding repeats chunks, charged once
    assert.ok(left >= 40_000 - 30_000 && left < 40_000 - 29_000, String(left));
    assert.equal(analyzeWithSpec(body(msgs), spec, { allowance: 30_000, budget }).exact, true);
    assert.equal(budget.tokens, left, 'the same chunks again are free');

    const small = newExactBudget(20_000);
    const a = analyzeWithSpec(body(msgs), spec, { allowance: 30_000, budget: small });
    assert.equal(a.sampled, true, 'over the budget: sampled');
    assert.ok(a.tokens > 30_000, 'decided by the sample with its margin');
    assert.equal(small.tokens, 20_000, 'refused up front by the sampled high end: nothing counted in vain');

    // Should the sample promise less than there is, the count stops where the budget runs out.
    const texts = [msgs[0]!.content as string];
    const tiny = newExactBudget(1000);
    assert.equal(countTextsInFull(texts, 'o200k_base', tiny, 500), null);
    assert.ok(tiny.tokens < 0 && tiny.tokens > -300, String(tiny.tokens));
    assert.equal(countTextsInFull(texts, 'o200k_base', tiny, 0), null, 'an exhausted budget stays exhausted');
  });

  it('other models (o200k × factor) are not counted in full: the count is an approximation either way', () => {
    const msgs = userMessageOfTokens(30_000, 'o200k_base', 7);
    const spec = estimateSpec('anthropic', 'claude-sonnet-4-5', { factor: () => 1.2 });
    const sampled = analyzeWithSpec(body(msgs), spec);
    const a = analyzeWithSpec(body(msgs), spec, { allowance: Math.ceil(30_000 * 1.2) });
    assert.ok(sampled.low <= 36_000 && 36_000 < sampled.high);
    assert.equal(a.sampled, true);
  });
});
