/**
 * Stage count-tokens: a token count whose provider has no count endpoint of its own is answered by
 * the gateway (Messages' count_tokens for every provider but Anthropic; Responses' input_tokens for
 * every provider but OpenAI): N is the gateway's estimate (shared/token-estimate.ts: exact
 * o200k/cl100k counts for OpenAI's models, o200k × the provider's factor for others) of the chat
 * body the request becomes for that provider (the kind's `localCount.chatBody`: the translator's own
 * conversion, so the count is of what a request would send), answered in the kind's shape
 * (`{"input_tokens": N}`; `{"object": "response.input_tokens", "input_tokens": N}`) with
 * `Svc-Token-Count: estimate`, so a client can tell it from the provider's own count. Every other
 * request passes (its binding is set).
 * Sources of the answers' shapes: Anthropic API reference, "Count tokens in a Message"; OpenAI API
 * reference, "Responses" → "Get input token counts".
 */
import { estimateChatTokens } from '../../shared/token-estimate.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { answerJson } from '../pipeline/answer.ts';
import { SUSPEND } from '../pipeline/pipeline.ts';

/** Says the count is the gateway's estimate. */
const TOKEN_COUNT_HEADERS: Readonly<Record<string, string>> = { 'svc-token-count': 'estimate' };

/**
 * Nothing when `ctx.binding` is set (the provider is called); else answers the estimate and
 * returns {@link SUSPEND}: the response is complete and no later stage runs.
 * @throws {GatewayError} 400 naming the member the provider could not be sent (as the request
 *   itself would be refused: a server tool, a document it cannot read).
 */
export function countTokensLocally(ctx: RequestContext): void | typeof SUSPEND {
  if (ctx.binding !== null) return;
  const count = ctx.kind.localCount!;
  const tokens = estimateChatTokens(count.chatBody(ctx.body!, ctx.provider!), ctx.provider!, ctx.model!);
  answerJson(ctx, 200, count.answer(tokens), TOKEN_COUNT_HEADERS);
  return SUSPEND;
}
