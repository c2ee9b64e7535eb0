/**
 * The model table: per `<provider>/<model>` prices (USD per 1M tokens), context windows and output
 * limits (tokens), and whether the model takes a reasoning effort, read from
 * `shared/data/models.json` once at module load, validated, and indexed.
 *
 * Used by the proxy (context-window checks, output reservation and clamping, which translated
 * requests carry a reasoning effort), by admin (cost columns of the request log) and by
 * `GET /v1/models`. The operator's `gateway.yaml` `models:`
 * overrides add or change entries once applied at start ({@link applyModelOverrides}); every
 * lookup then reads them. Sources of the figures: each entry's `price_source` / `context_source`,
 * and shared/data/README.md.
 *
 * Loading throws an `Error` naming the offending entry when the JSON is malformed, so a bad edit
 * of the data file fails at start-up rather than pricing requests wrongly.
 */
import { StructError, array, boolean, enums, integer, min, nullable, number, object, optional, pattern, record, size, string, validate } from 'superstruct';
import rawTable from './data/models.json' with { type: 'json' };
import { PROVIDER_NAMES, type ProviderName } from './providers.ts';

/**
 * What the gateway knows about one `<provider>/<model>`. Prices in USD per 1,000,000 tokens; limits
 * in tokens. A model in the table without a known price has `inputPerMTok` and `outputPerMTok`
 * null (and every cache price null): its requests are logged with cost null and a note saying so.
 */
export interface ModelInfo {
  /** Provider config name, e.g. `openai`. */
  provider: ProviderName;
  /** Canonical model id at that provider, e.g. `gpt-4o` (an alias or dated id resolves to this). */
  model: string;
  /** `chat` (chat completions, Messages, Responses) or `embeddings`. */
  kind: 'chat' | 'embeddings';
  /**
   * The model takes a reasoning effort setting: at an OpenAI-compatible provider, chat completions'
   * `reasoning_effort`; for `anthropic` and Bedrock's Claude models, extended thinking. False for a
   * model that would reject the member (OpenAI's gpt-4o answers 400 "Unsupported parameter:
   * 'reasoning_effort' is not supported with this model") or that has no effort to set.
   */
  reasoning: boolean;
  /**
   * The efforts the model accepts when it accepts only some (Gemini 3 Pro: `low`, `high`), in
   * {@link REASONING_EFFORTS} order; null when {@link reasoning} is false or every effort a
   * translator sends (`low`, `medium`, `high`) is accepted.
   */
  reasoningEfforts: readonly ReasoningEffort[] | null;
  /** USD per 1M uncached prompt tokens; null when the price is unknown. */
  inputPerMTok: number | null;
  /** USD per 1M prompt tokens read from the provider's prompt cache; null when there is no discount (billed as input). */
  cachedInputPerMTok: number | null;
  /**
   * USD per 1M prompt tokens written to the prompt cache with the provider's default retention
   * (Anthropic: the 5-minute TTL; OpenAI: its default retention); null when billed as input.
   */
  cacheWritePerMTok: number | null;
  /** USD per 1M prompt tokens written with Anthropic's 1-hour TTL; null when billed as {@link cacheWritePerMTok}. */
  cacheWrite1hPerMTok: number | null;
  /** USD per 1M completion tokens (reasoning tokens included); 0 for embeddings; null when the price is unknown. */
  outputPerMTok: number | null;
  /** Context window in tokens (prompt + completion). */
  contextWindow: number;
  /** Largest completion the model may produce, in tokens; 0 for embeddings. */
  maxOutputTokens: number;
  /** Completion tokens to reserve when a request names no max_tokens (≤ maxOutputTokens); 0 for embeddings. */
  defaultOutputTokens: number;
  /** URL of the provider's pricing page the prices come from, or `gateway.yaml models."<key>"` for an operator's override. */
  priceSource: string;
  /** URL of the model documentation the limits come from, or `gateway.yaml models."<key>"`. */
  contextSource: string;
  /** Date (YYYY-MM-DD) the figures were believed current (an override: the day it was applied). */
  asOf: string;
}

/**
 * The reasoning efforts of OpenAI's API reference (chat completions `reasoning_effort`, Responses
 * `reasoning.effort`), from the least to the most reasoning.
 */
export const REASONING_EFFORTS = Object.freeze(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const);

/** One of {@link REASONING_EFFORTS}. */
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Token counts of one request, for {@link costUsd}. All counts are tokens (non-negative finite numbers). */
export interface CostInput {
  /**
   * All prompt tokens, INCLUDING cache reads and cache writes (OpenAI convention). Callers holding
   * Anthropic-style usage (whose `input_tokens` excludes cached tokens) must add
   * `cache_read_input_tokens + cache_creation_input_tokens` first.
   */
  promptTokens: number;
  /** Completion tokens, reasoning tokens included. */
  completionTokens: number;
  /** Prompt tokens served from the provider's prompt cache (part of promptTokens). Default 0. */
  cachedReadTokens?: number;
  /** Prompt tokens written to the provider's prompt cache, every TTL (part of promptTokens). Default 0. */
  cacheWriteTokens?: number;
  /**
   * The part of {@link cacheWriteTokens} written with Anthropic's 1-hour TTL
   * (`usage.cache_creation.ephemeral_1h_input_tokens`), priced at {@link ModelInfo.cacheWrite1hPerMTok}. Default 0.
   */
  cacheWrite1hTokens?: number;
}

/**
 * Anthropic's prompt-caching prices as multiples of the base input price (Anthropic docs, "Pricing"
 * → "Prompt caching": cache hits 0.1×, 5-minute writes 1.25×, 1-hour writes 2×). Used for an
 * `anthropic` model whose table entry or override names its input price but leaves a cache price
 * null; an explicit figure always wins (Claude Opus 5.5 reads cost 0.05× input, for instance).
 */
export const ANTHROPIC_CACHE_MULTIPLIERS = Object.freeze({ read: 0.1, write5m: 1.25, write1h: 2 });

const https = pattern(string(), /^https:\/\/\S+$/);
const nonNegative = min(number(), 0);
const tokens = min(integer(), 0);

const ModelEntry = object({
  provider: enums(PROVIDER_NAMES),
  model: size(string(), 1, 200),
  aliases: optional(array(size(string(), 1, 200))),
  kind: enums(['chat', 'embeddings'] as const),
  reasoning: boolean(),
  reasoning_efforts: optional(size(array(enums(REASONING_EFFORTS)), 1, REASONING_EFFORTS.length)),
  input_per_mtok: nullable(nonNegative),
  cached_input_per_mtok: nullable(nonNegative),
  cache_write_per_mtok: nullable(nonNegative),
  cache_write_1h_per_mtok: optional(nullable(nonNegative)),
  output_per_mtok: nullable(nonNegative),
  context_window: min(integer(), 1),
  max_output_tokens: tokens,
  default_output_tokens: tokens,
  price_source: https,
  context_source: https,
  as_of: pattern(string(), /^\d{4}-\d{2}-\d{2}$/),
});

const TableShape = object({
  notes: string(),
  token_estimate_factors: record(string(), min(number(), 0, { exclusive: true })),
  models: array(object()),
});

/** The parsed, validated model table. */
export interface ModelTable {
  /** Canonical entries in file order. */
  models: readonly ModelInfo[];
  /** `<provider>/<id or alias>` → entry. */
  index: ReadonlyMap<string, ModelInfo>;
  /** provider → every id and alias it knows, longest first (for dated-suffix matching). */
  idsByProvider: ReadonlyMap<string, readonly string[]>;
  /** provider → tokenizer factor relative to o200k_base. */
  factors: ReadonlyMap<string, number>;
}

function describe(err: StructError): string {
  const path = err.path.length ? err.path.join('.') : '(root)';
  return `${path}: ${err.message}`;
}

/**
 * Fills the cache prices an `anthropic` entry leaves null from its input price with
 * {@link ANTHROPIC_CACHE_MULTIPLIERS}; other providers' entries, and unpriced ones, are returned as
 * they are (null there means "billed as input").
 */
function withDerivedCachePrices(info: ModelInfo): ModelInfo {
  const input = info.inputPerMTok;
  if (info.provider !== 'anthropic' || input === null) return info;
  const m = ANTHROPIC_CACHE_MULTIPLIERS;
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  return {
    ...info,
    cachedInputPerMTok: info.cachedInputPerMTok ?? round(input * m.read),
    cacheWritePerMTok: info.cacheWritePerMTok ?? round(input * m.write5m),
    cacheWrite1hPerMTok: info.cacheWrite1hPerMTok ?? round(input * m.write1h),
  };
}

/** A list of efforts in {@link REASONING_EFFORTS} order without repeats, frozen; null for none given. */
function effortList(efforts: readonly ReasoningEffort[] | undefined): readonly ReasoningEffort[] | null {
  return efforts ? Object.freeze(REASONING_EFFORTS.filter((e) => efforts.includes(e))) : null;
}

/**
 * Checks the limits and the price of one entry (from the data file or an override).
 * @returns a problem as `member: message`, or null.
 */
function entryProblem(info: ModelInfo): string | null {
  if (info.maxOutputTokens > info.contextWindow) {
    return `max_output_tokens: ${info.maxOutputTokens} exceeds context_window ${info.contextWindow}`;
  }
  if (info.defaultOutputTokens > info.maxOutputTokens) {
    return `default_output_tokens: ${info.defaultOutputTokens} exceeds max_output_tokens ${info.maxOutputTokens}`;
  }
  if (info.kind === 'chat' && info.defaultOutputTokens < 1) return 'default_output_tokens: a chat model needs default_output_tokens >= 1';
  if (info.reasoningEfforts !== null && !info.reasoning) return 'reasoning_efforts: only a model with reasoning true accepts reasoning efforts';
  if ((info.inputPerMTok === null) !== (info.outputPerMTok === null)) {
    return 'input_per_mtok: input and output prices are both known or both null';
  }
  if (info.inputPerMTok === null && (info.cachedInputPerMTok !== null || info.cacheWritePerMTok !== null || info.cacheWrite1hPerMTok !== null)) {
    return 'cached_input_per_mtok: a model without input and output prices cannot have cache prices';
  }
  return null;
}

/**
 * Validates and indexes a model table in the shape of `shared/data/models.json`
 * (`{notes, token_estimate_factors, models: [...]}`).
 *
 * @throws Error naming the entry (index and `<provider>/<model>`) and the member at fault when the
 *   shape is wrong, when max_output_tokens exceeds the window, when default_output_tokens exceeds
 *   max_output_tokens, when only one of input and output price is null, or when an id or alias
 *   appears twice for one provider.
 */
export function parseModelTable(raw: unknown): ModelTable {
  const [tableErr, table] = validate(raw, TableShape);
  if (tableErr) throw new Error(`models.json: ${describe(tableErr)}`);
  for (const name of Object.keys(table.token_estimate_factors)) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(name)) {
      throw new Error(`models.json: token_estimate_factors names unknown provider "${name}"`);
    }
  }
  const entries: Array<{ info: ModelInfo; aliases: readonly string[] }> = [];
  table.models.forEach((rawEntry, i) => {
    const label = `models[${i}] (${String(rawEntry.provider)}/${String(rawEntry.model)})`;
    const [err, e] = validate(rawEntry, ModelEntry);
    if (err) throw new Error(`models.json ${label}: ${describe(err)}`);
    const info: ModelInfo = {
      provider: e.provider,
      model: e.model,
      kind: e.kind,
      reasoning: e.reasoning,
      reasoningEfforts: effortList(e.reasoning_efforts),
      inputPerMTok: e.input_per_mtok,
      cachedInputPerMTok: e.cached_input_per_mtok,
      cacheWritePerMTok: e.cache_write_per_mtok,
      cacheWrite1hPerMTok: e.cache_write_1h_per_mtok ?? null,
      outputPerMTok: e.output_per_mtok,
      contextWindow: e.context_window,
      maxOutputTokens: e.max_output_tokens,
      defaultOutputTokens: e.default_output_tokens,
      priceSource: e.price_source,
      contextSource: e.context_source,
      asOf: e.as_of,
    };
    const problem = entryProblem(info);
    if (problem) throw new Error(`models.json ${label}: ${problem}`);
    entries.push({ info: Object.freeze(withDerivedCachePrices(info)), aliases: e.aliases ?? [] });
  });
  return indexTable(entries, new Map(Object.entries(table.token_estimate_factors)), 'models.json');
}

/**
 * Indexes entries by `<provider>/<id or alias>`.
 * @throws Error (prefixed with `where`) when an id or alias appears twice for one provider.
 */
function indexTable(entries: ReadonlyArray<{ info: ModelInfo; aliases: readonly string[] }>, factors: ReadonlyMap<string, number>, where: string): ModelTable {
  const models: ModelInfo[] = [];
  const index = new Map<string, ModelInfo>();
  const ids = new Map<string, string[]>();
  entries.forEach(({ info, aliases }, i) => {
    models.push(info);
    const known = ids.get(info.provider) ?? [];
    ids.set(info.provider, known);
    for (const id of [info.model, ...aliases]) {
      const key = `${info.provider}/${id}`;
      const prior = index.get(key);
      if (prior) throw new Error(`${where} models[${i}] (${info.provider}/${info.model}): id "${key}" is already used by ${prior.provider}/${prior.model}`);
      index.set(key, info);
      known.push(id);
    }
  });
  for (const list of ids.values()) list.sort((a, b) => b.length - a.length);
  return { models: Object.freeze(models), index, idsByProvider: ids, factors };
}

/** The data file's table, as shipped. */
const BASE_TABLE = parseModelTable(rawTable);
/** The table lookups read: the data file's, with the operator's overrides once applied. */
let table: ModelTable = BASE_TABLE;

/** Azure entries derived from openai ones, keyed by the openai canonical model id (cleared when overrides change). */
let azureFromOpenai = new Map<string, ModelInfo>();

/**
 * A version stamp that may follow a known id after '-': dash-separated segments, each 2–8 digits
 * (2024-08-06, 20250929, 0613, 001, 05-06) or `preview` / `latest` / `exp`. Anything else (e.g.
 * `-pro`, `-fast-reasoning`, `-audio-preview`) names a different model with its own price, so it
 * must not be priced as the shorter id.
 */
const STAMP = /^(?:\d{2,8}|preview|latest|exp)(?:-(?:\d{2,8}|preview|latest|exp))*$/;

function resolveIn(t: ModelTable, provider: string, model: string): ModelInfo | null {
  const exact = t.index.get(`${provider}/${model}`);
  if (exact) return exact;
  const ids = t.idsByProvider.get(provider);
  if (!ids) return null;
  for (const id of ids) {
    if (model.length > id.length + 1 && model.startsWith(id) && model[id.length] === '-' && STAMP.test(model.slice(id.length + 1))) {
      return t.index.get(`${provider}/${id}`) ?? null;
    }
  }
  return null;
}

/** {@link getModelInfo} on a given table (the azure → openai fallback included). */
function lookupIn(t: ModelTable, provider: string, model: string, cache: Map<string, ModelInfo> | null): ModelInfo | null {
  const found = resolveIn(t, provider, model);
  if (found || provider !== 'azure') return found;
  const openai = resolveIn(t, 'openai', model);
  if (!openai) return null;
  let derived = cache?.get(openai.model);
  if (!derived) {
    derived = Object.freeze({ ...openai, provider: 'azure' as const });
    cache?.set(openai.model, derived);
  }
  return derived;
}

/**
 * Looks up a model. `model` may be the canonical id, an alias listed in the data file, or a known
 * id (canonical or alias) followed by '-' and a date/version stamp (`gpt-4o-2024-08-06` → `gpt-4o`,
 * `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`, `gemini-2.5-pro-preview-05-06` →
 * `gemini-2.5-pro`); the longest matching known id wins. Ids are case-sensitive. The operator's
 * overrides ({@link applyModelOverrides}) are consulted: an overridden entry is returned with its
 * overridden figures, an added model like a shipped one.
 *
 * For `azure`, a model with no azure entry falls back to the openai entry of the same name,
 * returned with `provider: 'azure'`.
 *
 * @returns the canonical entry (its `model` is the canonical id, not the alias asked for), or null
 *   when the provider or model is unknown. Never throws.
 */
export function getModelInfo(provider: ProviderName | string, model: string): ModelInfo | null {
  return lookupIn(table, provider, model, azureFromOpenai);
}

/**
 * Every `<provider>/<model>` in the table (canonical ids only, data-file order, then models the
 * operator added), for `GET /v1/models`. A new array each call.
 */
export function listModels(): ModelInfo[] {
  return [...table.models];
}

/**
 * Multiplier that turns an o200k_base token count into an estimate of `provider`'s own token count
 * (e.g. 1.2 for anthropic). Best-effort, for pre-flight estimates only; 1 for an unknown provider.
 */
export function tokenEstimateFactor(provider: string): number {
  return table.factors.get(provider) ?? 1;
}

/**
 * Whether `provider`'s `model` takes a reasoning effort ({@link ModelInfo.reasoning}), looked up as
 * {@link getModelInfo} does (aliases, dated ids, azure from openai, the operator's overrides).
 * @returns true or false for a model in the table (false for embedding models); null for a model
 *   the table does not know, which translators treat as taking none (an operator adds it with
 *   `reasoning: true` under gateway.yaml `models:`). Never throws.
 */
export function acceptsReasoningEffort(provider: string, model: string): boolean | null {
  const info = getModelInfo(provider, model);
  return info ? info.reasoning : null;
}

/**
 * The reasoning effort to send `provider`'s `model` when the client asked for `wanted`: `wanted`
 * itself when the model accepts it; when the model accepts only some efforts
 * ({@link ModelInfo.reasoningEfforts}), the nearest of them in {@link REASONING_EFFORTS} order, a tie
 * going to the greater (Gemini 3 Pro, which refuses `medium` with a 400, gets `high`; `none` becomes
 * the least it accepts, as it cannot stop reasoning); null when the model takes no reasoning effort
 * or is not in the table ({@link acceptsReasoningEffort} not true), so that the member is not sent.
 * Never throws.
 */
export function reasoningEffortFor(provider: string, model: string, wanted: ReasoningEffort): ReasoningEffort | null {
  const info = getModelInfo(provider, model);
  if (!info?.reasoning) return null;
  const accepted = info.reasoningEfforts;
  if (!accepted || accepted.includes(wanted)) return wanted;
  const at = REASONING_EFFORTS.indexOf(wanted);
  let best = accepted[0]!;
  for (const effort of accepted) {
    // accepted is in REASONING_EFFORTS order, so a later one at the same distance is the greater.
    if (Math.abs(REASONING_EFFORTS.indexOf(effort) - at) <= Math.abs(REASONING_EFFORTS.indexOf(best) - at)) best = effort;
  }
  return best;
}

/**
 * An operator's override of one model (`gateway.yaml` → `models."<provider>/<model>"`, validated
 * by shared/config.ts). Prices in USD per 1M tokens, limits in tokens; an absent member keeps the
 * table's figure. A model the table does not know needs `contextWindow` and `maxOutputTokens`;
 * `inputPerMTok` and `outputPerMTok` price it and must come together. `reasoning` (default for a
 * new model: false) says whether it takes a reasoning effort, `reasoningEfforts` which ones when
 * only some (needs `reasoning` true; `reasoning: false` clears the table's list).
 */
export interface ModelOverride {
  kind?: 'chat' | 'embeddings';
  reasoning?: boolean;
  reasoningEfforts?: readonly ReasoningEffort[];
  inputPerMTok?: number;
  outputPerMTok?: number;
  cachedInputPerMTok?: number;
  cacheWritePerMTok?: number;
  cacheWrite1hPerMTok?: number;
  contextWindow?: number;
  maxOutputTokens?: number;
  defaultOutputTokens?: number;
}

/**
 * A mistake in one override: `key` is its `<provider>/<model>` (empty until known), `member` its
 * `gateway.yaml` member (`input`, `context-window`, ...; empty for the key itself).
 */
export class ModelOverrideError extends Error {
  constructor(
    readonly member: string,
    message: string,
    readonly key = '',
  ) {
    super(message);
  }
}

/** Splits `<provider>/<model>` at the first '/', or null when the provider is unknown or the model empty. */
export function splitModelKey(key: string): { provider: ProviderName; model: string } | null {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return null;
  const provider = key.slice(0, slash);
  return (PROVIDER_NAMES as readonly string[]).includes(provider) ? { provider: provider as ProviderName, model: key.slice(slash + 1) } : null;
}

/** The default output reservation of the data file's notes: the max when ≤ half the window, else min(max, 16384, half the window). */
function defaultOutputFor(kind: 'chat' | 'embeddings', window: number, max: number): number {
  if (kind === 'embeddings') return 0;
  return max <= window / 2 ? max : Math.min(max, 16384, Math.floor(window / 2));
}

/**
 * One override applied to the entry it names (`base`, null for a model the table lacks).
 * @throws {ModelOverrideError} naming the member: a new model without limits, only one of input and
 *   output for an unpriced model, cache prices without a price, inconsistent limits, or reasoning
 *   efforts for a model without reasoning.
 */
export function mergeModelOverride(key: string, base: ModelInfo | null, o: ModelOverride, today: string): ModelInfo {
  const where = splitModelKey(key);
  if (!where) throw new ModelOverrideError('', `expected "<provider>/<model>" with a known provider (${PROVIDER_NAMES.join(', ')})`);
  if (!base && o.contextWindow === undefined) throw new ModelOverrideError('context-window', 'required for a model the model table does not know');
  if (!base && o.maxOutputTokens === undefined && o.kind !== 'embeddings') throw new ModelOverrideError('max-output-tokens', 'required for a model the model table does not know');
  const unpriced = !base || base.inputPerMTok === null;
  if (unpriced && (o.inputPerMTok === undefined) !== (o.outputPerMTok === undefined)) {
    throw new ModelOverrideError(o.inputPerMTok === undefined ? 'input' : 'output', 'input and output are both needed to price a model that has no price');
  }
  const priced = o.inputPerMTok !== undefined || !unpriced;
  const cacheGiven = o.cachedInputPerMTok ?? o.cacheWritePerMTok ?? o.cacheWrite1hPerMTok;
  if (!priced && cacheGiven !== undefined) throw new ModelOverrideError('input', 'required with cache prices: a model needs input and output prices first');
  const kind = o.kind ?? base?.kind ?? 'chat';
  const window = o.contextWindow ?? base!.contextWindow;
  const max = o.maxOutputTokens ?? (kind === 'embeddings' && !base ? 0 : base!.maxOutputTokens);
  const limitsChanged = o.contextWindow !== undefined || o.maxOutputTokens !== undefined;
  const source = `gateway.yaml models."${key}"`;
  const reasoning = o.reasoning ?? base?.reasoning ?? false;
  const merged: ModelInfo = {
    provider: where.provider,
    model: base?.model ?? where.model,
    kind,
    reasoning,
    reasoningEfforts: o.reasoningEfforts ? effortList(o.reasoningEfforts) : reasoning ? (base?.reasoningEfforts ?? null) : null,
    inputPerMTok: o.inputPerMTok ?? base?.inputPerMTok ?? null,
    outputPerMTok: o.outputPerMTok ?? base?.outputPerMTok ?? null,
    cachedInputPerMTok: o.cachedInputPerMTok ?? base?.cachedInputPerMTok ?? null,
    cacheWritePerMTok: o.cacheWritePerMTok ?? base?.cacheWritePerMTok ?? null,
    cacheWrite1hPerMTok: o.cacheWrite1hPerMTok ?? base?.cacheWrite1hPerMTok ?? null,
    contextWindow: window,
    maxOutputTokens: max,
    defaultOutputTokens: o.defaultOutputTokens ?? (base && !limitsChanged ? base.defaultOutputTokens : defaultOutputFor(kind, window, max)),
    priceSource: o.inputPerMTok !== undefined || cacheGiven !== undefined ? source : (base?.priceSource ?? source),
    contextSource: limitsChanged || !base ? source : base.contextSource,
    asOf: today,
  };
  const problem = entryProblem(merged);
  if (problem) {
    const member = problem.slice(0, problem.indexOf(':'));
    const yamlName: Record<string, string> = {
      max_output_tokens: 'max-output-tokens',
      default_output_tokens: 'default-output-tokens',
      input_per_mtok: 'input',
      cached_input_per_mtok: 'cache-read',
      reasoning_efforts: 'reasoning-efforts',
    };
    throw new ModelOverrideError(yamlName[member] ?? member, problem.slice(problem.indexOf(':') + 2));
  }
  return Object.freeze(withDerivedCachePrices(merged));
}

/**
 * The shipped table with `overrides` applied: an override of a known model (by canonical id, alias
 * or dated id) replaces that entry under all its ids; an unknown one is added under its key's id.
 * @throws {ModelOverrideError} (its message prefixed with the key) for an override that cannot apply.
 */
function tableWithOverrides(overrides: Readonly<Record<string, ModelOverride>>, today: string): ModelTable {
  if (Object.keys(overrides).length === 0) return BASE_TABLE;
  const replaced = new Map<ModelInfo, ModelInfo>();
  const added: Array<{ info: ModelInfo; aliases: readonly string[] }> = [];
  for (const [key, override] of Object.entries(overrides)) {
    const where = splitModelKey(key);
    const base = where ? lookupIn(BASE_TABLE, where.provider, where.model, null) : null;
    // An azure model priced from openai's entry (not itself in the table) becomes an entry of its own.
    const own = base && BASE_TABLE.models.includes(base) ? base : null;
    let merged: ModelInfo;
    try {
      merged = mergeModelOverride(key, base, override, today);
    } catch (err) {
      throw err instanceof ModelOverrideError ? new ModelOverrideError(err.member, err.message, key) : err;
    }
    if (own && replaced.has(own)) throw new ModelOverrideError('', `names ${own.provider}/${own.model}, which another override already names`, key);
    if (own) replaced.set(own, merged);
    else added.push({ info: merged, aliases: [] });
  }
  const entries: Array<{ info: ModelInfo; aliases: string[] }> = BASE_TABLE.models.map((m) => ({ info: replaced.get(m) ?? m, aliases: [] }));
  for (const [id, info] of BASE_TABLE.index) {
    const at = BASE_TABLE.models.indexOf(info);
    if (id !== `${info.provider}/${info.model}`) entries[at]!.aliases.push(id.slice(info.provider.length + 1));
  }
  return indexTable([...entries, ...added], BASE_TABLE.factors, 'gateway.yaml models:');
}

/**
 * Checks that `overrides` apply to the shipped table, without applying them.
 * @throws {ModelOverrideError} with `key` and `member` set, for the first that cannot apply.
 */
export function checkModelOverrides(overrides: Readonly<Record<string, ModelOverride>>): void {
  tableWithOverrides(overrides, new Date().toISOString().slice(0, 10));
}

/**
 * Applies the operator's model overrides (`config.models`) to every later lookup
 * ({@link getModelInfo}, {@link listModels}, {@link costUsd}) in this process: call it once at
 * start, after the configuration loaded and before serving. Each call starts again from the
 * shipped table, so `applyModelOverrides({})` restores it.
 * @throws {ModelOverrideError} for an override that cannot apply (shared/config.ts reports these at
 *   validation, with their key path, so a validated configuration never throws here).
 */
export function applyModelOverrides(overrides: Readonly<Record<string, ModelOverride>>): void {
  table = tableWithOverrides(overrides, new Date().toISOString().slice(0, 10));
  azureFromOpenai = new Map();
}

function count(name: string, value: number | undefined): number {
  const n = value ?? 0;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    throw new RangeError(`costUsd: ${name} must be a non-negative finite number of tokens, got ${String(value)}`);
  }
  return n;
}

/** Why a request has no cost: its model is not in the table, or the table has no price for it. */
export type MissingPrice = 'unknown-model' | 'no-price';

/** A request's cost in USD, or null with the reason. */
export interface CostResult {
  usd: number | null;
  missing: MissingPrice | null;
}

/**
 * Cost in USD of one request, with the reason when there is none:
 * `((prompt − cachedRead − cacheWrite)·input + cachedRead·(cachedInput ?? input)
 *   + (cacheWrite − cacheWrite1h)·(cacheWrite ?? input)
 *   + cacheWrite1h·(cacheWrite1h ?? cacheWrite ?? input) + completion·output) / 1e6`, rounded to 1e-10.
 * Anthropic's cache prices follow {@link ANTHROPIC_CACHE_MULTIPLIERS} where the table names none.
 *
 * @returns `{usd, missing: null}`, or `{usd: null, missing: 'unknown-model'}` when the model does
 *   not resolve ({@link getModelInfo}), `{usd: null, missing: 'no-price'}` when its price is unknown.
 * @throws RangeError when a count is negative or not finite, when cachedReadTokens +
 *   cacheWriteTokens exceed promptTokens (promptTokens must include them), or when
 *   cacheWrite1hTokens exceed cacheWriteTokens.
 */
export function costOf(provider: string, model: string, usage: CostInput): CostResult {
  const prompt = count('promptTokens', usage.promptTokens);
  const completion = count('completionTokens', usage.completionTokens);
  const cachedRead = count('cachedReadTokens', usage.cachedReadTokens);
  const cacheWrite = count('cacheWriteTokens', usage.cacheWriteTokens);
  const write1h = count('cacheWrite1hTokens', usage.cacheWrite1hTokens);
  if (cachedRead + cacheWrite > prompt) {
    throw new RangeError(
      `costUsd: cachedReadTokens + cacheWriteTokens (${cachedRead + cacheWrite}) exceed promptTokens (${prompt}); ` +
        'promptTokens must include cached tokens',
    );
  }
  if (write1h > cacheWrite) throw new RangeError(`costUsd: cacheWrite1hTokens (${write1h}) exceed cacheWriteTokens (${cacheWrite})`);
  const info = getModelInfo(provider, model);
  if (!info) return { usd: null, missing: 'unknown-model' };
  const input = info.inputPerMTok;
  const output = info.outputPerMTok;
  if (input === null || output === null) return { usd: null, missing: 'no-price' };
  const write5m = info.cacheWritePerMTok ?? input;
  const micro =
    (prompt - cachedRead - cacheWrite) * input +
    cachedRead * (info.cachedInputPerMTok ?? input) +
    (cacheWrite - write1h) * write5m +
    write1h * (info.cacheWrite1hPerMTok ?? write5m) +
    completion * output;
  return { usd: Math.round((micro / 1e6) * 1e10) / 1e10, missing: null };
}

/**
 * Cost in USD of one request ({@link costOf} without the reason).
 * @returns null (not 0) when the model is unknown or has no price.
 * @throws RangeError as {@link costOf}.
 */
export function costUsd(provider: string, model: string, usage: CostInput): number | null {
  return costOf(provider, model, usage).usd;
}
