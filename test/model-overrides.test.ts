/**
 * The operator's `models:` in gateway.yaml: validation at start with errors naming the key path
 * (shared/config.ts), and the overrides applied to every lookup (shared/models.ts
 * applyModelOverrides): prices change the cost, limits change what the proxy's token-limit
 * handlers read, an added model is listed and priced, and `{}` restores the shipped table.
 * Run: node --import tsx --test test/model-overrides.test.ts
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { buildConfig, ConfigError } from '../shared/config.ts';
import { acceptsReasoningEffort, applyModelOverrides, costOf, costUsd, getModelInfo, listModels, reasoningEffortFor } from '../shared/models.ts';

const configError = (models: unknown) => {
  try {
    buildConfig({ models }, {}, 'gateway.yaml');
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  assert.fail('expected a ConfigError');
};

afterEach(() => applyModelOverrides({}));

describe('gateway.yaml models: validation', () => {
  it('accepts overrides and converts them (USD per 1M tokens, tokens)', () => {
    const c = buildConfig({
      models: {
        'anthropic/claude-opus-5-5': { input: 5, 'cache-read': 0.5, 'cache-write-5m': 6.25, 'cache-write-1h': 10, 'max-output-tokens': 64000 },
        'ollama/my-finetune': { input: 0, output: 0, 'context-window': 32768, 'max-output-tokens': 8192 },
      },
    });
    assert.deepEqual({ ...c.models['anthropic/claude-opus-5-5'] }, { inputPerMTok: 5, cachedInputPerMTok: 0.5, cacheWritePerMTok: 6.25, cacheWrite1hPerMTok: 10, maxOutputTokens: 64000 });
    assert.deepEqual({ ...c.models['ollama/my-finetune'] }, { inputPerMTok: 0, outputPerMTok: 0, contextWindow: 32768, maxOutputTokens: 8192 });
    assert.deepEqual({ ...buildConfig({}).models }, {});
  });

  it('names the key path of each mistake', () => {
    assert.equal(configError({ 'openai/gpt-4o': { input: -1 } }), 'gateway.yaml: models.openai/gpt-4o.input: Expected a number greater than or equal to 0 but received `-1`');
    assert.equal(configError({ 'openai/gpt-4o': { inptu: 1 } }), 'gateway.yaml: models.openai/gpt-4o.inptu: unknown key');
    assert.equal(configError({ 'openai/gpt-4o': { input: '2.5' } }), 'gateway.yaml: models.openai/gpt-4o.input: Expected a number, but received: "2.5"');
    assert.equal(configError({ 'openai/gpt-4o': { 'context-window': 0 } }), 'gateway.yaml: models.openai/gpt-4o.context-window: Expected an integer greater than or equal to 1 but received `0`');
    assert.match(configError({ 'nope/x': { input: 1, output: 1 } }), /^gateway\.yaml: models\.nope\/x: expected "<provider>\/<model>" with a known provider/);
    assert.match(configError({ gpt4: { input: 1 } }), /^gateway\.yaml: models\.gpt4: expected "<provider>\/<model>"/);
    assert.equal(
      configError({ 'openai/brand-new': { input: 1, output: 2 } }),
      'gateway.yaml: models.openai/brand-new.context-window: required for a model the model table does not know',
    );
    assert.equal(
      configError({ 'openai/brand-new': { 'context-window': 1000 } }),
      'gateway.yaml: models.openai/brand-new.max-output-tokens: required for a model the model table does not know',
    );
    assert.equal(
      configError({ 'openai/gpt-6.2-astra': { input: 8 } }),
      'gateway.yaml: models.openai/gpt-6.2-astra.output: input and output are both needed to price a model that has no price',
    );
    assert.equal(
      configError({ 'openai/gpt-6.2-astra': { 'cache-read': 1 } }),
      'gateway.yaml: models.openai/gpt-6.2-astra.input: required with cache prices: a model needs input and output prices first',
    );
    assert.equal(configError({ 'openai/gpt-4o': { 'max-output-tokens': 200000 } }), 'gateway.yaml: models.openai/gpt-4o.max-output-tokens: 200000 exceeds context_window 128000');
    assert.equal(
      configError({ 'openai/gpt-4o': { 'default-output-tokens': 20000 } }),
      'gateway.yaml: models.openai/gpt-4o.default-output-tokens: 20000 exceeds max_output_tokens 16384',
    );
    assert.equal(
      configError({ 'anthropic/claude-sonnet-4-5': { input: 3 }, 'anthropic/claude-sonnet-4-5-20250929': { output: 15 } }),
      'gateway.yaml: models.anthropic/claude-sonnet-4-5-20250929: names anthropic/claude-sonnet-4-5, which another override already names',
    );
    assert.match(configError('x'), /^gateway\.yaml: models: Expected an object/);
  });

  it('reasoning and reasoning-efforts: converted, and each mistake named by its key path', () => {
    const c = buildConfig({ models: { 'openai/gpt-4o': { reasoning: true, 'reasoning-efforts': ['high', 'low'] }, 'openai/o3': { reasoning: false } } });
    assert.deepEqual({ ...c.models['openai/gpt-4o'] }, { reasoning: true, reasoningEfforts: ['high', 'low'] });
    assert.deepEqual({ ...c.models['openai/o3'] }, { reasoning: false });
    assert.equal(configError({ 'openai/gpt-4o': { reasoning: 'yes' } }), 'gateway.yaml: models.openai/gpt-4o.reasoning: Expected a value of type `boolean`, but received: `"yes"`');
    assert.equal(
      configError({ 'openai/gpt-4o': { reasoning: true, 'reasoning-efforts': ['extreme'] } }),
      'gateway.yaml: models.openai/gpt-4o.reasoning-efforts.0: Expected one of `"none","minimal","low","medium","high","xhigh"`, but received: "extreme"',
    );
    assert.match(configError({ 'openai/gpt-4o': { reasoning: true, 'reasoning-efforts': [] } }), /^gateway\.yaml: models\.openai\/gpt-4o\.reasoning-efforts: Expected an array with a length between/);
    assert.equal(
      configError({ 'openai/gpt-4o': { 'reasoning-efforts': ['low'] } }),
      'gateway.yaml: models.openai/gpt-4o.reasoning-efforts: only a model with reasoning true accepts reasoning efforts',
    );
    assert.equal(
      configError({ 'ollama/my-model': { 'context-window': 32768, 'max-output-tokens': 8192, 'reasoning-efforts': ['high'] } }),
      'gateway.yaml: models.ollama/my-model.reasoning-efforts: only a model with reasoning true accepts reasoning efforts',
    );
  });
});

describe('applyModelOverrides', () => {
  // message.json's usage: 3 input, 1111 cache reads, 418 5-minute writes, 33 output.
  const usage = { promptTokens: 1532, completionTokens: 33, cachedReadTokens: 1111, cacheWriteTokens: 418 };

  it('an override changes the cost; the absent members keep the table figures; {} restores the table', () => {
    assert.equal(costUsd('anthropic', 'claude-opus-5-5', usage), 0.0029842);
    applyModelOverrides(buildConfig({ models: { 'anthropic/claude-opus-5-5': { input: 5 } } }).models);
    // 3·5 + 1111·0.2 + 418·5 + 33·20 = 15 + 222.2 + 2090 + 660 = 2987.2 → $0.0029872
    assert.equal(costUsd('anthropic', 'claude-opus-5-5', usage), 0.0029872);
    const info = getModelInfo('anthropic', 'claude-opus-5-5')!;
    assert.equal(info.cachedInputPerMTok, 0.2);
    assert.equal(info.contextWindow, 1_000_000);
    assert.equal(info.priceSource, 'gateway.yaml models."anthropic/claude-opus-5-5"');
    applyModelOverrides({});
    assert.equal(costUsd('anthropic', 'claude-opus-5-5', usage), 0.0029842);
  });

  it('prices a model the table has without a price, which then carries no note', () => {
    assert.equal(costOf('openai', 'gpt-6.2-astra', { promptTokens: 1000, completionTokens: 100 }).missing, 'no-price');
    applyModelOverrides({ 'openai/gpt-6.2-astra': { inputPerMTok: 8, outputPerMTok: 40 } });
    // 1000·8 + 100·40 = 12000 → $0.012
    assert.deepEqual(costOf('openai', 'gpt-6.2-astra', { promptTokens: 1000, completionTokens: 100 }), { usd: 0.012, missing: null });
  });

  it('an override named by a dated id or alias applies to the model under all its ids', () => {
    applyModelOverrides({ 'openai/gpt-4o-2024-08-06': { contextWindow: 64000 } });
    for (const id of ['gpt-4o', 'gpt-4o-2024-11-20', 'gpt-4o-2099-01-01']) assert.equal(getModelInfo('openai', id)!.contextWindow, 64000, id);
    assert.equal(getModelInfo('openai', 'gpt-4o')!.maxOutputTokens, 16384);
    assert.equal(getModelInfo('openai', 'gpt-4o')!.defaultOutputTokens, 16384);
  });

  it("changes the limits the proxy's token-limit handlers read (they look models up with getModelInfo)", () => {
    applyModelOverrides(buildConfig({ models: { 'openai/gpt-4o-mini': { 'context-window': 20000, 'max-output-tokens': 4000 } } }).models);
    const info = getModelInfo('openai', 'gpt-4o-mini-2024-07-18')!;
    // A changed limit re-derives the default reservation: the max, as it is at most half the window.
    assert.deepEqual([info.contextWindow, info.maxOutputTokens, info.defaultOutputTokens], [20000, 4000, 4000]);
    assert.equal(info.contextSource, 'gateway.yaml models."openai/gpt-4o-mini"');
  });

  it('adds a model: listed, priced, resolved with a dated suffix; an azure model gets an entry of its own', () => {
    applyModelOverrides(
      buildConfig({
        models: {
          'anthropic/claude-next-7': { input: 2, output: 10, 'context-window': 500000, 'max-output-tokens': 64000 },
          'azure/gpt-4.1-mini': { input: 0.5 },
        },
      }).models,
    );
    const added = getModelInfo('anthropic', 'claude-next-7-20270101')!;
    assert.equal(added.model, 'claude-next-7');
    assert.equal(added.defaultOutputTokens, 64000);
    // Anthropic's multipliers price its cache: 0.1x, 1.25x, 2x of $2.
    assert.deepEqual([added.cachedInputPerMTok, added.cacheWritePerMTok, added.cacheWrite1hPerMTok], [0.2, 2.5, 4]);
    assert.ok(listModels().some((m) => m.provider === 'anthropic' && m.model === 'claude-next-7'));
    assert.equal(getModelInfo('azure', 'gpt-4.1-mini')!.inputPerMTok, 0.5);
    assert.equal(getModelInfo('openai', 'gpt-4.1-mini')!.inputPerMTok, 0.4, 'openai keeps its price');
  });

  it('reasoning: an added model defaults to false; an override turns it on or off; false clears the efforts list; {} restores', () => {
    applyModelOverrides(
      buildConfig({
        models: {
          'ollama/my-finetune': { 'context-window': 32768, 'max-output-tokens': 8192 },
          'ollama/my-reasoner': { 'context-window': 32768, 'max-output-tokens': 8192, reasoning: true },
          'openai/gpt-4o-mini': { reasoning: true, 'reasoning-efforts': ['high', 'low'] },
          'gemini/gemini-3-pro-preview': { reasoning: false },
          'xai/grok-3-mini': { input: 0.5, output: 1 },
        },
      }).models,
    );
    assert.equal(acceptsReasoningEffort('ollama', 'my-finetune'), false);
    assert.equal(acceptsReasoningEffort('ollama', 'my-reasoner'), true);
    assert.equal(reasoningEffortFor('ollama', 'my-reasoner', 'medium'), 'medium');
    assert.equal(acceptsReasoningEffort('openai', 'gpt-4o-mini-2024-07-18'), true);
    assert.deepEqual(getModelInfo('openai', 'gpt-4o-mini')!.reasoningEfforts, ['low', 'high']);
    assert.equal(reasoningEffortFor('openai', 'gpt-4o-mini', 'medium'), 'high');
    assert.equal(acceptsReasoningEffort('gemini', 'gemini-3-pro-preview'), false);
    assert.equal(getModelInfo('gemini', 'gemini-3-pro-preview')!.reasoningEfforts, null);
    // An override of prices only keeps the table's reasoning and its efforts.
    assert.equal(acceptsReasoningEffort('xai', 'grok-3-mini'), true);
    assert.deepEqual(getModelInfo('xai', 'grok-3-mini')!.reasoningEfforts, ['low', 'high']);
    applyModelOverrides({});
    assert.equal(acceptsReasoningEffort('ollama', 'my-reasoner'), null);
    assert.equal(acceptsReasoningEffort('openai', 'gpt-4o-mini'), false);
    assert.equal(acceptsReasoningEffort('gemini', 'gemini-3-pro-preview'), true);
  });
});
