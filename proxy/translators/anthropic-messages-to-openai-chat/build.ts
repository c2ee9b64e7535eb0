/**
 * The state one Messages → chat request translation shares between its parts (top-level members, messages, tools):
 * the target provider's profile (../shared/openai-chat-target.ts), and the list of removed member paths the
 * translation reports. Members are read with ../shared/request-members.ts; a member is recorded as removed when it
 * is present at all (`recordUnmapped(…, b.removed, isPresent)`): only a null member carries nothing here.
 */
import type { ChatTargetProfile } from '../shared/openai-chat-target.ts';

/** One Messages → chat request translation in progress. */
export interface RequestBuild {
  /** The provider's config name when known (for messages naming it). */
  readonly provider: string | undefined;
  /** What the provider accepts of the members chat completions leave open. */
  readonly profile: ChatTargetProfile;
  /** Paths of the client members removed so far, in the order found (see `TranslatorCall.removed`). */
  readonly removed: string[];
}

/** The name used for the target in error messages: the provider, or "the OpenAI-compatible provider". */
export function targetName(b: RequestBuild): string {
  return b.provider ?? 'the OpenAI-compatible provider';
}
