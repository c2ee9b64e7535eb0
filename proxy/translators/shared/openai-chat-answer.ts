/**
 * Reading what an OpenAI-compatible provider answers in a chat completion's `message` or a stream chunk's `delta`,
 * beyond OpenAI's own members: the reasoning text each provider names differently, and content given as parts.
 * Sources: https://platform.openai.com/docs/api-reference/chat/object,
 * https://api-docs.deepseek.com/guides/reasoning_model (`reasoning_content`),
 * https://console.groq.com/docs/reasoning (`reasoning`), https://docs.mistral.ai/capabilities/reasoning/ (`thinking` parts).
 */
import type { ChatContentPart } from '../../../shared/chat.ts';
import { isRecord } from './values.ts';

/** The reasoning text of a message or delta: `reasoning_content` (DeepSeek, xAI, …), else `reasoning` (Groq, OpenRouter, Ollama); '' when neither is a string. */
export function reasoningText(value: Record<string, unknown>): string {
  if (typeof value.reasoning_content === 'string') return value.reasoning_content;
  return typeof value.reasoning === 'string' ? value.reasoning : '';
}

/**
 * Text and reasoning of a `content` given as parts (Mistral's Magistral: `text` parts and `thinking` parts whose
 * `thinking` is itself text parts); parts of other types are reported through `lost` (their index).
 */
export function partsText(parts: unknown[], lost: (index: number) => void): { text: string; reasoning: string } {
  let text = '';
  let reasoning = '';
  parts.forEach((raw, k) => {
    const part = isRecord(raw) ? (raw as ChatContentPart) : null;
    if (part?.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part?.type === 'thinking' && Array.isArray(part.thinking)) {
      for (const inner of part.thinking) if (isRecord(inner) && typeof inner.text === 'string') reasoning += inner.text;
    } else lost(k);
  });
  return { text, reasoning };
}
