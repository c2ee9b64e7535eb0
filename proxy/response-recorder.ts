/**
 * Reads a copy of the response as it passes to the client, for the log record: a non-streamed
 * body is kept (up to a byte cap) and parsed at the end; an SSE stream is parsed event by event
 * (eventsource-parser) and assembled into one `chat.completion` (content, reasoning, tool calls,
 * finish reasons, usage), or kept as the last error event. Memory is bounded by the cap.
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { ChatUsage } from '../shared/chat.ts';

type Json = Record<string, any>;

/** What the recorder learned from a response. */
export interface RecordedResponse {
  /** The JSON body, or the assembled `chat.completion` of a stream; null when unreadable. */
  body: unknown;
  usage: ChatUsage | null;
  /** An error the provider sent (error body of a non-2xx, or an error event mid-stream). */
  error: string | null;
  truncated: boolean;
  /** The body's JSON text as received, when `body` was parsed from it whole (a non-streamed JSON answer); else null. */
  json: string | null;
}

/** Collects a response for the log. Feed it every chunk with {@link push}; call {@link finish} once. */
export class ResponseRecorder {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private truncated = false;
  private parser: EventSourceParser | null = null;
  private assembled: Json | null = null;
  private contentBytes = 0;
  private usage: ChatUsage | null = null;
  private streamError: string | null = null;
  /** Decodes the stream across chunks: a multi-byte character may be split between two. */
  private readonly decoder = new TextDecoder('utf-8');

  /**
   * @param streamed true for an SSE response (`text/event-stream`).
   * @param capBytes most bytes kept of a body or of assembled stream text.
   */
  constructor(
    private readonly streamed: boolean,
    private readonly capBytes: number,
  ) {
    if (streamed) this.parser = createParser({ onEvent: (e) => this.onEvent(e) });
  }

  /** Feeds one chunk of the response as it reached the client. */
  push(chunk: Buffer): void {
    if (this.parser) {
      this.parser.feed(this.decoder.decode(chunk, { stream: true }));
      return;
    }
    if (this.bytes + chunk.length > this.capBytes) {
      this.truncated = true;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  private onEvent(e: EventSourceMessage): void {
    const data = e.data;
    if (data === '[DONE]') return;
    let chunk: Json;
    try {
      chunk = JSON.parse(data) as Json;
    } catch {
      return;
    }
    if (e.event === 'error' || chunk.error) {
      const err = chunk.error ?? chunk;
      this.streamError = typeof err === 'string' ? err : JSON.stringify(err);
      return;
    }
    if (chunk.usage) this.usage = chunk.usage as ChatUsage;
    else if (chunk.x_groq?.usage) this.usage = chunk.x_groq.usage as ChatUsage;
    const a = (this.assembled ??= {
      id: chunk.id,
      object: 'chat.completion',
      created: chunk.created,
      model: chunk.model,
      choices: [],
    });
    if (chunk.system_fingerprint) a.system_fingerprint = chunk.system_fingerprint;
    if (!Array.isArray(chunk.choices)) return;
    for (const c of chunk.choices as Json[]) {
      const index = typeof c.index === 'number' ? c.index : 0;
      let choice = a.choices[index] as Json | undefined;
      if (!choice) {
        choice = { index, message: { role: 'assistant', content: null }, finish_reason: null };
        a.choices[index] = choice;
      }
      const d = (c.delta ?? {}) as Json;
      const msg = choice.message as Json;
      if (typeof d.role === 'string') msg.role = d.role;
      if (typeof d.content === 'string') msg.content = this.append(msg.content, d.content);
      if (typeof d.reasoning_content === 'string') msg.reasoning_content = this.append(msg.reasoning_content, d.reasoning_content);
      if (typeof d.reasoning === 'string') msg.reasoning = this.append(msg.reasoning, d.reasoning);
      if (typeof d.refusal === 'string') msg.refusal = this.append(msg.refusal, d.refusal);
      if (Array.isArray(d.tool_calls)) {
        const calls = (msg.tool_calls ??= []) as Json[];
        for (const tc of d.tool_calls as Json[]) {
          const i = typeof tc.index === 'number' ? tc.index : calls.length;
          const call = (calls[i] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (tc.id) call.id = tc.id;
          if (tc.function?.name) call.function.name = tc.function.name;
          if (typeof tc.function?.arguments === 'string') call.function.arguments = this.append(call.function.arguments, tc.function.arguments);
        }
      }
      if (c.finish_reason) choice.finish_reason = c.finish_reason;
    }
  }

  private append(current: unknown, piece: string): string {
    if (this.contentBytes + piece.length > this.capBytes) {
      this.truncated = true;
      return (current as string) ?? '';
    }
    this.contentBytes += piece.length;
    return ((current as string | null) ?? '') + piece;
  }

  /**
   * Finishes the recording.
   * @param status the HTTP status of the response (non-2xx bodies are kept as the error).
   */
  finish(status: number): RecordedResponse {
    if (this.parser) {
      this.parser.feed(this.decoder.decode());
      const body = this.assembled;
      if (body && this.usage) body.usage = this.usage;
      return { body, usage: this.usage, error: this.streamError, truncated: this.truncated, json: null };
    }
    const text = Buffer.concat(this.chunks, this.bytes).toString('utf8');
    this.chunks = [];
    let body: unknown = null;
    let json: string | null = null;
    if (!this.truncated && text) {
      try {
        body = JSON.parse(text);
        json = text;
      } catch {
        body = { raw: text };
      }
    } else if (this.truncated) {
      body = { truncated: true, bytes_kept: this.bytes };
    }
    const usage = body && typeof body === 'object' && (body as Json).usage ? ((body as Json).usage as ChatUsage) : null;
    const error = status >= 400 ? (text || `status ${status}`).slice(0, 64 * 1024) : null;
    return { body, usage, error, truncated: this.truncated, json };
  }
}
