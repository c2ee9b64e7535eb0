/**
 * The identity translators: the provider speaks the client's dialect (OpenAI, Azure, the OpenAI-compatible
 * providers for `openai-chat` and `openai-embeddings`; Anthropic for `anthropic-messages`; OpenAI and Azure for
 * `openai-responses`). The request is the
 * client's own bytes with the model spliced in, when the gateway changed nothing else; responses and streams go to
 * the client untouched, so the passthrough path allocates nothing here.
 */
import type { Dialect, IdentityTranslator, TranslatorCall } from './types.ts';

/** The client's bytes with the model spliced (`call.rawBody`) when present, else `call.body` serialized as UTF-8 JSON. */
function sendAsIs(call: TranslatorCall): Buffer {
  return call.rawBody ?? Buffer.from(JSON.stringify(call.body));
}

/** The identity translator of a dialect that is also a wire format (`dialect` → the wire format of the same name). */
function identityTranslator(dialect: Dialect): IdentityTranslator {
  return { dialect, wireFormat: dialect, identity: true, translateRequest: sendAsIs };
}

/** `openai-chat` → `openai-chat`. */
export const openAIChatIdentity: IdentityTranslator = identityTranslator('openai-chat');

/** `openai-embeddings` → `openai-embeddings`. */
export const openAIEmbeddingsIdentity: IdentityTranslator = identityTranslator('openai-embeddings');

/** `anthropic-messages` → `anthropic-messages` (a Messages client to Anthropic: its bytes as sent, with the model spliced when it changed). */
export const anthropicMessagesIdentity: IdentityTranslator = identityTranslator('anthropic-messages');

/** `openai-responses` → `openai-responses` (a Responses client to OpenAI or Azure: its bytes as sent, with the model spliced when it changed). */
export const openAIResponsesIdentity: IdentityTranslator = identityTranslator('openai-responses');
