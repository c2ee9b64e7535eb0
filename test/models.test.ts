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
import {
  ANTHROPIC_CACHE_MULTIPLIERS,
  acceptsReasoningEffort,
  costOf,
  costUsd,
  getModelInfo,
  listModels,
  parseModelTable,
  reasoningEffortFor,
  tokenEstimateFactor,
} from '../shared/models.ts';

/** The recorded provider responses kept in this repository (test/fixtures/providers/README.md). */
const FIXTURES = fileURLToPath(new URL('./fixtures/providers/', import.meta.url));

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
      if (e.input_per_mtok === null) {
        // A model without a sourced price: both prices and every cache price are null.
        for (const k of ['output_per_mtok', 'cached_input_per_mtok', 'cache_write_per_mtok', 'cache_write_1h_per_mtok']) assert.equal(e[k] ?? null, null, `${id}: ${k}`);
        continue;
      }
      for (const k of ['input_per_mtok', 'output_per_mtok']) assert.ok((e[k] as number) >= 0, `${id}: ${k}`);
      const cached = e.cached_input_per_mtok as number | null;
      if (cached !== null) assert.ok(cached <= (e.input_per_mtok as number), `${id}: cached input dearer than input`);
      const w5 = e.cache_write_per_mtok as number | null;
      const w1 = (e.cache_write_1h_per_mtok ?? null) as number | null;
      if (w5 !== null && w1 !== null) assert.ok(w1 >= w5, `${id}: a 1-hour write cheaper than a 5-minute one`);
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
      openai: ['gpt-6.2-sol', 'gpt-6.2-astra', 'gpt-6-astra', 'gpt-6-luna', 'gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna', 'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o1', 'o3', 'o3-mini', 'o4-mini', 'gpt-5',
        'gpt-5-mini', 'gpt-5-nano', 'gpt-4-turbo', 'gpt-4', 'gpt-3.5-turbo', 'text-embedding-3-small', 'text-embedding-3-large',
        'text-embedding-ada-002'],
      anthropic: ['claude-opus-5-5', 'claude-opus-5', 'claude-sonnet-5-5', 'claude-sonnet-5', 'claude-haiku-5-5', 'claude-opus-4-8', 'claude-opus-4-6',
        'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4', 'claude-3-7-sonnet', 'claude-3-5-haiku', 'claude-3-5-sonnet', 'claude-3-opus'],
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

  it('throws when reasoning is missing or not a boolean, or reasoning_efforts are malformed or given without reasoning', () => {
    const { reasoning: _, ...withoutReasoning } = good;
    assert.throws(() => parseModelTable(table([withoutReasoning])), /models\[0\] \(openai\/[^)]+\): reasoning: /);
    assert.throws(() => parseModelTable(table([{ ...good, reasoning: 'yes' }])), /reasoning: /);
    assert.throws(() => parseModelTable(table([{ ...good, reasoning: true, reasoning_efforts: ['extreme'] }])), /reasoning_efforts\.0/);
    assert.throws(() => parseModelTable(table([{ ...good, reasoning: true, reasoning_efforts: [] }])), /reasoning_efforts/);
    assert.throws(() => parseModelTable(table([{ ...good, reasoning: false, reasoning_efforts: ['low'] }])), /reasoning_efforts: only a model with reasoning true/);
    // Listed in any order, kept in the order of the effort scale.
    const parsed = parseModelTable(table([{ ...good, reasoning: true, reasoning_efforts: ['high', 'low', 'high'] }]));
    assert.deepEqual(parsed.models[0]!.reasoningEfforts, ['low', 'high']);
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

  it('resolves the model string of every chat fixture file on disk', () => {
    assert.ok(existsSync(FIXTURES), `no fixtures at ${FIXTURES}`);
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

describe('models named by recorded clients and streams', () => {
  /** Every `"model"` string in a fixture file's text (streams and request bodies included). */
  const modelsIn = (file: string) => [...readFileSync(file, 'utf8').matchAll(/"model": ?"([^"]+)"/g)].map((m) => m[1]!);

  it('resolves every model of the Anthropic fixtures (.json and .sse) and of the captured clients', () => {
    const anthropic = join(FIXTURES, 'anthropic');
    const found = new Set<string>();
    for (const file of readdirSync(anthropic).filter((f) => f.endsWith('.json') || f.endsWith('.sse'))) {
      for (const model of modelsIn(join(anthropic, file))) {
        found.add(model);
        assert.ok(getModelInfo('anthropic', model), `anthropic/${file}: ${model} does not resolve`);
      }
    }
    const clients = fileURLToPath(new URL('./fixtures/clients/', import.meta.url));
    const claudeCode = modelsIn(join(clients, 'claude-code-2.1.328.request.json'));
    assert.deepEqual(claudeCode, ['claude-opus-5-5'], "Claude Code's default model");
    for (const m of claudeCode) assert.ok(getModelInfo('anthropic', m)?.inputPerMTok, `${m} has a price`);
    for (const m of modelsIn(join(clients, 'codex-0.169.0.request.json'))) assert.ok(getModelInfo('openai', m), `codex: ${m}`);
    for (const m of ['claude-opus-5', 'claude-opus-4-6', 'claude-3-opus-latest', 'claude-3-5-sonnet-20240620', 'claude-sonnet-4-5']) {
      assert.ok(found.has(m), `${m} is no longer in the fixtures: update this test`);
    }
  });

  it("Claude Code's default model: 1M context, 128K output, Anthropic's own prices", () => {
    const info = getModelInfo('anthropic', 'claude-opus-5-5')!;
    assert.deepEqual(
      [info.contextWindow, info.maxOutputTokens, info.inputPerMTok, info.cachedInputPerMTok, info.cacheWritePerMTok, info.cacheWrite1hPerMTok, info.outputPerMTok],
      [1_000_000, 128_000, 4, 0.2, 5, 8, 20],
    );
  });

  it('derives missing Anthropic cache prices with the documented multipliers, and only for anthropic', () => {
    assert.deepEqual(ANTHROPIC_CACHE_MULTIPLIERS, { read: 0.1, write5m: 1.25, write1h: 2 });
    const haiku = getModelInfo('anthropic', 'claude-haiku-5-5')!;
    assert.equal(haiku.cachedInputPerMTok, 0.01, 'read: 0.1 x $0.10');
    assert.equal(haiku.cacheWritePerMTok, 0.125, "the page's own figure");
    // An OpenAI model whose page shows no cache price bills cached tokens as input.
    assert.equal(getModelInfo('openai', 'gpt-6-astra')!.cachedInputPerMTok, null);
  });

  it('a model without a sourced price is known (limits) but unpriced', () => {
    const astra = getModelInfo('openai', 'gpt-6.2-astra')!;
    assert.equal(astra.contextWindow, 1_050_000);
    assert.equal(astra.inputPerMTok, null);
    assert.equal(astra.outputPerMTok, null);
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

  it("prices Anthropic's cache reads, 5-minute and 1-hour writes apart (claude-opus-5-5)", () => {
    // message.json's usage on Opus 5.5 ($4 in, $0.20 read, $5 5m write, $20 out):
    // 3·4 + 1111·0.2 + 418·5 + 33·20 = 12 + 222.2 + 2090 + 660 = 2984.2 → $0.0029842
    assert.equal(costUsd('anthropic', 'claude-opus-5-5', { promptTokens: 1532, completionTokens: 33, cachedReadTokens: 1111, cacheWriteTokens: 418 }), 0.0029842);
    // 3000 writes of which 2000 with the 1-hour TTL ($8): 10·4 + 1000·0.2 + 1000·5 + 2000·8 + 500·20
    // = 40 + 200 + 5000 + 16000 + 10000 = 31240 → $0.03124
    const usage = { promptTokens: 4010, completionTokens: 500, cachedReadTokens: 1000, cacheWriteTokens: 3000, cacheWrite1hTokens: 2000 };
    assert.equal(costUsd('anthropic', 'claude-opus-5-5', usage), 0.03124);
    // Claude Sonnet 4.5: reads 0.1x ($0.30), 5m writes 1.25x ($3.75), 1h writes 2x ($6) of $3:
    // 10·3 + 1000·0.3 + 1000·3.75 + 2000·6 + 500·15 = 30 + 300 + 3750 + 12000 + 7500 = 23580 → $0.02358
    assert.equal(costUsd('anthropic', 'claude-sonnet-4-5', usage), 0.02358);
  });

  it('prices 1-hour writes at the 5-minute price when the model has no 1-hour price (Bedrock)', () => {
    // us.* Sonnet 4.5 on Bedrock: $3.30 in, $4.125 write, $16.50 out; 100 writes, 40 of them 1-hour:
    // 100·4.125 + 10·16.5 = 412.5 + 165 = 577.5 → $0.0005775
    assert.equal(costUsd('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', { promptTokens: 100, completionTokens: 10, cacheWriteTokens: 100, cacheWrite1hTokens: 40 }), 0.0005775);
  });

  it('says why there is no cost: an unknown model, or a known model without a price', () => {
    const usage = { promptTokens: 10, completionTokens: 10 };
    assert.deepEqual(costOf('openai', 'gpt-6.2-astra', usage), { usd: null, missing: 'no-price' });
    assert.deepEqual(costOf('anthropic', 'claude-nonexistent-9', usage), { usd: null, missing: 'unknown-model' });
    assert.deepEqual(costOf('anthropic', 'claude-haiku-5-5', { promptTokens: 10_100, completionTokens: 50, cachedReadTokens: 10_000 }), { usd: 0.000135, missing: null });
  });

  it('rejects negative or non-finite counts and cached counts above the prompt', () => {
    assert.throws(() => costUsd('anthropic', 'claude-opus-5-5', { promptTokens: 10, completionTokens: 0, cacheWriteTokens: 5, cacheWrite1hTokens: 6 }), /cacheWrite1hTokens/);
    assert.throws(() => costUsd('openai', 'gpt-4o', { promptTokens: -1, completionTokens: 0 }), RangeError);
    assert.throws(() => costUsd('openai', 'gpt-4o', { promptTokens: Number.NaN, completionTokens: 0 }), RangeError);
    assert.throws(
      () => costUsd('anthropic', 'claude-sonnet-4-5', { promptTokens: 3, completionTokens: 33, cachedReadTokens: 1111 }),
      /must include cached tokens/,
    );
  });
});

describe('reasoning: which models take a reasoning effort', () => {
  it('every entry says so; embedding models do not; reasoning_efforts only on reasoning models; the notes document it', () => {
    for (const e of raw.models as Array<Record<string, unknown>>) {
      const id = `${String(e.provider)}/${String(e.model)}`;
      assert.equal(typeof e.reasoning, 'boolean', id);
      if (e.kind === 'embeddings') assert.equal(e.reasoning, false, id);
      if (e.reasoning_efforts !== undefined) assert.equal(e.reasoning, true, id);
    }
    assert.match(raw.notes, /reasoning is true for a model that takes a reasoning effort/);
    assert.match(raw.notes, /A model not in the table is treated as taking no reasoning effort/);
  });

  it("true for the reasoning models whose provider documents reasoning_effort, false for those that refuse or ignore it", () => {
    const yes: Array<[string, string]> = [
      ['openai', 'o1'], ['openai', 'o3-mini'], ['openai', 'o3-mini-2025-01-31'], ['openai', 'o4-mini'], ['openai', 'gpt-5'], ['openai', 'gpt-5-mini-2025-08-07'],
      ['openai', 'gpt-5.1'], ['openai', 'gpt-6.2-sol'], ['openai', 'gpt-5.6'], ['azure', 'o3'], ['gemini', 'gemini-2.5-pro'], ['gemini', 'gemini-2.5-flash-lite'],
      ['gemini', 'gemini-3-pro-preview'], ['groq', 'openai/gpt-oss-120b'], ['deepseek', 'deepseek-reasoner'], ['xai', 'grok-3-mini-latest'],
      ['anthropic', 'claude-opus-5-5'], ['anthropic', 'claude-3-7-sonnet-latest'],
    ];
    const no: Array<[string, string]> = [
      ['openai', 'gpt-4o'], ['openai', 'gpt-4o-mini'], ['openai', 'gpt-4o-2024-11-20'], ['openai', 'gpt-4.1'], ['openai', 'gpt-3.5-turbo'], ['openai', 'o1-mini'],
      ['openai', 'gpt-5-chat-latest'], ['openai', 'text-embedding-3-small'], ['azure', 'gpt-4o-mini'], ['groq', 'llama-3.3-70b-versatile'], ['groq', 'qwen/qwen3-32b'],
      ['deepseek', 'deepseek-chat'], ['gemini', 'gemini-2.0-flash'], ['mistral', 'mistral-large-latest'], ['mistral', 'magistral-medium-latest'],
      ['xai', 'grok-4'], ['xai', 'grok-4-fast-reasoning'], ['xai', 'grok-code-fast-1'], ['openrouter', 'openai/gpt-4o-mini'], ['ollama', 'llama3.2'],
      ['anthropic', 'claude-3-5-haiku'], ['bedrock', 'us.amazon.nova-pro-v1:0'],
    ];
    for (const [p, m] of yes) assert.equal(acceptsReasoningEffort(p, m), true, `${p}/${m}`);
    for (const [p, m] of no) assert.equal(acceptsReasoningEffort(p, m), false, `${p}/${m}`);
  });

  it('null for a model or provider the table does not know', () => {
    assert.equal(acceptsReasoningEffort('openai', 'o9-preview'), null);
    assert.equal(acceptsReasoningEffort('ollama', 'some-local-model'), null);
    assert.equal(acceptsReasoningEffort('no-such-provider', 'gpt-5'), null);
  });

  it('reasoningEffortFor: the effort asked for, or the nearest the model accepts (a tie to the greater); null when none is to be sent', () => {
    assert.equal(reasoningEffortFor('openai', 'gpt-5', 'medium'), 'medium');
    assert.equal(reasoningEffortFor('openai', 'o3', 'low'), 'low');
    assert.equal(reasoningEffortFor('gemini', 'gemini-3-pro-preview', 'medium'), 'high');
    assert.equal(reasoningEffortFor('gemini', 'gemini-3-pro-preview', 'low'), 'low');
    assert.equal(reasoningEffortFor('gemini', 'gemini-3-pro-preview', 'minimal'), 'low');
    assert.equal(reasoningEffortFor('gemini', 'gemini-3-pro-preview', 'none'), 'low');
    assert.equal(reasoningEffortFor('gemini', 'gemini-3-pro-preview', 'xhigh'), 'high');
    assert.equal(reasoningEffortFor('xai', 'grok-3-mini', 'medium'), 'high');
    assert.equal(reasoningEffortFor('openai', 'gpt-5-pro', 'low'), 'high');
    assert.equal(reasoningEffortFor('openai', 'gpt-4o-mini', 'medium'), null);
    assert.equal(reasoningEffortFor('xai', 'grok-4', 'high'), null);
    assert.equal(reasoningEffortFor('openai', 'o9-preview', 'high'), null);
    assert.deepEqual(getModelInfo('gemini', 'gemini-3-pro-preview')!.reasoningEfforts, ['low', 'high']);
    assert.equal(getModelInfo('openai', 'gpt-5')!.reasoningEfforts, null);
  });
});
