/**
 * Token counting for records whose provider sent no usage (admin side, off the request path).
 * Delegates to the bounded-time estimator both processes use (shared/token-estimate.ts) (o200k_base, counted in bounded chunks).
 */
import { countTokens } from '../shared/token-estimate.ts';

/** Tokens in `text` by o200k_base (bounded time for any input). */
export function countTextTokens(text: string): number {
  return text ? countTokens(text) : 0;
}
