/**
 * OpenAI chat-completions shapes as the gateway sees them: loose enough to carry every member a
 * client sends (unknown members pass through untouched), precise where the gateway reads them.
 * Source: OpenAI API reference, "Create chat completion" (https://platform.openai.com/docs/api-reference/chat/create).
 */

/** One content part of a message (`text`, `image_url`, `input_audio`, `file`, ...). */
export interface ChatContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
  [member: string]: unknown;
}

/** A tool call made by the assistant. `arguments` is a JSON string. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  index?: number;
}

/** One chat message. */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function' | string;
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [member: string]: unknown;
}

/** A tool definition (`{type: "function", function: {name, description, parameters}}`). */
export interface ChatTool {
  type: string;
  function?: { name: string; description?: string; parameters?: unknown; strict?: boolean };
  [member: string]: unknown;
}

/** The request body of `POST /chat/completions`. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  tools?: ChatTool[];
  tool_choice?: unknown;
  user?: string;
  [member: string]: unknown;
}

/** Token usage as OpenAI reports it (counts in tokens). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_write_tokens` and its 1-hour-TTL part `cache_write_1h_tokens` are the gateway's (Anthropic's and Bedrock's cache writes). */
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number; cache_write_tokens?: number; cache_write_1h_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number } | null;
  [member: string]: unknown;
}

/** A non-streamed `chat.completion` response. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: ChatMessage & { reasoning_content?: string; refusal?: string | null };
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  usage?: ChatUsage;
  [member: string]: unknown;
}

/** One `chat.completion.chunk` of a stream. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: Partial<Omit<ChatMessage, 'tool_calls'>> & { reasoning_content?: string | null; tool_calls?: Array<Partial<ChatToolCall> & { index: number }> };
    finish_reason: string | null;
  }>;
  usage?: ChatUsage | null;
  [member: string]: unknown;
}

/** OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null; [member: string]: unknown };
}
