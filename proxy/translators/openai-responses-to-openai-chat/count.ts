/**
 * The chat-completions body a Responses body would become, for counting its input tokens where the provider has no
 * `input_tokens` endpoint (every provider but OpenAI and Azure): the gateway's estimator (shared/token-estimate.ts)
 * reads chat bodies, so the body of `POST /responses/input_tokens` is translated first, exactly as a request to that
 * provider would be (same system message, conversation, tools), without output members or `stream`.
 * Source: https://platform.openai.com/docs/api-reference/responses/input-tokens.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { toChatRequest } from './request.ts';

/**
 * The chat body `provider` (config name; absent: the conservative profile) would receive for a Responses body
 * (untrusted JSON with `model` already the provider's model). Pure: no I/O, nothing recorded.
 * @throws {GatewayError} 400 naming the member, as a translated request would (`previous_response_id`, an
 *   `item_reference`, a file id, a part the provider cannot read, a malformed item, …).
 */
export function responsesToChatForCount(body: unknown, provider?: string): ChatCompletionRequest {
  return toChatRequest(body, provider, 'input_tokens').body;
}
