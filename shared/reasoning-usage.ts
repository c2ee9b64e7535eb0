/**
 * Reasoning tokens an OpenAI-compatible provider's chat `usage` counts in `total_tokens` but not in
 * `completion_tokens`. OpenAI counts reasoning inside `completion_tokens`
 * (`completion_tokens_details.reasoning_tokens` is a part of it) and `total_tokens` is prompt plus
 * completion (OpenAI API reference, "The chat completion object" → `usage`), so nothing is missing
 * there. Some providers speaking the same format leave reasoning out of `completion_tokens` while
 * still billing it as output:
 *
 * - `gemini` (Gemini API, OpenAI compatibility): `completion_tokens` is the answer only
 *   (`candidatesTokenCount`), `total_tokens` adds the thinking (`thoughtsTokenCount`), and "Output
 *   price (including thinking tokens)" (https://ai.google.dev/gemini-api/docs/pricing). The recorded
 *   test/fixtures/providers/gemini/openai-compat-chat-completion-tool-call.json reports prompt 35,
 *   completion 12, total 109. Gemini's total also counts the prompt of its built-in tools
 *   (`toolUsePromptTokenCount`); whether the compatibility layer puts that in `prompt_tokens` is not
 *   documented, so it would be taken as output here, an over-count at worst, never an under-count.
 * - `xai`: "reasoning token consumption will be counted separately from completion_tokens, but will
 *   be counted in the total_tokens" (https://docs.x.ai/docs/key-information/consumption-and-rate-limits),
 *   charged at the output price.
 *
 * Both the proxy's translations (which report the output Anthropic's or OpenAI's way, reasoning
 * included) and admin's usage reader (which costs it) take the difference from here, so one rule
 * decides what is output.
 */

/** Providers (config names) whose chat usage counts reasoning in `total_tokens` only (see the module comment). */
export const REASONING_OUTSIDE_COMPLETION: ReadonlySet<string> = new Set(['gemini', 'xai']);

/** A finite, non-negative count, else 0. */
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The reasoning tokens `usage` (an OpenAI chat `usage` object) left out of `completion_tokens`:
 * `total_tokens − prompt_tokens − completion_tokens` for a provider of
 * {@link REASONING_OUTSIDE_COMPLETION}, else 0 (any other provider's difference, should it have one,
 * is not known to be output). A provider whose total is the sum of the two gives 0, so usage already
 * counted this way is never counted twice.
 * @param provider the provider's config name (`gemini`), or null/undefined when unknown (then 0).
 * @returns tokens (0 when a count is missing or malformed); never throws.
 */
export function uncountedReasoningTokens(provider: string | null | undefined, usage: Record<string, unknown>): number {
  if (!provider || !REASONING_OUTSIDE_COMPLETION.has(provider)) return 0;
  return Math.max(0, count(usage.total_tokens) - count(usage.prompt_tokens) - count(usage.completion_tokens));
}
