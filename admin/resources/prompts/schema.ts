/** Request bodies of the legacy `/v1/prompt` routes (superstruct). */
import { any, array, optional, record, string, type } from 'superstruct';
import { sizedText, Text } from '../../validation.ts';

/** A chat request used as a legacy prompt template: `{model?, messages: [{role, ...}], ...}`. */
export const ChatPrompt = type({ model: optional(string()), messages: array(type({ role: string() })) });

/** Body of `POST /v1/prompt/create`. */
export const CreatePromptBody = type({
  userDefinedId: sizedText(256),
  prompt: ChatPrompt,
  metadata: record(string(), any()),
});

/** Body of `POST /v1/prompt/version/{promptVersionId}/promote`. */
export const PromoteBody = type({ previousProductionVersionId: Text });
