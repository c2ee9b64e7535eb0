/**
 * The chat-completions body a Messages body would become, for counting its input tokens where the provider has no
 * `count_tokens` endpoint (every provider but Anthropic): the gateway's estimator reads chat bodies, so the Messages
 * body of `POST /v1/messages/count_tokens` is translated first, exactly as a request to that provider would be
 * (same system, messages, tools and thinking echo), without needing `max_tokens`.
 * Source: https://docs.anthropic.com/en/api/messages-count-tokens.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { toChatRequest } from './request.ts';

/**
 * The chat body `provider` (config name; absent: the conservative profile) would receive for a Messages body
 * (untrusted JSON with `model` already the provider's model). Pure: no I/O, nothing recorded.
 * @throws {GatewayError} 400 naming the member, as a translated request would (a server tool, a document the
 *   provider cannot read, a malformed block, …).
 */
export function messagesToChatForCount(body: unknown, provider?: string): ChatCompletionRequest {
  return toChatRequest(body, provider, 'count_tokens').body;
}
