/**
 * Tests of the model table (shared/data/models.json) and its lookup and cost functions (shared/models.ts).
 * Run: node --import tsx --test test/models.test.ts
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import raw from '../shared/data/models.json' with { type: 'json' };
import { PROVIDER_NAMES } from '../shared/providers.ts';
import { costUsd, getModelInfo, listModels, parseModelTable, tokenEstimateFactor } from '../shared/models.ts';

/** Provider response fixtures shared by the gateway's engineers (outside this repo). */
const FIXTURES = process.env.PROVIDER_FIXTURES_DIR ?? fileURLToPath(new URL('../../shared/fixtures/providers/', import.meta.url));

describe('models.json', () => {
  const entries = raw.models as Array<Record<string, unknown> & { provider: string; model: string; aliases?: string[] }>;

  it('every entry has a positive window >= max output >= default output, and sane prices', () => {
    for (const e of entries) {
      const id = `${e.provider}/${e.model}`;
      const win = e.context_window as number;
      const maxOut = e.max_output_tokens as number;
      const def = e.default_output_tokens as number;
      assert.ok(Number.isInteger(win) && win > 0, `${id}: context_window`);
      assert.ok(win >= maxOut, `${id}: window ${win} < max output ${maxOut}`);
      assert.ok(def <= maxOut, `${id}: default output ${def} > max output ${maxOut}`);
      if (e.kind === 'chat') {
        assert.ok(def > 0 && def <= win / 2, `${id}: default output ${def} must be in (0, window/2]`);
      } else {
        assert.equal(e.output_per_mtok, 0, `${id}: embeddings have no output price`);
        assert.equal(maxOut, 0, `${id}: embeddings have no output`);
      }
      for (const k of ['input_per_mtok', 'output_per_mtok']) assert.ok((e[k] as number) >= 0, `${id}: ${k}`);
      const cached = e.cached_input_per_mtok as number | null;
      if (cached !== null) assert.ok(cached <= (e.input_per_mtok as number), `${id}: cached input dearer than input`);
      assert.match(e.as_of as string, /^20\d\d-\d\d-\d\d$/, `${id}: as_of`);
    }
  });

  it('sources are https URLs', () => {
    for (const e of entries) {
      for (const k of ['price_source', 'context_source']) {
        const url = new URL(e[k] as string);
        assert.equal(url.protocol, 'https:', `${e.provider}/${e.model}: ${k}`);
      }
    }
  });

  it('has no duplicate ids or aliases within a provider, and only known providers', () => {
    const seen = new Set<string>();
    for (const e of entries) {
      assert.ok((PROVIDER_NAMES as readonly string[]).includes(e.provider), `unknown provider ${e.provider}`);
      for (const id of [e.model, ...(e.aliases ?? [])]) {
        const key = `${e.provider}/${id}`;
        assert.ok(!seen.has(key), `duplicate id ${key}`);
        seen.add(key);
      }
    }
  });

  it('covers the models named in the brief', () => {
    const want: Record<string, string[]> = {
      openai: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o1', 'o3', 'o3-mini', 'o4-mini', 'gpt-5',
        'gpt-5-mini', 'gpt-5-nano', 'gpt-4-turbo', 'gpt-4', 'gpt-3.5-turbo', 'text-embedding-3-small', 'text-embedding-3-large',
        'text-embedding-ada-002'],
      anthropic: ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4', 'claude-3-7-sonnet', 'claude-3-5-haiku'],
      gemini: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash'],
      groq: ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant', 'openai/gpt-oss-120b', 'openai/gpt-oss-20b'],
      mistral: ['mistral-large-latest', 'mistral-small-latest', 'pixtral-12b-latest', 'codestral-latest'],
      deepseek: ['deepseek-chat', 'deepseek-reasoner'],
      xai: ['grok-4', 'grok-3', 'grok-3-mini'],
      bedrock: ['us.amazon.nova-micro-v1:0', 'us.amazon.nova-lite-v1:0', 'us.amazon.nova-pro-v1:0',
        'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'amazon.titan-embed-text-v2:0'],
      azure: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1'],
    };
    const listed = new Set(listModels().map((m) => `${m.provider}/${m.model}`));
    for (const [provider, ids] of Object.entries(want)) {
      for (const id of ids) assert.ok(listed.has(`${provider}/${id}`), `missing ${provider}/${id}`);
    }
    for (const p of ['together', 'fireworks', 'openrouter']) {
      assert.ok(listModels().filter((m) => m.provider === p).length >= 3, `few ${p} models`);
    }
  });

  it('azure gpt-4o/gpt-4o-mini/gpt-4.1 are priced like openai', () => {
    for (const id of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1']) {
      const a = getModelInfo('azure', id)!;
      const o = getModelInfo('openai', id)!;
      assert.deepEqual([a.inputPerMTok, a.cachedInputPerMTok, a.outputPerMTok], [o.inputPerMTok, o.cachedInputPerMTok, o.outputPerMTok]);
    }
  });

  it('has a token estimate factor for every provider, documented in notes', () => {
    for (const p of PROVIDER_NAMES) assert.ok(tokenEstimateFactor(p) > 0, p);
    assert.equal(tokenEstimateFactor('anthropic'), 1.2);
    assert.equal(tokenEstimateFactor('openai'), 1);
    assert.equal(tokenEstimateFactor('no-such-provider'), 1);
    assert.match(raw.notes, /approximation/);
  });
});

describe('parseModelTable', () => {
  const good = raw.models[0] as Record<string, unknown>;
  const table = (models: unknown[]) => ({ notes: '', token_estimate_factors: { openai: 1 }, models });

  it('throws naming the entry and member when an entry is malformed', () => {
    assert.throws(() => parseModelTable(table([good, { ...good, model: 'x', input_per_mtok: '2.5' }])), (err: Error) => {
      assert.match(err.message, /models\[1\] \(openai\/x\)/);
      assert.match(err.message, /input_per_mtok/);
      return true;
    });
    assert.throws(() => parseModelTable(table([{ ...good, price_source: 'http://example.com' }])), /price_source/);
    assert.throws(() => parseModelTable(table([{ ...good, provider: 'nope' }])), /models\[0\] \(nope\//);
    assert.throws(() => parseModelTable(table([{ ...good, extra: 1 }])), /extra/);
  });

  it('throws on inconsistent limits and duplicate ids', () => {
    assert.throws(() => parseModelTable(table([{ ...good, max_output_tokens: 10_000_000 }])), /exceeds context_window/);
    assert.throws(() => parseModelTable(table([{ ...good, default_output_tokens: (good.max_output_tokens as number) + 1 }])), /exceeds max_output_tokens/);
    assert.throws(() => parseModelTable(table([good, { ...good, aliases: [] }])), /already used/);
  });

  it('throws on a malformed top level', () => {
    assert.throws(() => parseModelTable({ models: [] }), /models\.json/);
    assert.throws(() => parseModelTable({ ...table([]), token_estimate_factors: { nope: 1 } }), /unknown provider/);
  });
});

describe('getModelInfo', () => {
  it('finds exact ids and aliases, returning the canonical entry', () => {
    assert.equal(getModelInfo('openai', 'gpt-4o')?.model, 'gpt-4o');
    assert.equal(getModelInfo('anthropic', 'claude-sonnet-4-5-20250929')?.model, 'claude-sonnet-4-5');
    assert.equal(getModelInfo('anthropic', 'claude-3-5-haiku-latest')?.model, 'claude-3-5-haiku');
    assert.equal(getModelInfo('openai', 'gpt-4-turbo-preview')?.model, 'gpt-4-turbo');
    assert.equal(getModelInfo('groq', 'openai/gpt-oss-120b')?.model, 'openai/gpt-oss-120b');
  });

  it('tolerates a dated suffix on a known id (longest prefix wins)', () => {
    assert.equal(getModelInfo('openai', 'gpt-4o-2024-11-20')?.model, 'gpt-4o');
    assert.equal(getModelInfo('openai', 'gpt-4o-mini-2099-01-01')?.model, 'gpt-4o-mini');
    assert.equal(getModelInfo('openai', 'gpt-4.1-nano-2025-04-14')?.model, 'gpt-4.1-nano');
    assert.equal(getModelInfo('openai', 'o3-mini-2025-01-31')?.model, 'o3-mini');
    assert.equal(getModelInfo('openai', 'gpt-3.5-turbo-1106')?.model, 'gpt-3.5-turbo');
    assert.equal(getModelInfo('anthropic', 'claude-opus-4-1-20991231')?.model, 'claude-opus-4-1');
    assert.equal(getModelInfo('anthropic', 'claude-sonnet-4-20250514')?.model, 'claude-sonnet-4');
    assert.equal(getModelInfo('gemini', 'gemini-2.5-pro-preview-05-06')?.model, 'gemini-2.5-pro');
    assert.equal(getModelInfo('gemini', 'gemini-2.5-flash-preview-09-2025')?.model, 'gemini-2.5-flash');
    assert.equal(getModelInfo('xai', 'grok-3-mini-latest')?.model, 'grok-3-mini');
  });

  it('does not price a differently named variant as its shorter prefix', () => {
    assert.equal(getModelInfo('openai', 'gpt-4o-audio-preview'), null);
    assert.equal(getModelInfo('openai', 'gpt-4o-realtime-preview-2024-12-17'), null);
    assert.equal(getModelInfo('openai', 'o1-pro')?.model, 'o1-pro');
    assert.equal(getModelInfo('openai', 'gpt-4o-'), null);
    assert.equal(getModelInfo('xai', 'grok-4-fast-reasoning')?.inputPerMTok, 0.2);
  });

  it('is case-sensitive and provider-scoped', () => {
    assert.equal(getModelInfo('openai', 'GPT-4o'), null);
    assert.equal(getModelInfo('groq', 'gpt-4o'), null);
    assert.equal(getModelInfo('nope', 'gpt-4o'), null);
    assert.equal(getModelInfo('openai', ''), null);
  });

  it('falls back from azure to the openai entry of the same model', () => {
    const info = getModelInfo('azure', 'gpt-5-mini-2025-08-07');
    assert.ok(info);
    assert.equal(info.provider, 'azure');
    assert.equal(info.model, 'gpt-5-mini');
    assert.equal(info.inputPerMTok, getModelInfo('openai', 'gpt-5-mini')!.inputPerMTok);
    assert.equal(getModelInfo('azure', 'gpt-4o')?.provider, 'azure');
    assert.equal(getModelInfo('azure', 'not-a-model'), null);
  });

  const fixtureModels: Array<[string, string]> = [
    ['openai', 'gpt-4o-2024-08-06'],
    ['openai', 'o3-mini-2025-01-31'],
    ['openai', 'gpt-4o-mini-2024-07-18'],
    ['anthropic', 'claude-sonnet-4-5-20250929'],
    ['anthropic', 'claude-haiku-4-5-20251001'],
    ['groq', 'llama-3.3-70b-versatile'],
    ['groq', 'openai/gpt-oss-120b'],
    ['mistral', 'mistral-large-latest'],
    ['mistral', 'pixtral-12b-latest'],
    ['deepseek', 'deepseek-reasoner'],
    ['gemini', 'gemini-2.0-flash'],
    ['gemini', 'gemini-2.5-pro-preview-05-06'],
    // Bedrock Converse bodies carry no model; the id is in the request path (fixtures README).
    ['bedrock', 'us.amazon.nova-micro-v1:0'],
    ['bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'],
  ];

  it('resolves the model of every provider fixture listed in the brief', () => {
    for (const [provider, model] of fixtureModels) {
      const info = getModelInfo(provider, model);
      assert.ok(info, `${provider}/${model} does not resolve`);
      assert.equal(info.kind, 'chat');
    }
  });

  it('resolves the model string of every chat fixture file on disk', (t) => {
    if (!existsSync(FIXTURES)) {
      t.skip(`no fixtures at ${FIXTURES}`);
      return;
    }
    const found: string[] = [];
    for (const provider of readdirSync(FIXTURES)) {
      const dir = join(FIXTURES, provider);
      if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) continue;
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
        const body = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { object?: string; type?: string; model?: string };
        const isChat = body.object === 'chat.completion' || body.type === 'message';
        const isEmbeddings = body.object === 'list' && typeof body.model === 'string';
        if (!isChat && !isEmbeddings) continue;
        assert.equal(typeof body.model, 'string', `${provider}/${file}: model`);
        const info = getModelInfo(provider, body.model!);
        assert.ok(info, `${provider}/${file}: ${body.model} does not resolve`);
        assert.equal(info.kind, isChat ? 'chat' : 'embeddings', `${provider}/${file}`);
        found.push(`${provider}/${body.model}`);
      }
    }
    for (const [provider, model] of fixtureModels.filter(([p]) => p !== 'bedrock')) {
      assert.ok(found.includes(`${provider}/${model}`), `fixture for ${provider}/${model} not found on disk`);
    }
  });
});

describe('listModels', () => {
  it('returns every canonical entry once, as a fresh array', () => {
    const list = listModels();
    assert.equal(list.length, raw.models.length);
    list.pop();
    assert.equal(listModels().length, raw.models.length);
    assert.ok(Object.isFrozen(listModels()[0]));
  });
});

describe('costUsd', () => {
  it('returns null, not 0, for an unknown model or provider', () => {
    assert.equal(costUsd('openai', 'no-such-model', { promptTokens: 10, completionTokens: 10 }), null);
    assert.equal(costUsd('nope', 'gpt-4o', { promptTokens: 10, completionTokens: 10 }), null);
  });

  it('prices gpt-4o-mini with cached prompt tokens (OpenAI convention)', () => {
    // $0.15 input, $0.075 cached input, $0.60 output per 1M.
    // (2000 - 1024)·0.15 + 1024·0.075 + 300·0.60 = 146.4 + 76.8 + 180 = 403.2 (millionths of a USD) → $0.0004032
    const cost = costUsd('openai', 'gpt-4o-mini-2024-07-18', { promptTokens: 2000, completionTokens: 300, cachedReadTokens: 1024 });
    assert.equal(cost, 0.0004032);
  });

  it('prices claude-sonnet-4-5 with cache write and read tokens (fixtures/anthropic/message.json usage)', () => {
    // usage: input_tokens 3, cache_creation_input_tokens 418, cache_read_input_tokens 1111, output_tokens 33.
    // Anthropic's input_tokens excludes cached tokens, so promptTokens = 3 + 418 + 1111 = 1532.
    // $3 input, $0.30 cache read, $3.75 cache write (5m), $15 output per 1M:
    // 3·3 + 1111·0.30 + 418·3.75 + 33·15 = 9 + 333.3 + 1567.5 + 495 = 2404.8 → $0.0024048
    const cost = costUsd('anthropic', 'claude-sonnet-4-5-20250929', {
      promptTokens: 1532,
      completionTokens: 33,
      cachedReadTokens: 1111,
      cacheWriteTokens: 418,
    });
    assert.equal(cost, 0.0024048);
  });

  it('prices Bedrock us.* Claude 4.5 at the regional rate (fixtures/bedrock/converse-cache-tokens.json usage)', () => {
    // inputTokens 13 (excludes cache), cacheReadInputTokens 1504, outputTokens 5; $3.30 / $0.33 / $16.50 per 1M.
    // 13·3.3 + 1504·0.33 + 5·16.5 = 42.9 + 496.32 + 82.5 = 621.72 → $0.00062172
    const cost = costUsd('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', {
      promptTokens: 1517,
      completionTokens: 5,
      cachedReadTokens: 1504,
    });
    assert.equal(cost, 0.00062172);
  });

  it('bills cached tokens at the input price when the model has no cache price', () => {
    // mistral-large-latest: $0.50 in, $1.50 out, no cache price. 268·0.5 + 5·1.5 = 141.5 → $0.0001415
    assert.equal(costUsd('mistral', 'mistral-large-latest', { promptTokens: 268, completionTokens: 5, cachedReadTokens: 224 }), 0.0001415);
  });

  it('prices embeddings by input only, and rounds away float noise', () => {
    assert.equal(costUsd('openai', 'text-embedding-3-small', { promptTokens: 4, completionTokens: 0 }), 8e-8);
    // 0.1 + 0.2 style noise: 3 tokens at $0.1/M → 3e-7 exactly after rounding.
    assert.equal(costUsd('openai', 'gpt-4.1-nano', { promptTokens: 3, completionTokens: 0 }), 3e-7);
    assert.equal(costUsd('openai', 'gpt-4o', { promptTokens: 0, completionTokens: 0 }), 0);
  });

  it('rejects negative or non-finite counts and cached counts above the prompt', () => {
    assert.throws(() => costUsd('openai', 'gpt-4o', { promptTokens: -1, completionTokens: 0 }), RangeError);
    assert.throws(() => costUsd('openai', 'gpt-4o', { promptTokens: Number.NaN, completionTokens: 0 }), RangeError);
    assert.throws(
      () => costUsd('anthropic', 'claude-sonnet-4-5', { promptTokens: 3, completionTokens: 33, cachedReadTokens: 1111 }),
      /must include cached tokens/,
    );
  });
});
