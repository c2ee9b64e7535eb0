/**
 * Token-limit exception handlers: what to do with a chat request whose estimated input exceeds the
 * model's allowance (context window − reserved output, see limits.ts), chosen per request by the
 * `Svc-Token-Limit-Exception-Handler` header:
 *  - `truncate`   — normalize whitespace, then shorten the longest texts proportionally (truncate.ts);
 *  - `middle-out` — remove middle messages, then the middle of the longest texts (middle-out.ts);
 *  - `fallback`   — `model` is "primary,fallback": send the fallback when over the primary's limit (fallback.ts).
 * Estimation (estimate.ts) follows OpenAI's cookbook "How to count tokens with tiktoken"
 * (https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb)
 * and takes bounded time (≤ 50 ms per 1 MB body, bench/estimate.ts, plus, for a body within the
 * sample's error of its allowance, a full count within a per-request budget).
 *
 * The rewrite happens before the provider call. Bodies within the limit come back as the same
 * object with `changed: false`, so the caller can forward the original bytes untouched. A rewrite
 * that cannot fit (its minimum keeps the first system message and the last user message at 32
 * tokens at least) is refused by {@link assertFits} with a 400 rather than forwarded.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { badRequest, type GatewayError } from '../errors.ts';
import { analyzeWithSpec, newExactBudget } from '../../shared/token-estimate.ts';
import { fallback, type ModelResolver } from './fallback.ts';
import { check, type TokenLimitOptions } from './limits.ts';
import { middleOut } from './middle-out.ts';
import { truncate } from './truncate.ts';

export { estimateChatTokens, warmUpEstimator, countTokens, tokenizerBackendName, COUNTING_SOURCE } from '../../shared/token-estimate.ts';
export { tightestTarget } from './limits.ts';
export type { TokenLimitOptions, ModelLimits, Target } from './limits.ts';
export type { ModelResolver } from './fallback.ts';

/** The handlers `Svc-Token-Limit-Exception-Handler` may name. */
export type TokenLimitHandler = 'truncate' | 'middle-out' | 'fallback';

/** Name of the request header selecting the handler. */
export const TOKEN_LIMIT_HEADER = 'Svc-Token-Limit-Exception-Handler';

const HANDLERS: readonly TokenLimitHandler[] = ['truncate', 'middle-out', 'fallback'];

/**
 * Parses the `Svc-Token-Limit-Exception-Handler` header value (case-insensitive, trimmed).
 * @returns the handler, or null when the header is absent or empty.
 * @throws GatewayError 400 (`param` = the header name, code `invalid_token_limit_handler`) for any other value.
 */
export function parseTokenLimitHandler(headerValue: string | undefined): TokenLimitHandler | null {
  if (headerValue === undefined) return null;
  const v = headerValue.trim().toLowerCase();
  if (v === '') return null;
  if ((HANDLERS as readonly string[]).includes(v)) return v as TokenLimitHandler;
  throw badRequest(
    `invalid ${TOKEN_LIMIT_HEADER} header ${JSON.stringify(headerValue)}: expected one of ${HANDLERS.join(', ')}`,
    TOKEN_LIMIT_HEADER,
    'invalid_token_limit_handler',
  );
}

/** What a handler did. Token figures are estimated input tokens; `allowedInput` likewise in tokens. */
export interface TokenLimitResult {
  handler: TokenLimitHandler;
  /** False: `body` is the very object passed in (forward the original bytes). */
  changed: boolean;
  /** The body to send (a copy when changed; the input is never mutated). */
  body: ChatCompletionRequest;
  /** Provider of the model to send. */
  provider: string;
  /** Model to send, bare (as `resolve` returned it). */
  model: string;
  /**
   * The model string chosen, as the client wrote it (trimmed): `fallback`'s chosen entry, else the
   * model string. On a router this is what goes back into the body, so that a `<provider>/` prefix
   * still pins the provider and a bare name is still balanced (and mapped) by the router.
   */
  entry: string;
  /** Context window of the model sent (tokens); null when the model is unknown. */
  contextWindow: number | null;
  /** Estimate before; null when not counted (unknown model, or the UTF-8 byte bound already fits). */
  tokensBefore: number | null;
  /** Estimate of the body sent (for `fallback`: by the chosen model's tokenizer); null when not counted. */
  tokensAfter: number | null;
  /** Input allowance of the model sent (context window − reserved output); null when the model is unknown. */
  allowedInput: number | null;
  /**
   * Why nothing was rewritten: the model is not in the model table (no limits known), or the body
   * is within the limit. Absent when the strategy ran. A strategy that ran but could not get under
   * the limit (its minimum, e.g. many messages, images or tool definitions, exceeds it) returns its
   * smallest body with `tokensAfter > allowedInput`, which {@link assertFits} refuses.
   */
  skipped?: 'unknown-model' | 'within-limit';
}

/**
 * Applies `handler` to a chat-completions `body` before the provider call.
 *
 * The model is `opts.modelOverride` (the `Svc-Model-Override` header) when given, else `body.model`;
 * `target.resolve` turns a model string (`openai/gpt-4o` on /ai, a bare name on a router) into
 * `{provider, model}` for the limit lookup. `fallback` reads the string as a comma-separated list.
 *
 * Cost: one bounded estimate (≤ 50 ms per MB; none when the byte bound fits), plus a few more
 * while a strategy rewrites an over-limit body (each re-estimate reuses cached chunk counts). Every
 * decision "fits: input tokens ≤ allowed input" whose sampled estimate is within its error range of
 * the allowance is made on a full count, up to one budget per request (estimate.ts ExactBudget:
 * 256,000 tokens with gpt-tokenizer: ≤ ~50 ms for English, ≤ ~0.75 s at worst), so a body of exactly
 * the allowance is kept and one token more is not.
 *
 * @throws GatewayError 400 when there is no model string, when `fallback`'s list is empty, or when
 *   `messages` is not an array (truncate, middle-out); errors thrown by `target.resolve` propagate.
 */
export function applyTokenLimit(handler: TokenLimitHandler, body: ChatCompletionRequest, target: ModelResolver, opts: TokenLimitOptions = {}): TokenLimitResult {
  const modelString = opts.modelOverride ?? body.model;
  if (typeof modelString !== 'string' || modelString.trim() === '') {
    throw badRequest('missing required member "model" (needed by the token-limit handler)', 'model', 'missing_model');
  }

  const budget = newExactBudget();
  if (handler === 'fallback') {
    const choice = fallback(body, modelString, target, opts, budget);
    const { primary, chosen } = choice;
    const switched = chosen !== primary;
    let after = chosen.analysis;
    if (switched && chosen.info && !after) after = analyzeWithSpec(choice.body, chosen.spec);
    const result: TokenLimitResult = {
      handler,
      changed: choice.changed,
      body: choice.body,
      provider: chosen.provider,
      model: chosen.model,
      entry: choice.entry,
      contextWindow: chosen.info?.contextWindow ?? null,
      tokensBefore: primary.analysis?.tokens ?? null,
      tokensAfter: switched ? (after?.tokens ?? null) : (primary.analysis?.tokens ?? null),
      allowedInput: chosen.allowed,
    };
    if (!primary.info) result.skipped = 'unknown-model';
    else if (primary.fits) result.skipped = 'within-limit';
    return result;
  }

  if (!Array.isArray(body.messages)) throw badRequest('missing required member "messages" (an array of chat messages)', 'messages', 'missing_messages');
  const entry = modelString.trim();
  const { provider, model } = target.resolve(entry);
  const c = check(body, provider, model, opts, budget);
  const unchanged = (skipped: 'unknown-model' | 'within-limit'): TokenLimitResult => ({
    handler,
    changed: false,
    body,
    provider,
    model,
    entry,
    contextWindow: c.info?.contextWindow ?? null,
    tokensBefore: c.analysis?.tokens ?? null,
    tokensAfter: c.analysis?.tokens ?? null,
    allowedInput: c.allowed,
    skipped,
  });
  if (!c.info || c.allowed === null) return unchanged('unknown-model');
  if (c.fits || !c.analysis) return unchanged('within-limit');

  const rewrite = handler === 'truncate' ? truncate(body, c.spec, c.allowed, c.analysis, budget) : middleOut(body, c.spec, c.allowed, c.analysis, budget);
  return {
    handler,
    changed: rewrite.body !== body,
    body: rewrite.body,
    provider,
    model,
    entry,
    contextWindow: c.info.contextWindow,
    tokensBefore: c.analysis.tokens,
    tokensAfter: rewrite.analysis.tokens,
    allowedInput: c.allowed,
  };
}

/**
 * Refuses a `truncate` or `middle-out` result that is still over its allowance (`tokensAfter >
 * allowedInput`, all in tokens): its minimum (the first system message and the last user message
 * kept at 32 tokens at least, see truncate.ts and middle-out.ts) does not fit the model's context
 * window. Forwarding it would cost a provider call that fails with its own context-length error at
 * best, or answers a conversation with its texts cut to nothing at worst (before the minimum, an
 * over-large `max_tokens` emptied every text). `fallback` results pass: their body is the client's,
 * and the last entry is tried when none fits (fallback.ts).
 * @throws {GatewayError} 400 `context_length_exceeded` (OpenAI's code for this case; param
 *   `messages`) naming the model, its context window and the output reserved.
 */
export function assertFits(result: TokenLimitResult): void {
  const { handler, tokensAfter, allowedInput, contextWindow } = result;
  if (handler === 'fallback' || tokensAfter === null || allowedInput === null || tokensAfter <= allowedInput) return;
  throw contextLengthExceeded(result, contextWindow ?? allowedInput);
}

function contextLengthExceeded(r: TokenLimitResult, contextWindow: number): GatewayError {
  const reserved = contextWindow - r.allowedInput!;
  return badRequest(
    `the request does not fit the context window of ${r.provider}/${r.model}: ${contextWindow} tokens, ${reserved} of them reserved for the output, ` +
      `leaves ${r.allowedInput} for the input, and the ${r.handler} token-limit handler got the input down to ${r.tokensAfter} tokens only ` +
      `without cutting the first system message and the last user message below their start; ` +
      `send fewer or shorter messages, fewer images or tools, a smaller max_tokens, or use a model with a larger context window`,
    'messages',
    'context_length_exceeded',
  );
}
