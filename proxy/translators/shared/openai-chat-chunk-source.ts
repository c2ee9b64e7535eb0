/**
 * The reading side of a stream translator whose source is a chat-completions stream (`chat.completion.chunk` SSE
 * from an OpenAI-compatible provider), shared by the chat → Messages and chat → Responses stream translators:
 * `[DONE]` completes; a provider error inside the stream (Groq's `event: error`, OpenAI's `data: {"error": …}`) or
 * a malformed event fails; otherwise the chunk's `usage` is kept and choice 0's `delta` and `finish_reason` are
 * handed to the translator. A source that ends after a finish reason but without `[DONE]` completes; one that ends
 * before any fails as truncated. What is written for each is the translator's.
 * Source: https://platform.openai.com/docs/api-reference/chat-streaming/streaming.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { TranslatorCall } from '../types.ts';
import { providerErrorText } from './provider-errors.ts';
import { SseTranslatorStream } from './translator-stream.ts';
import { isRecord } from './values.ts';

/** A stream translator reading chat chunks (see the module comment); one instance per response. */
export abstract class ChatChunkSourceStream extends SseTranslatorStream {
  /** The first (or, as the translator keeps it, latest) `finish_reason` of choice 0; undefined until one came. */
  protected finishReason: unknown = undefined;
  /** The latest `usage` a chunk carried (providers send it in the last chunk); undefined until one came. */
  protected usage: unknown = undefined;

  /**
   * @param call the translated request (`provider` names the source in error messages).
   * @param serverErrorType the error type or code of the client's dialect for a failure of the provider's
   *   (`api_error` for Messages, `server_error` for Responses).
   */
  constructor(
    protected readonly call: TranslatorCall,
    private readonly serverErrorType: string,
  ) {
    super();
  }

  /** The first chunk's `id`, `model` (and any usage it carries) are known: open the client's stream, once. */
  protected abstract start(data: Record<string, unknown>): void;
  /** Choice 0's `delta`. */
  protected abstract onDelta(delta: Record<string, unknown>): void;
  /** Choice 0's `finish_reason` (every one that comes; the translator keeps {@link finishReason} as it needs). */
  protected abstract onFinish(finishReason: string, choice: Record<string, unknown>): void;
  /** `[DONE]`, or the end of a source that gave a finish reason: write the end of the client's stream. */
  protected abstract complete(): void;
  /** End the client's stream with an error of `type` (the dialect's error type or code) and `message`. */
  protected abstract fail(type: string, message: string): void;
  /** End the client's stream with the provider's error object (the `error` member, or Groq's event body). */
  protected abstract failWithError(error: Record<string, unknown>): void;

  protected override onEvent(event: EventSourceMessage): void {
    if (this.state !== 'open') return;
    if (event.event === 'error') return this.failWith(event.data);
    if (event.data === '[DONE]') return this.complete();
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = undefined;
    }
    if (!isRecord(data)) return this.fail(this.serverErrorType, `The ${this.providerName()} sent a malformed stream event`);
    if (isRecord(data.error)) return this.failWithError(data.error);
    this.start(data);
    if (isRecord(data.usage)) this.usage = data.usage;
    const choices = Array.isArray(data.choices) ? data.choices : [];
    const choice = choices.find((c) => isRecord(c) && (c.index === 0 || c.index === undefined));
    if (!isRecord(choice)) return;
    if (isRecord(choice.delta)) this.onDelta(choice.delta);
    if (typeof choice.finish_reason === 'string') this.onFinish(choice.finish_reason, choice);
  }

  protected override onEnd(): void {
    if (this.finishReason !== undefined) this.complete();
    else this.fail(this.serverErrorType, `The ${this.providerName()} stream ended before the response was complete`);
  }

  /** The provider's config name, or "provider", for error messages. */
  protected providerName(): string {
    return this.call.provider ?? 'provider';
  }

  /** An `event: error` body: the provider's error object when it is JSON, else its text (credentials redacted, 500 characters at most). */
  private failWith(data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      parsed = undefined;
    }
    if (isRecord(parsed)) return this.failWithError(isRecord(parsed.error) ? parsed.error : parsed);
    // Redacted whole, then cut: cut first, a credential straddling the cut would keep its prefix.
    const text = data.trim();
    this.fail(this.serverErrorType, text ? providerErrorText(text, this.call).slice(0, 500) : `The ${this.providerName()} reported an error mid-stream`);
  }
}
