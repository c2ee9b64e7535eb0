/**
 * Turn merging for wire formats whose conversation must alternate user and assistant turns (Anthropic's
 * Messages, Bedrock's Converse), while an OpenAI chat history may hold several messages of one role in a
 * row (a user message after tool results, parallel tool results).
 */

/**
 * Appends content blocks as a turn of `role`, merging them into the previous turn when it has the same
 * role. Empty `blocks` add nothing. Mutates `messages` (and the previous turn's `content`).
 */
export function appendTurn<B>(messages: Array<{ role: 'user' | 'assistant'; content: B[] }>, role: 'user' | 'assistant', blocks: B[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}
