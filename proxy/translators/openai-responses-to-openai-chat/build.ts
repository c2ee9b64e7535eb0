/**
 * The state one Responses → chat request translation shares between its parts (top-level members, input items,
 * content parts, tools): the target provider's profile, the request's tool names, and the removed member paths.
 */
import type { ChatTargetProfile } from '../shared/openai-chat-target.ts';
import type { MessageOrigin } from './message-origins.ts';
import type { ToolNames } from './tool-names.ts';

/** One Responses → chat request translation in progress. */
export interface RequestBuild {
  /** The provider's config name when known (for messages naming it). */
  readonly provider: string | undefined;
  /** What the provider accepts of the members chat completions leave open. */
  readonly profile: ChatTargetProfile;
  /** The request's tool names, both ways (./tool-names.ts). */
  readonly names: ToolNames;
  /** Paths of the client members removed so far, in the order found (see `TranslatorCall.removed`). */
  readonly removed: string[];
  /** Where each chat message came from, by index (./message-origins.ts). */
  readonly origins: MessageOrigin[];
}

/** The name used for the target in error messages: the provider, or "the OpenAI-compatible provider". */
export function targetName(b: RequestBuild): string {
  return b.provider ?? 'the OpenAI-compatible provider';
}
