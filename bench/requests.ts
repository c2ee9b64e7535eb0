/**
 * The request bodies the benchmarks send (without `model`, which each target sets): one short
 * conversation, in each dialect's shape. Shared by bench/run.ts, bench/ingest.ts and
 * bench/gc-trace.ts, so their figures are about the same request.
 */

/** OpenAI chat completions: a system and a user message, 64 output tokens at most. */
export const CHAT_BODY = {
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Write one sentence about load testing an HTTP proxy.' },
  ],
  max_tokens: 64,
  temperature: 0,
};

/** {@link CHAT_BODY}'s conversation in Anthropic's Messages shape. */
export const MESSAGES_BODY = {
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: 'Write one sentence about load testing an HTTP proxy.' }],
  max_tokens: 64,
  temperature: 0,
};

/** {@link CHAT_BODY}'s conversation in the OpenAI Responses API's shape. */
export const RESPONSES_BODY = {
  instructions: 'You are a helpful assistant.',
  input: 'Write one sentence about load testing an HTTP proxy.',
  max_output_tokens: 64,
  temperature: 0,
};
