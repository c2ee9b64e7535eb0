/**
 * `fallback`: the model string is a comma-separated list, primary first, fallback second
 * (`openai/gpt-4o,anthropic/claude-sonnet-4-5` on /ai; bare names on a router). The body is
 * checked against the primary's allowance; over it, the fallback is chosen (with more than two
 * entries: the first entry the body fits, or whose limits are unknown, else the last). Within it,
 * or when the primary's limits are unknown, the primary is chosen. The body's `model` becomes the
 * chosen entry as written (trimmed); the body is otherwise untouched.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { badRequest } from '../errors.ts';
import { newExactBudget, type ExactBudget } from '../../shared/token-estimate.ts';
import { check, type Check, type TokenLimitOptions } from './limits.ts';

/** How a model string resolves to a provider and a bare model. */
export interface ModelResolver {
  resolve(modelString: string): { provider: string; model: string };
}

/** The choice `fallback` made. */
export interface FallbackChoice {
  body: ChatCompletionRequest;
  changed: boolean;
  /** The entry chosen, as written in the list. */
  entry: string;
  chosen: Check;
  primary: Check;
}

/** Entries of a comma-separated model list (trimmed, empty ones dropped). Throws 400 when there is none. */
export function modelList(modelString: string): string[] {
  const entries = modelString
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (entries.length === 0) throw badRequest('the model list for the fallback token-limit handler is empty', 'model', 'missing_model');
  return entries;
}

/**
 * Runs `fallback` for `body` with the model list `modelString`; each entry's check (limits.ts
 * `check`: exact at the allowance) charges full counts to the request's `budget`.
 * @throws GatewayError 400 when the list is empty; errors of `target.resolve` propagate.
 */
export function fallback(body: ChatCompletionRequest, modelString: string, target: ModelResolver, opts: TokenLimitOptions, budget: ExactBudget = newExactBudget()): FallbackChoice {
  const entries = modelList(modelString);
  const checks: Check[] = [];
  const at = (i: number): Check => {
    if (!checks[i]) {
      const { provider, model } = target.resolve(entries[i]!);
      checks[i] = check(body, provider, model, opts, budget);
    }
    return checks[i]!;
  };
  const primary = at(0);
  let index = 0;
  if (primary.info && !primary.fits) {
    index = entries.length - 1;
    for (let i = 1; i < entries.length; i++) {
      const c = at(i);
      if (!c.info || c.fits) {
        index = i;
        break;
      }
    }
  }
  const entry = entries[index]!;
  const changed = body.model !== entry;
  return { body: changed ? { ...body, model: entry } : body, changed, entry, chosen: at(index), primary };
}
