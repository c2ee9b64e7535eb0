/**
 * Token counting for records whose provider sent no usage (admin side, off the request path).
 * Delegates to the proxy's bounded-time estimator (o200k_base, counted in bounded chunks).
 */
import { countTokens } from '../proxy/tokenlimit/estimate.ts';

/** Tokens in `text` by o200k_base (bounded time for any input). */
export function countTextTokens(text: string): number {
  return text ? countTokens(text) : 0;
}
