/**
 * Anthropic's Messages API (Anthropic API reference, "Messages": https://docs.anthropic.com/en/api/messages)
 * as an endpoint kind: `POST /v1/messages`, `/ai/v1/messages`, `/router/<name>/v1/messages` (the
 * `?beta=true` query the Anthropic SDK's beta client and Claude Code append is ignored), so an
 * Anthropic client needs only its base URL pointed at the gateway. Errors in Anthropic's shape,
 * streams in Anthropic's SSE; a bare `claude-…` model goes to the `anthropic` provider; the client's
 * `anthropic-*` and `x-stainless-*` headers reach Anthropic. The token-limit handlers `fallback`
 * and `truncate` apply (on the body seen as chat; truncate's cuts go back into the text blocks,
 * never into signed thinking); `middle-out` does not (dropping turns would break tool_use/tool_result
 * pairs); managed prompts do not (they hold chat messages).
 */
import type { ProviderName } from '../../shared/providers.ts';
import { anthropicErrorShape } from './anthropic-errors.ts';
import { ANTHROPIC_ERROR_BODY } from './answer-completion.ts';
import { anthropicSse } from './anthropic-sse.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { applyChatViewEdits, messagesChatView } from './messages-chat-view.ts';
import { validateMessagesBody } from './messages-members.ts';
import { messagesReading } from './messages-reading.ts';
import type { EndpointKind } from './types.ts';

/**
 * `anthropic` for a model named as Anthropic names its models (`claude-…`), else null (the model
 * needs its `<provider>/` prefix).
 */
export function anthropicOfBareModel(model: string): ProviderName | null {
  return model.startsWith('claude-') ? 'anthropic' : null;
}

/** Anthropic Messages. Routers choose its providers from their `chat` pool, as for every chat dialect. */
export const messages: EndpointKind = {
  name: 'messages',
  dialect: ENDPOINT_DIALECTS.messages,
  paths: ['/v1/messages', '/ai/v1/messages'],
  routerTail: '/v1/messages',
  routerLabel: 'router:messages',
  loadBalance: 'chat',
  validate: validateMessagesBody,
  errorBody: anthropicErrorShape,
  framing: anthropicSse,
  reading: messagesReading,
  // middle-out removes whole turns, which would break tool_use/tool_result pairs and signed thinking.
  tokenLimits: { handlers: ['truncate', 'fallback'], chatView: messagesChatView, fromChatView: applyChatViewEdits },
  // Anthropic's streams have no closing sentinel: a whole answer's last event is `message_stop`.
  completion: { finalEvents: new Set(['message_stop']), errorBody: ANTHROPIC_ERROR_BODY },
  prompts: false,
  providerOfBareModel: anthropicOfBareModel,
  forwardsClientHeaders: true,
  localCount: null,
  logged: true,
};
