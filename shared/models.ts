/**
 * The model table: per `<provider>/<model>` prices (USD per 1M tokens), context windows and output
 * limits (tokens), read from `shared/data/models.json` once at module load, validated, and indexed.
 *
 * Used by the proxy (context-window checks, output reservation, cost of each request), by admin
 * (cost columns of the request log) and by `GET /v1/models`.
 *
 * Loading throws an `Error` naming the offending entry when the JSON is malformed, so a bad edit
 * of the data file fails at start-up rather than pricing requests wrongly.
 */
import { StructError, array, enums, integer, min, nullable, number, object, optional, pattern, record, size, string, validate } from 'superstruct';
import rawTable from './data/models.json' with { type: 'json' };
import { PROVIDER_NAMES, type ProviderName } from './providers.ts';

/** What the gateway knows about one `<provider>/<model>`. Prices in USD per 1,000,000 tokens; limits in tokens. */
export interface ModelInfo {
  /** Provider config name, e.g. `openai`. */
  provider: ProviderName;
  /** Canonical model id at that provider, e.g. `gpt-4o` (an alias or dated id resolves to this). */
  model: string;
  /** `chat` (chat completions) or `embeddings`. */
  kind: 'chat' | 'embeddings';
  /** USD per 1M uncached prompt tokens. */
  inputPerMTok: number;
  /** USD per 1M prompt tokens read from the provider's prompt cache; null when there is no discount (billed as input). */
  cachedInputPerMTok: number | null;
  /** USD per 1M prompt tokens written to the prompt cache (Anthropic: 5-minute TTL price); null when billed as input. */
  cacheWritePerMTok: number | null;
  /** USD per 1M completion tokens (reasoning tokens included); 0 for embeddings. */
  outputPerMTok: number;
  /** Context window in tokens (prompt + completion). */
  contextWindow: number;
  /** Largest completion the model may produce, in tokens; 0 for embeddings. */
  maxOutputTokens: number;
  /** Completion tokens to reserve when a request names no max_tokens (≤ maxOutputTokens); 0 for embeddings. */
  defaultOutputTokens: number;
  /** URL of the provider's pricing page the prices come from. */
  priceSource: string;
  /** URL of the model documentation the limits come from. */
  contextSource: string;
  /** Date (YYYY-MM-DD) the figures were believed current. */
  asOf: string;
}

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
  /** Prompt tokens written to the provider's prompt cache (part of promptTokens). Default 0. */
  cacheWriteTokens?: number;
}

const https = pattern(string(), /^https:\/\/\S+$/);
const nonNegative = min(number(), 0);
const tokens = min(integer(), 0);

const ModelEntry = object({
  provider: enums(PROVIDER_NAMES),
  model: size(string(), 1, 200),
  aliases: optional(array(size(string(), 1, 200))),
  kind: enums(['chat', 'embeddings'] as const),
  input_per_mtok: nonNegative,
  cached_input_per_mtok: nullable(nonNegative),
  cache_write_per_mtok: nullable(nonNegative),
  output_per_mtok: nonNegative,
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
 * Validates and indexes a model table in the shape of `shared/data/models.json`
 * (`{notes, token_estimate_factors, models: [...]}`).
 *
 * @throws Error naming the entry (index and `<provider>/<model>`) and the member at fault when the
 *   shape is wrong, when max_output_tokens exceeds the window, when default_output_tokens exceeds
 *   max_output_tokens, or when an id or alias appears twice for one provider.
 */
export function parseModelTable(raw: unknown): ModelTable {
  const [tableErr, table] = validate(raw, TableShape);
  if (tableErr) throw new Error(`models.json: ${describe(tableErr)}`);
  for (const name of Object.keys(table.token_estimate_factors)) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(name)) {
      throw new Error(`models.json: token_estimate_factors names unknown provider "${name}"`);
    }
  }

  const models: ModelInfo[] = [];
  const index = new Map<string, ModelInfo>();
  const ids = new Map<string, string[]>();
  table.models.forEach((rawEntry, i) => {
    const label = `models[${i}] (${String(rawEntry.provider)}/${String(rawEntry.model)})`;
    const [err, e] = validate(rawEntry, ModelEntry);
    if (err) throw new Error(`models.json ${label}: ${describe(err)}`);
    if (e.max_output_tokens > e.context_window) {
      throw new Error(`models.json ${label}: max_output_tokens ${e.max_output_tokens} exceeds context_window ${e.context_window}`);
    }
    if (e.default_output_tokens > e.max_output_tokens) {
      throw new Error(
        `models.json ${label}: default_output_tokens ${e.default_output_tokens} exceeds max_output_tokens ${e.max_output_tokens}`,
      );
    }
    if (e.kind === 'chat' && e.default_output_tokens < 1) {
      throw new Error(`models.json ${label}: a chat model needs default_output_tokens >= 1`);
    }
    const info: ModelInfo = Object.freeze({
      provider: e.provider,
      model: e.model,
      kind: e.kind,
      inputPerMTok: e.input_per_mtok,
      cachedInputPerMTok: e.cached_input_per_mtok,
      cacheWritePerMTok: e.cache_write_per_mtok,
      outputPerMTok: e.output_per_mtok,
      contextWindow: e.context_window,
      maxOutputTokens: e.max_output_tokens,
      defaultOutputTokens: e.default_output_tokens,
      priceSource: e.price_source,
      contextSource: e.context_source,
      asOf: e.as_of,
    });
    models.push(info);
    const known = ids.get(e.provider) ?? [];
    ids.set(e.provider, known);
    for (const id of [e.model, ...(e.aliases ?? [])]) {
      const key = `${e.provider}/${id}`;
      const prior = index.get(key);
      if (prior) throw new Error(`models.json ${label}: id "${key}" is already used by ${prior.provider}/${prior.model}`);
      index.set(key, info);
      known.push(id);
    }
  });
  for (const list of ids.values()) list.sort((a, b) => b.length - a.length);
  return {
    models: Object.freeze(models),
    index,
    idsByProvider: ids,
    factors: new Map(Object.entries(table.token_estimate_factors)),
  };
}

const TABLE = parseModelTable(rawTable);

/** Azure entries derived from openai ones, keyed by the openai canonical model id. */
const azureFromOpenai = new Map<string, ModelInfo>();

/**
 * A version stamp that may follow a known id after '-': dash-separated segments, each 2–8 digits
 * (2024-08-06, 20250929, 0613, 001, 05-06) or `preview` / `latest` / `exp`. Anything else (e.g.
 * `-pro`, `-fast-reasoning`, `-audio-preview`) names a different model with its own price, so it
 * must not be priced as the shorter id.
 */
const STAMP = /^(?:\d{2,8}|preview|latest|exp)(?:-(?:\d{2,8}|preview|latest|exp))*$/;

function resolve(provider: string, model: string): ModelInfo | null {
  const exact = TABLE.index.get(`${provider}/${model}`);
  if (exact) return exact;
  const ids = TABLE.idsByProvider.get(provider);
  if (!ids) return null;
  for (const id of ids) {
    if (model.length > id.length + 1 && model.startsWith(id) && model[id.length] === '-' && STAMP.test(model.slice(id.length + 1))) {
      return TABLE.index.get(`${provider}/${id}`) ?? null;
    }
  }
  return null;
}

/**
 * Looks up a model. `model` may be the canonical id, an alias listed in the data file, or a known
 * id (canonical or alias) followed by '-' and a date/version stamp (`gpt-4o-2024-08-06` → `gpt-4o`,
 * `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`, `gemini-2.5-pro-preview-05-06` →
 * `gemini-2.5-pro`); the longest matching known id wins. Ids are case-sensitive.
 *
 * For `azure`, a model with no azure entry falls back to the openai entry of the same name,
 * returned with `provider: 'azure'`.
 *
 * @returns the canonical entry (its `model` is the canonical id, not the alias asked for), or null
 *   when the provider or model is unknown. Never throws.
 */
export function getModelInfo(provider: ProviderName | string, model: string): ModelInfo | null {
  const found = resolve(provider, model);
  if (found || provider !== 'azure') return found;
  const openai = resolve('openai', model);
  if (!openai) return null;
  let derived = azureFromOpenai.get(openai.model);
  if (!derived) {
    derived = Object.freeze({ ...openai, provider: 'azure' as const });
    azureFromOpenai.set(openai.model, derived);
  }
  return derived;
}

/** Every `<provider>/<model>` in the data file (canonical ids only, file order), for `GET /v1/models`. A new array each call. */
export function listModels(): ModelInfo[] {
  return [...TABLE.models];
}

/**
 * Multiplier that turns an o200k_base token count into an estimate of `provider`'s own token count
 * (e.g. 1.2 for anthropic). Best-effort, for pre-flight estimates only; 1 for an unknown provider.
 */
export function tokenEstimateFactor(provider: string): number {
  return TABLE.factors.get(provider) ?? 1;
}

function count(name: string, value: number | undefined): number {
  const n = value ?? 0;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    throw new RangeError(`costUsd: ${name} must be a non-negative finite number of tokens, got ${String(value)}`);
  }
  return n;
}

/**
 * Cost in USD of one request:
 * `((prompt − cachedRead − cacheWrite)·input + cachedRead·(cachedInput ?? input)
 *   + cacheWrite·(cacheWrite ?? input) + completion·output) / 1e6`, rounded to 1e-10.
 *
 * @returns null (not 0) when the model is unknown — see {@link getModelInfo} for how ids resolve.
 * @throws RangeError when a count is negative or not finite, or when cachedReadTokens +
 *   cacheWriteTokens exceed promptTokens (promptTokens must include them).
 */
export function costUsd(provider: string, model: string, usage: CostInput): number | null {
  const prompt = count('promptTokens', usage.promptTokens);
  const completion = count('completionTokens', usage.completionTokens);
  const cachedRead = count('cachedReadTokens', usage.cachedReadTokens);
  const cacheWrite = count('cacheWriteTokens', usage.cacheWriteTokens);
  if (cachedRead + cacheWrite > prompt) {
    throw new RangeError(
      `costUsd: cachedReadTokens + cacheWriteTokens (${cachedRead + cacheWrite}) exceed promptTokens (${prompt}); ` +
        'promptTokens must include cached tokens',
    );
  }
  const info = getModelInfo(provider, model);
  if (!info) return null;
  const micro =
    (prompt - cachedRead - cacheWrite) * info.inputPerMTok +
    cachedRead * (info.cachedInputPerMTok ?? info.inputPerMTok) +
    cacheWrite * (info.cacheWritePerMTok ?? info.inputPerMTok) +
    completion * info.outputPerMTok;
  return Math.round((micro / 1e6) * 1e10) / 1e10;
}
