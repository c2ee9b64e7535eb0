/**
 * Which tool call of a chat-completions stream a `delta.tool_calls[]` element belongs to, shared by the chat → Messages
 * and chat → Responses stream translators. OpenAI keys a call's deltas by `index`: the first carries `id` and
 * `function.name`, the continuations neither (https://platform.openai.com/docs/api-reference/chat-streaming/streaming).
 * Gemini's OpenAI-compatible stream sends each parallel call whole in a chunk of its own, with its own `id` and
 * `function.name` but no `index` (or index 0 for every call): captures in THU-MAIC/OpenMAIC#1556, noho/dayu-agent#45.
 * So an element under the key of a known call starts another call only when it carries both a name and an id that
 * is not the known call's; an id alone does not, since some providers mint a fresh id on every chunk of one call.
 */

/**
 * Whether a tool call delta under the key of a known call is another call.
 * @param knownId the provider's id of the call known under that key, '' when none came (then never another call).
 * @param id the delta's `id`, '' when absent or not a string.
 * @param fn the delta's `function` object ({} when absent).
 * @returns true when `id` is non-empty and differs from `knownId`, and `fn.name` is a non-empty string.
 */
export function isAnotherToolCall(knownId: string, id: string, fn: Record<string, unknown>): boolean {
  return id !== '' && knownId !== '' && id !== knownId && typeof fn.name === 'string' && fn.name !== '';
}
