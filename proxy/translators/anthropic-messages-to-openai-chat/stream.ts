/**
 * A chat-completions stream (`chat.completion.chunk` SSE) as a Messages stream, event by event as the chunks arrive.
 *
 * Output, each event `event: <type>\ndata: <json>\n\n`:
 * 1. `message_start` at the provider's first chunk: id, model (as in ./response.ts), empty content, and usage 0
 *    (OpenAI-compatible providers report usage only at the end; a usage the first chunk already carries is used);
 * 2. content blocks, one at a time, indices from 0 in order: `thinking` (from `reasoning_content` / `reasoning`
 *    deltas, as `thinking_delta`), `text` (from `content` and `refusal` deltas, as `text_delta`), `tool_use` (one per
 *    tool call, with the provider's id or `toolu_<request id>_<index>`, `input: {}`; argument fragments as
 *    `input_json_delta` `partial_json`, unparsed). A block of another kind closes the open one
 *    (`content_block_stop`); the finish chunk closes the last. A tool call is known by its `index` (by its position
 *    in the chunk when there is none), and a delta carrying a `function.name` and a non-empty `id` other than the
 *    call's under that key is another call (../shared/chat-tool-call-identity.ts): Gemini sends each parallel call
 *    whole in a chunk of its own, without index or with index 0 for each (captures in THU-MAIC/OpenMAIC#1556,
 *    noho/dayu-agent#45); an id alone does not, as some providers mint one per chunk. Anthropic's stream never
 *    interleaves blocks (no delta after a block's `content_block_stop`; Claude Code finalises a block there), while
 *    OpenAI's may interleave two calls' fragments by index. So one tool block streams at a time, once its name has
 *    arrived: a call that starts while another's block is open is held (its fragments kept) until that one can take
 *    no more, i.e. another call replaced it under its key (then the first held call streams in its turn), or the
 *    finish chunk or the end came (then the held calls are written whole, in order). A single call, and Gemini's
 *    calls, stream as they come; of OpenAI's parallel calls, the second and later arrive at the finish. Text or
 *    reasoning arriving while a tool block is open (vLLM/Qwen send e.g. "\n" content between argument fragments)
 *    does not stop it, since the call may get more fragments: it is kept, in order, and written as its own blocks
 *    once that block stops (a new call replaced it, or the finish or the end came), before any held call. Only a
 *    fragment after the finish, for a call whose block has stopped, is recorded as removed.
 * 3. Gemini thought signatures (tool calls' and the message's `extra_content.google.thought_signature`) arrive with
 *    the tool calls, after any reasoning: they are emitted last, in a `thinking` block of their own (empty text, a
 *    `signature_delta` with the carried signature, see ./carried-reasoning.ts), so the client sends them back.
 * 4. `message_delta` with `stop_reason`, `stop_sequence` (as in ./response.ts) and the final usage, including
 *    `input_tokens` and the cache counts (Anthropic's API and SDK take them from `message_delta`), then
 *    `message_stop`. These wait for `[DONE]` (or the end of the stream after a finish reason), since the usage chunk
 *    comes after the finish chunk.
 * A provider error inside the stream (Groq's `event: error`, OpenAI's `data: {"error": …}`), a malformed event, or a
 * stream that ends before any finish reason ends the output with Anthropic's `error` event
 * (`{"type":"error","error":{"type","message"}}`) and no `message_stop`, preceded by the reasoning and text kept while
 * a tool block was open, as blocks of their own after that block stops (also before an event past the parser's bound
 * fails the translation); anything after is ignored.
 * Sources: https://docs.anthropic.com/en/docs/build-with-claude/streaming,
 * https://platform.openai.com/docs/api-reference/chat-streaming/streaming.
 */
import type { Transform } from 'node:stream';
import { carryMessageSignature, carryToolCallSignature, encodeCarried, geminiThoughtSignature, isEmptyCarried, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { isAnotherToolCall } from '../shared/chat-tool-call-identity.ts';
import { partsText, reasoningText } from '../shared/openai-chat-answer.ts';
import { ChatChunkSourceStream } from '../shared/openai-chat-chunk-source.ts';
import { providerErrorText } from '../shared/provider-errors.ts';
import { isRecord } from '../shared/values.ts';
import type { TranslatorCall } from '../types.ts';
import { anthropicErrorType, anthropicSseEvent } from '../wire/anthropic-messages.ts';
import { messageId, messagesUsage, stopInfo, toolUseId, zeroUsage } from './response.ts';

/** One tool call of the stream. */
interface ToolState {
  /** The key it came under: the provider's tool call index, or its position in the chunk (for a generated id). */
  key: number;
  /** Its content block index; -1 until its block started. */
  block: number;
  /** The provider's first id, '' until one came: a different one with a name under the same key is another call. */
  providerId: string;
  /** The `tool_use` id, once the block started. */
  id: string;
  name: string;
  /** Argument fragments received before the block could start. */
  pending: string;
  /** Gemini's thought signature of the call, when it came before the block started. */
  signature: string | undefined;
  /** Its block stopped: it takes no more fragments. */
  closed: boolean;
}

/** Chat chunk SSE bytes in, Messages SSE bytes out; one instance per response. */
class MessagesStream extends ChatChunkSourceStream {
  /** The call under each key (the latest, when a new id replaced one). */
  private readonly tools = new Map<number, ToolState>();
  /** Calls whose block has not started (name not yet come, or another tool block open), in order of arrival. */
  private readonly held: ToolState[] = [];
  /** The call whose block is the open one, or null. */
  private live: ToolState | null = null;
  /** Reasoning and text that came while {@link live} was open, in order (consecutive ones of a kind merged). */
  private readonly deferred: { kind: 'thinking' | 'text'; text: string }[] = [];
  private readonly carried: CarriedReasoning = {};
  private started = false;
  private nextBlock = 0;
  /** The open content block: its index and kind, or null. */
  private openBlock: { index: number; kind: 'thinking' | 'text' | 'tool' } | null = null;
  private toolBlocks = 0;
  private finishChoice: Record<string, unknown> = {};
  private refused = false;

  constructor(call: TranslatorCall) {
    super(call, 'api_error');
  }

  protected override onFinish(finishReason: string, choice: Record<string, unknown>): void {
    this.finishReason = finishReason;
    this.finishChoice = choice;
    this.flushHeld();
  }

  protected override start(data: Record<string, unknown>): void {
    if (this.started) return;
    this.started = true;
    const model = typeof data.model === 'string' && data.model !== '' ? data.model : this.call.body.model;
    const message = {
      id: messageId(data.id, this.call.requestId),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: isRecord(data.usage) ? messagesUsage(data.usage, this.call.provider) : zeroUsage(),
    };
    this.out += anthropicSseEvent('message_start', { type: 'message_start', message });
  }

  protected override onDelta(delta: Record<string, unknown>): void {
    const reasoning = reasoningText(delta);
    if (reasoning !== '') this.appendThinking(reasoning);
    if (typeof delta.content === 'string' && delta.content !== '') this.appendText(delta.content);
    else if (Array.isArray(delta.content)) {
      const parts = partsText(delta.content, (k) => this.call.removed?.push(`response.choices[0].delta.content[${k}]`));
      if (parts.reasoning !== '') this.appendThinking(parts.reasoning);
      if (parts.text !== '') this.appendText(parts.text);
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.refused = true;
      this.appendText(delta.refusal);
    }
    const sig = geminiThoughtSignature(delta);
    if (sig) carryMessageSignature(this.carried, sig);
    if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((tc, position) => isRecord(tc) && this.onToolDelta(tc, position));
  }

  private appendThinking(text: string): void {
    if (this.live !== null) return this.defer('thinking', text);
    if (this.openBlock?.kind !== 'thinking') this.startBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    this.delta(this.openBlock!.index, { type: 'thinking_delta', thinking: text });
  }

  private appendText(text: string): void {
    if (this.live !== null) return this.defer('text', text);
    if (this.openBlock?.kind !== 'text') this.startBlock('text', { type: 'text', text: '' });
    this.delta(this.openBlock!.index, { type: 'text_delta', text });
  }

  /** Keeps reasoning or text that came while a tool block is open, for {@link flushDeferred}. */
  private defer(kind: 'thinking' | 'text', text: string): void {
    const last = this.deferred.at(-1);
    if (last?.kind === kind) last.text += text;
    else this.deferred.push({ kind, text });
  }

  /** Writes the kept reasoning and text as blocks of their own, once no tool block is open. */
  private flushDeferred(): void {
    for (const { kind, text } of this.deferred) {
      if (kind === 'thinking') this.appendThinking(text);
      else this.appendText(text);
    }
    this.deferred.length = 0;
  }

  private onToolDelta(tc: Record<string, unknown>, position: number): void {
    const key = Number.isInteger(tc.index) ? (tc.index as number) : position;
    const id = typeof tc.id === 'string' ? tc.id : '';
    const fn = isRecord(tc.function) ? tc.function : {};
    let tool = this.tools.get(key);
    if (!tool || isAnotherToolCall(tool.providerId, id, fn)) {
      // The call it replaces under this key can take no more fragments: its block, if open, can stop.
      if (tool !== undefined && tool === this.live) {
        this.closeBlock();
        this.flushDeferred();
      }
      tool = { key, block: -1, providerId: '', id: '', name: '', pending: '', signature: undefined, closed: false };
      this.tools.set(key, tool);
      this.held.push(tool);
    }
    if (tool.block === -1) {
      // The first id stays the call's: a provider minting one per chunk does not rename it.
      if (tool.providerId === '') tool.providerId = id;
      if (typeof fn.name === 'string' && fn.name !== '') tool.name = fn.name;
    }
    const sig = geminiThoughtSignature(tc);
    if (sig) {
      if (tool.block === -1) tool.signature = sig;
      else carryToolCallSignature(this.carried, tool.id, sig);
    }
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    if (args !== '') {
      if (tool.closed) this.call.removed?.push(`response.choices[0].delta.tool_calls[${position}].function.arguments`);
      else if (tool.block === -1) tool.pending += args;
      else this.delta(tool.block, { type: 'input_json_delta', partial_json: args });
    }
    // The first held call streams once no tool block is open and its name has come; later ones wait their turn.
    const next = this.held[0];
    if (this.live === null && next !== undefined && next.name !== '') this.startTool(this.held.shift()!);
  }

  /** Starts `tool`'s block (closing the open one) with the fragments it got so far; it is then the open block. */
  private startTool(tool: ToolState): void {
    tool.id = toolUseId(tool.providerId, this.call.requestId, tool.key);
    this.toolBlocks++;
    tool.block = this.startBlock('tool', { type: 'tool_use', id: tool.id, name: tool.name, input: {} });
    this.live = tool;
    if (tool.signature) carryToolCallSignature(this.carried, tool.id, tool.signature);
    if (tool.pending !== '') {
      this.delta(tool.block, { type: 'input_json_delta', partial_json: tool.pending });
      tool.pending = '';
    }
  }

  /**
   * No call takes more fragments (finish or end): the open block stops, the reasoning and text kept while it was open
   * are written, then each held call whole, in order.
   */
  private flushHeld(): void {
    this.closeBlock();
    this.flushDeferred();
    for (const tool of this.held) {
      this.startTool(tool);
      this.closeBlock();
    }
    this.held.length = 0;
  }

  /** Closes the open block and starts a new one of `kind`; returns its index. */
  private startBlock(kind: 'thinking' | 'text' | 'tool', block: Record<string, unknown>): number {
    this.closeBlock();
    const index = this.nextBlock++;
    this.out += anthropicSseEvent('content_block_start', { type: 'content_block_start', index, content_block: block });
    this.openBlock = { index, kind };
    return index;
  }

  private delta(index: number, delta: Record<string, unknown>): void {
    this.out += anthropicSseEvent('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  private closeBlock(): void {
    if (!this.openBlock) return;
    this.out += anthropicSseEvent('content_block_stop', { type: 'content_block_stop', index: this.openBlock.index });
    this.openBlock = null;
    if (this.live) {
      this.live.closed = true;
      this.live = null;
    }
  }

  /** The end of a complete answer: pending tool calls, carried signatures, `message_delta`, `message_stop`. */
  protected override complete(): void {
    this.start({});
    this.flushHeld();
    if (!isEmptyCarried(this.carried)) {
      const index = this.startBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      this.delta(index, { type: 'signature_delta', signature: encodeCarried(this.carried) });
      this.closeBlock();
    }
    const body = this.call.body as unknown as Record<string, unknown>;
    const stop = stopInfo(this.finishReason, this.finishChoice, this.toolBlocks > 0, this.refused, body.stop_sequences);
    this.out += anthropicSseEvent('message_delta', { type: 'message_delta', delta: stop, usage: messagesUsage(this.usage, this.call.provider) });
    this.out += anthropicSseEvent('message_stop', { type: 'message_stop' });
    this.state = 'done';
  }

  /**
   * The final `error` event. Reasoning and text kept while a tool block was open go out first as blocks of their
   * own (they had reached the client at once before they were kept, and no fragment can come now): the tool block
   * stops, the kept blocks start and stop. Held calls whose block never started stay unwritten, as before.
   */
  protected override fail(type: string, message: string): void {
    this.onFailing();
    this.out += anthropicSseEvent('error', { type: 'error', error: { type, message } });
    this.state = 'failed';
  }

  /** Writes the reasoning and text kept while a tool block was open (see {@link fail}); also before an oversized event's error. */
  protected override onFailing(): void {
    if (this.deferred.length === 0) return;
    this.closeBlock();
    this.flushDeferred();
    this.closeBlock();
  }

  /** An error object of the provider (`{message, type, code, status_code?}`) as the final `error` event. */
  protected override failWithError(error: Record<string, unknown>): void {
    const status = typeof error.status_code === 'number' ? error.status_code : typeof error.status === 'number' ? error.status : undefined;
    const neutral = typeof error.type === 'string' ? error.type : 'server_error';
    const message = typeof error.message === 'string' && error.message !== '' ? providerErrorText(error.message, this.call) : `The ${this.call.provider ?? 'provider'} reported an error mid-stream`;
    this.fail(anthropicErrorType(neutral, status), message);
  }

}

/**
 * A fresh transform from a chat-completions SSE stream (bytes, split anywhere, even inside a UTF-8 character) to a
 * Messages SSE stream, emitting the events of each input piece as soon as it arrives (see the module comment for the
 * event sequence). Response members it had to drop are pushed to `call.removed` when present.
 */
export function createMessagesStreamTranslator(call: TranslatorCall): Transform {
  return new MessagesStream(call);
}
