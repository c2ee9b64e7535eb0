/**
 * OpenAI's `usage` object built from the prompt / completion / cache split other wire formats report.
 * Source: OpenAI API reference, "The chat completion object" `usage` (https://platform.openai.com/docs/api-reference/chat/object).
 */
import type { ChatUsage } from '../../../shared/chat.ts';

/**
 * OpenAI usage (all counts in tokens): prompt_tokens = input + cacheRead + cacheWrite, completion_tokens = output,
 * total_tokens = `total` when the provider reports one, else prompt + completion, and
 * `prompt_tokens_details: {cached_tokens: cacheRead, cache_write_tokens: cacheWrite}`.
 */
export function openAIUsage(input: number, output: number, cacheRead: number, cacheWrite: number, total?: number): ChatUsage {
  const prompt = input + cacheRead + cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: total ?? prompt + output,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  };
}
