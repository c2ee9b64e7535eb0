/**
 * Writes the OpenAI chat-completions stream for translators from other wire formats (Anthropic, Bedrock):
 * `data: <chat.completion.chunk JSON>\n\n` events, the terminating `data: [DONE]\n\n`, and the final
 * in-stream error event `data: {"error":{...}}\n\n`.
 * Source: OpenAI API reference, "The chat completion chunk object"
 * (https://platform.openai.com/docs/api-reference/chat-streaming/streaming).
 */
import type { ChatCompletionChunk, ChatCompletionRequest, ChatUsage, OpenAIErrorBody } from '../../../shared/chat.ts';
import type { TranslatorCall } from '../types.ts';

/** The stream terminator OpenAI sends after the last chunk. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** One SSE event carrying `value` as JSON: `data: {...}\n\n`. */
export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** A delta of one `chat.completion.chunk` choice. */
export type ChunkDelta = ChatCompletionChunk['choices'][number]['delta'];

/**
 * Whether the client of a chat request asked for the usage chunk (`stream_options: {include_usage: true}`). OpenAI
 * sends it, and a `usage` member on the other chunks, only then (OpenAI API reference, chat create →
 * `stream_options.include_usage`).
 */
export function includesUsage(body: ChatCompletionRequest): boolean {
  return body.stream_options?.include_usage === true;
}

/**
 * Builds the `chat.completion.chunk` events of one streamed response, all with the same `id`, `created`
 * (Unix seconds) and `model`. Each method returns one serialized SSE event (a string ready to write).
 * With `includeUsage` (the client sent `stream_options.include_usage: true`, see {@link includesUsage}) every choice
 * chunk carries `"usage": null`, as OpenAI's do then ("all other chunks will also include a usage field, but with a
 * null value"), and the stream is to end with {@link usage}; without it no chunk has a `usage` member, and the stream
 * has no usage chunk (the translator keeps the usage for the log instead: `TranslatorCall.withheldUsage`).
 */
export class ChunkWriter {
  constructor(
    public id: string,
    public model: string,
    readonly includeUsage = false,
    readonly created: number = Math.floor(Date.now() / 1000),
  ) {}

  /** A chunk with one choice (index 0) carrying `delta` and `finish_reason` (and `usage: null` with {@link includeUsage}). */
  delta(delta: ChunkDelta, finishReason: string | null = null): string {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
    if (this.includeUsage) chunk.usage = null;
    return sseData(chunk);
  }

  /** The first chunk: `delta: {role: "assistant", content: ""}`. */
  role(): string {
    return this.delta({ role: 'assistant', content: '' });
  }

  /** A text delta. */
  content(text: string): string {
    return this.delta({ content: text });
  }

  /** A reasoning ("thinking") text delta, as `delta.reasoning_content` (DeepSeek's member name). */
  reasoning(text: string): string {
    return this.delta({ reasoning_content: text });
  }

  /** The start of tool call number `index` (0-based among this response's tool calls): id, name, empty arguments. */
  toolStart(index: number, id: string, name: string): string {
    return this.delta({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
  }

  /** A fragment of tool call `index`'s JSON arguments. */
  toolArguments(index: number, fragment: string): string {
    return this.delta({ tool_calls: [{ index, function: { arguments: fragment } as { name: string; arguments: string } }] });
  }

  /** The finish chunk: empty delta and `finish_reason` (`stop`, `length`, `tool_calls`, `content_filter`). */
  finish(reason: string): string {
    return this.delta({}, reason);
  }

  /**
   * The end of a stream whose choice chunks are all written: the usage chunk and `data: [DONE]` with
   * {@link includeUsage}; else `data: [DONE]` alone, and `usage` goes to `call.withheldUsage` (what the log record and
   * the cache take the answer's tokens from when the client's bytes have none).
   */
  end(usage: ChatUsage, call: TranslatorCall): string {
    if (this.includeUsage) return this.usage(usage) + SSE_DONE;
    call.withheldUsage = usage;
    return SSE_DONE;
  }

  /** The usage chunk OpenAI sends last (only with `stream_options.include_usage`): `choices: []` and `usage`. */
  usage(usage: ChatUsage): string {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage,
    };
    return sseData(chunk);
  }
}

/** The final in-stream error event: `data: {"error":{"message","type","param","code"}}\n\n` (no `[DONE]` follows). */
export function sseError(error: OpenAIErrorBody): string {
  return sseData(error);
}

/** The final error of a provider stream that ended before its last event (Anthropic `message_stop`, Bedrock `metadata`). */
export function truncatedStreamError(provider: string): OpenAIErrorBody {
  return {
    error: {
      message: `The ${provider} stream ended before the response was complete`,
      type: 'server_error',
      param: null,
      code: 'upstream_stream_truncated',
    },
  };
}

/** The in-stream error for a provider event that is not what its wire format promises (`upstream_bad_event`). */
export function badEventError(message: string): OpenAIErrorBody {
  return { error: { message, type: 'server_error', param: null, code: 'upstream_bad_event' } };
}
