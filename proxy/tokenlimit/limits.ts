/**
 * A model's input allowance for a request, and the pre-flight check against it:
 * allowed input = context window − reserved output, where the reserved output is the request's
 * `max_completion_tokens`, `max_tokens` or `max_output_tokens` (first present, in that order),
 * capped at the model's `maxOutputTokens`, or, when none is given, the model's
 * `defaultOutputTokens` (shared/models.ts). All figures in tokens.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { getModelInfo, type ModelInfo } from '../../shared/models.ts';
import { analyzeWithSpec, estimateSpec, newExactBudget, type ChatAnalysis, type EstimateSpec, type ExactBudget } from '../../shared/token-estimate.ts';

/** The model facts the handlers need (a subset of shared/models.ts ModelInfo). */
export type ModelLimits = Pick<ModelInfo, 'contextWindow' | 'maxOutputTokens' | 'defaultOutputTokens'>;

/** Injectable lookups (tests, other model tables); defaults are shared/models.ts'. */
export interface TokenLimitOptions {
  /** Model facts of `provider`/`model`, or null when unknown (default `getModelInfo`). */
  modelInfo?: (provider: string, model: string) => ModelLimits | null;
  /** Multiplier on an o200k_base count for `provider`'s tokenizer (default `tokenEstimateFactor`). */
  factor?: (provider: string) => number;
  /**
   * Model string used for estimation and selection instead of `body.model` (the
   * `Svc-Model-Override` header). The body's `model` member is not rewritten for it, except by
   * `fallback`, which always writes the chosen entry there.
   */
  modelOverride?: string;
}

/**
 * Output tokens reserved for the reply: the request's limit, at most the model's `maxOutputTokens`
 * (when the table gives one, i.e. > 0), else the model's default.
 *
 * The cap: the model never writes more than its output limit, so reserving more would only take
 * input room away for nothing (Claude Code asks for 128,000 on every request; `max_tokens: 5000` on
 * a 1,000-token model left no input at all). The gateway's translators cap the same way where they
 * write the provider's member (translators/shared/openai-chat-target.ts `outputTokenLimit`); a
 * passed-through body keeps the client's figure, for the provider to cap or refuse.
 */
export function reservedOutputTokens(body: ChatCompletionRequest, info: ModelLimits): number {
  for (const key of ['max_completion_tokens', 'max_tokens', 'max_output_tokens'] as const) {
    const v = body[key];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) {
      const asked = Math.floor(v);
      return info.maxOutputTokens > 0 ? Math.min(asked, info.maxOutputTokens) : asked;
    }
  }
  return info.defaultOutputTokens;
}

/** Input tokens `body` may use on a model with `info` (never negative). */
export function allowedInputTokens(body: ChatCompletionRequest, info: ModelLimits): number {
  return Math.max(0, info.contextWindow - reservedOutputTokens(body, info));
}

/** A provider and the bare model it would be sent. */
export interface Target {
  provider: string;
  model: string;
}

/**
 * Of the `targets` a request may go to (a router's members, each with the model the router would
 * send it), the one with the smallest input allowance for `body` (tokens, each by its own model
 * table entry; ties: the first), among those the model table knows; the first target when it knows
 * none; null for no targets. A body within that allowance is within every known target's, give or
 * take the tokenizers' differences, so it fits whichever member the router picks, retries included.
 */
export function tightestTarget<T extends Target>(body: ChatCompletionRequest, targets: readonly T[], opts: TokenLimitOptions = {}): T | null {
  const lookup = opts.modelInfo ?? getModelInfo;
  let best: T | null = null;
  let bestAllowed = Infinity;
  for (const t of targets) {
    const info = lookup(t.provider, t.model);
    if (!info) continue;
    const allowed = allowedInputTokens(body, info);
    if (allowed < bestAllowed) {
      best = t;
      bestAllowed = allowed;
    }
  }
  return best ?? targets[0] ?? null;
}

/** Outcome of checking `body` against one model. */
export interface Check {
  provider: string;
  model: string;
  /** null: the model is not in the model table. */
  info: ModelLimits | null;
  spec: EstimateSpec;
  /** null when the model is unknown. */
  allowed: number | null;
  /** The estimate; null when not computed (unknown model, or the byte bound already fits). */
  analysis: ChatAnalysis | null;
  /** True when the body fits: by the byte bound, or `analysis.tokens ≤ allowed`. */
  fits: boolean;
}

/**
 * Checks `body` against `provider`/`model`: fits when input tokens ≤ allowed input (context window
 * − reserved output). Tokens are counted only when the byte bound does not fit; when the sampled
 * estimate cannot tell (the allowance lies within its error range), an OpenAI model's body is
 * counted in full, charged to `budget` (see analyzeWithSpec), so the decision at the boundary is
 * exact: a body of exactly the allowance fits, one token more does not.
 */
export function check(body: ChatCompletionRequest, provider: string, model: string, opts: TokenLimitOptions, budget: ExactBudget = newExactBudget()): Check {
  const info = (opts.modelInfo ?? getModelInfo)(provider, model);
  const spec = estimateSpec(provider, model, { factor: opts.factor });
  if (!info) return { provider, model, info, spec, allowed: null, analysis: null, fits: false };
  const allowed = allowedInputTokens(body, info);
  const analysis = analyzeWithSpec(body, spec, { skipIfBoundWithin: allowed, allowance: allowed, budget });
  return { provider, model, info, spec, allowed, analysis, fits: analysis === null || analysis.tokens <= allowed };
}
