/**
 * The refusals every translator from chat completions shares: the members only OpenAI can honour
 * (proxy/translators/shared/openai-chat-request.ts `openAIOnlyMembers`), as rows of a translator test's table of
 * refused requests.
 */

/** A refused request: what the test names it, the members added to the base request, the `param` the 400 names. */
export type RefusedRow = [name: string, extra: Record<string, unknown>, param: string];

/** The requests `openAIOnlyMembers` refuses, for any target provider: each a 400 naming the member. */
export const OPENAI_ONLY_REFUSALS: readonly RefusedRow[] = [
  ['logprobs: true', { logprobs: true, top_logprobs: 3 }, 'logprobs'],
  ['n > 1', { n: 2 }, 'n'],
  ['audio output', { audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
  ['modalities with audio', { modalities: ['text', 'audio'] }, 'modalities'],
  ['the deprecated functions', { functions: [{ name: 'f', parameters: {} }] }, 'functions'],
  ['the deprecated function_call', { function_call: 'auto' }, 'function_call'],
  ['web_search_options', { web_search_options: {} }, 'web_search_options'],
];
