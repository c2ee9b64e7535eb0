/**
 * A chat-completions stream (`chat.completion.chunk` SSE) as a Responses stream, event by event as the chunks arrive.
 *
 * Output, each event `event: <type>\ndata: <json>\n\n`, the JSON carrying `type` and a `sequence_number` counting
 * from 0:
 * 1. `response.created`, then `response.in_progress`, at the provider's first chunk: the response object
 *    (./echo.ts) with status `in_progress`, no output, usage null;
 * 2. output items, one after another, output indices from 0 (ids and shapes as in ./output.ts):
 *    - reasoning (from `reasoning_content` / `reasoning` deltas): `response.output_item.added`,
 *      `response.reasoning_summary_part.added` (summary index 0), `response.reasoning_summary_text.delta` per delta,
 *      then `response.reasoning_summary_text.done`, `response.reasoning_summary_part.done`, `response.output_item.done`;
 *    - message (from `content` and `refusal` deltas): `response.output_item.added`, `response.content_part.added`,
 *      `response.output_text.delta` per delta (`response.refusal.delta` in a `refusal` part), then
 *      `response.output_text.done` (`response.refusal.done`), `response.content_part.done`, `response.output_item.done`;
 *    - one function call per chat tool call, started when its name has arrived: `response.output_item.added`
 *      (name as the client knows it, `call_id`, `arguments: ""`), `response.function_call_arguments.delta` per argument
 *      fragment, then `response.function_call_arguments.done` and `response.output_item.done`. A call of a custom tool
 *      is a `custom_tool_call` item whose input is sent whole at its end (`response.custom_tool_call_input.delta` and
 *      `.done`), since the fragments are of the JSON arguments the tool's input is wrapped in.
 *    Reasoning or message output after another item closes it; tool calls stay open until the finish chunk, so
 *    fragments a provider interleaves between parallel calls all reach their items. A tool call is known by its
 *    `index` (by its position in the chunk when there is none), and a delta carrying a `function.name` and a non-empty
 *    `id` other than the call's under that key is another call (../shared/chat-tool-call-identity.ts): Gemini sends
 *    each parallel call whole in a chunk of its own, without index or with index 0 for each (captures in
 *    THU-MAIC/OpenMAIC#1556, noho/dayu-agent#45); an id alone does not, as some providers mint one per chunk.
 *    Reasoning, text or refusal arriving while a call is open (vLLM/Qwen send e.g. "\n" content between argument
 *    fragments) does not close it, since the call may get more fragments and no event may follow an item's `.done`:
 *    it is kept, in order, and written as items of its own once no open call can take more, i.e. each was replaced
 *    under its key by another call (then before that call's item) or the finish chunk or the end came (then after
 *    the calls). Only a fragment after the finish chunk, for a call already done, is recorded as removed. When Gemini
 *    sent thought signatures, a last reasoning item without summary carries them in `encrypted_content`.
 * 3. `response.completed` (or `response.incomplete` for finish reason `length` / `content_filter`) with the whole
 *    response object and its usage, after `[DONE]` (or the end of the stream after a finish reason), since the usage
 *    chunk follows the finish chunk.
 * A provider error inside the stream (Groq's `event: error`, OpenAI's `data: {"error": …}`), a malformed event, or a
 * stream that ends before any finish reason ends the output with `response.failed`: the response with status `failed`,
 * `error: {code, message}` (the provider's error code, else `rate_limit_exceeded` for rate limits and
 * `server_error` otherwise) and the items completed so far; output kept while a call was open is written first as
 * items done, after the open calls closed as `incomplete` (also before an event past the parser's bound fails the
 * translation). Anything after is ignored.
 * Sources: https://platform.openai.com/docs/api-reference/responses-streaming,
 * https://platform.openai.com/docs/api-reference/chat-streaming/streaming.
 */
import type { Transform } from 'node:stream';
import { carryMessageSignature, carryToolCallSignature, encodeCarried, geminiThoughtSignature, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { isAnotherToolCall } from '../shared/chat-tool-call-identity.ts';
import { partsText, reasoningText } from '../shared/openai-chat-answer.ts';
import { ChatChunkSourceStream } from '../shared/openai-chat-chunk-source.ts';
import { providerErrorText } from '../shared/provider-errors.ts';
import { isRecord } from '../shared/values.ts';
import type { ToolOrigin, TranslatorCall } from '../types.ts';
import { responseEcho, responseObject, type ResponseEcho, type ResponseState } from './echo.ts';
import { callIdOf, customInput, finishStatus, itemId, messageItem, outputTextPart, reasoningItem, refusalPart, responseIdOf, responsesUsage, toolCallItem } from './output.ts';
import { nowSeconds } from './response.ts';
import { toolNamesOf, toolOrigin, type ToolNameMap } from './tool-names.ts';

/** The open reasoning item. */
interface ReasoningState {
  kind: 'reasoning';
  index: number;
  id: string;
  text: string;
}

/** The open message item and its open content part. */
interface MessageState {
  kind: 'message';
  index: number;
  id: string;
  parts: Record<string, unknown>[];
  part: { kind: 'text' | 'refusal'; text: string } | null;
}

/** One tool call of the stream, by the provider's tool call index (or position), and id when it changes under one. */
interface ToolState {
  /** The provider's tool call index (its position in the chunk when there is none): the key in the map of calls. */
  key: number;
  /** Its output index; -1 until its name has arrived and the item started. */
  index: number;
  id: string;
  /** The provider's first id, '' until one came: a different one with a name under the same key is another call. */
  providerId: string;
  name: string;
  origin: ToolOrigin;
  callId: string;
  args: string;
  /** Argument fragments received before the item could start. */
  pending: string;
  /** Gemini's thought signature of the call, when it came before the item started. */
  signature: string | undefined;
  closed: boolean;
}

/** Chat chunk SSE bytes in, Responses SSE bytes out; one instance per response. */
class ResponsesStream extends ChatChunkSourceStream {
  private readonly echo: ResponseEcho;
  private readonly toolNames: ToolNameMap;
  private readonly tools = new Map<number, ToolState>();
  private readonly carried: CarriedReasoning = {};
  private readonly output: Record<string, unknown>[] = [];
  private readonly response: ResponseState;
  private started = false;
  private sequence = 0;
  private nextIndex = 0;
  private current: ReasoningState | MessageState | null = null;
  private openTools: ToolState[] = [];
  /** Reasoning, text and refusal that came while a call was open, in order (consecutive ones of a kind merged). */
  private readonly deferred: { kind: 'reasoning' | 'text' | 'refusal'; text: string }[] = [];

  constructor(call: TranslatorCall) {
    super(call, 'server_error');
    this.echo = responseEcho(call.body);
    this.toolNames = call.toolNames ?? toolNamesOf((call.body as unknown as Record<string, unknown>).tools).bySent;
    this.response = {
      id: responseIdOf(call.requestId),
      createdAt: 0,
      status: 'in_progress',
      completedAt: null,
      error: null,
      incomplete: null,
      model: call.body.model,
      output: [],
      usage: null,
    };
  }

  /**
   * One event. Callers write each payload as a plain literal (`item_id`, `output_index` first), not as a spread of a
   * shared `{item_id, output_index}` object: with the spread (`{ ...at(item), delta }`), a translated stream at 500
   * streams/s alone (store on or off) had ~0.9 MB promoted to the old generation per young-generation collection,
   * so a major collection (a 15–30 ms stall) came every 1–3 s; with literals, ~30 KB per collection.
   */
  private send(type: string, payload: Record<string, unknown>): void {
    this.out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }

  protected override onFinish(finishReason: string): void {
    if (this.finishReason !== undefined) return;
    this.finishReason = finishReason;
    this.closeAll();
  }

  /** `response.created` and `response.in_progress`, once, at the first chunk. */
  protected override start(data: Record<string, unknown>): void {
    if (this.started) return;
    this.started = true;
    this.response.createdAt = typeof data.created === 'number' ? data.created : nowSeconds();
    if (typeof data.model === 'string' && data.model !== '') this.response.model = data.model;
    // One serialization for both events (the echoed tools can be tens of kilobytes, as Codex's are).
    const response = JSON.stringify(responseObject(this.response, this.echo));
    for (const type of ['response.created', 'response.in_progress']) {
      this.out += `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.sequence++},"response":${response}}\n\n`;
    }
  }

  protected override onDelta(delta: Record<string, unknown>): void {
    const reasoning = reasoningText(delta);
    if (reasoning !== '') this.appendReasoning(reasoning);
    if (typeof delta.content === 'string' && delta.content !== '') this.appendMessage('text', delta.content);
    else if (Array.isArray(delta.content)) {
      const parts = partsText(delta.content, (k) => this.call.removed?.push(`response.choices[0].delta.content[${k}]`));
      if (parts.reasoning !== '') this.appendReasoning(parts.reasoning);
      if (parts.text !== '') this.appendMessage('text', parts.text);
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.appendMessage('refusal', delta.refusal);
    const signature = geminiThoughtSignature(delta);
    if (signature) carryMessageSignature(this.carried, signature);
    if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((tc, position) => isRecord(tc) && this.onToolDelta(tc, position));
  }

  // --- reasoning and message items -------------------------------------------------------------

  private appendReasoning(text: string): void {
    if (this.openTools.length !== 0) return this.defer('reasoning', text);
    let item = this.current;
    if (item?.kind !== 'reasoning') {
      this.closeCurrent();
      const index = this.nextIndex++;
      item = this.current = { kind: 'reasoning', index, id: itemId('rs', this.call.requestId, index), text: '' };
      this.send('response.output_item.added', { output_index: index, item: reasoningItem(item.id, '', '') });
      this.send('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    item.text += text;
    this.send('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta: text });
  }

  private appendMessage(kind: 'text' | 'refusal', text: string): void {
    if (this.openTools.length !== 0) return this.defer(kind, text);
    let item = this.current;
    if (item?.kind !== 'message') {
      this.closeCurrent();
      const index = this.nextIndex++;
      item = this.current = { kind: 'message', index, id: itemId('msg', this.call.requestId, index), parts: [], part: null };
      this.send('response.output_item.added', { output_index: index, item: messageItem(item.id, 'in_progress', []) });
    }
    if (item.part?.kind !== kind) {
      this.closePart(item);
      item.part = { kind, text: '' };
      this.send('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: item.parts.length, part: kind === 'text' ? outputTextPart('') : refusalPart('') });
    }
    item.part.text += text;
    if (kind === 'text') this.send('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: item.parts.length, delta: text, logprobs: [] });
    else this.send('response.refusal.delta', { item_id: item.id, output_index: item.index, content_index: item.parts.length, delta: text });
  }

  /** Keeps reasoning, text or refusal that came while a call is open, for {@link closeToolsAndFlush}. */
  private defer(kind: 'reasoning' | 'text' | 'refusal', text: string): void {
    const last = this.deferred.at(-1);
    if (last?.kind === kind) last.text += text;
    else this.deferred.push({ kind, text });
  }

  private closePart(item: MessageState): void {
    const part = item.part;
    if (!part) return;
    const { id, index } = item;
    const contentIndex = item.parts.length;
    const done = part.kind === 'text' ? outputTextPart(part.text) : refusalPart(part.text);
    if (part.kind === 'text') this.send('response.output_text.done', { item_id: id, output_index: index, content_index: contentIndex, text: part.text, logprobs: [] });
    else this.send('response.refusal.done', { item_id: id, output_index: index, content_index: contentIndex, refusal: part.text });
    this.send('response.content_part.done', { item_id: id, output_index: index, content_index: contentIndex, part: done });
    item.parts.push(done);
    item.part = null;
  }

  /** Closes the open reasoning or message item; `status` is the message's. */
  private closeCurrent(status = 'completed'): void {
    const item = this.current;
    if (!item) return;
    this.current = null;
    if (item.kind === 'reasoning') {
      const summary = { type: 'summary_text', text: item.text };
      this.send('response.reasoning_summary_text.done', { item_id: item.id, output_index: item.index, summary_index: 0, text: item.text });
      this.send('response.reasoning_summary_part.done', { item_id: item.id, output_index: item.index, summary_index: 0, part: summary });
      this.finishItem(item.index, reasoningItem(item.id, item.text, ''));
    } else {
      this.closePart(item);
      this.finishItem(item.index, messageItem(item.id, status, item.parts));
    }
  }

  private finishItem(index: number, item: Record<string, unknown>): void {
    this.output[index] = item;
    this.send('response.output_item.done', { output_index: index, item });
  }

  // --- tool calls ---------------------------------------------------------------------------------

  private onToolDelta(tc: Record<string, unknown>, position: number): void {
    const key = Number.isInteger(tc.index) ? (tc.index as number) : position;
    const id = typeof tc.id === 'string' ? tc.id : '';
    const fn = isRecord(tc.function) ? tc.function : {};
    let tool = this.tools.get(key);
    if (!tool || isAnotherToolCall(tool.providerId, id, fn)) {
      // A replaced call whose name never came leaves the map: its item starts now, as it would at the finish.
      if (tool !== undefined && tool.index === -1) this.startTool(tool);
      tool = { key, index: -1, id: '', providerId: '', name: '', origin: { name: '' }, callId: '', args: '', pending: '', signature: undefined, closed: false };
      this.tools.set(key, tool);
      // Output kept while the replaced call was open goes out before the new call's item, once no open call can take more.
      if (this.deferred.length !== 0 && !this.openTools.some((open) => this.tools.get(open.key) === open)) this.closeToolsAndFlush('completed');
    }
    if (tool.index === -1) {
      // The first id stays the call's: a provider minting one per chunk does not rename it.
      if (tool.providerId === '') tool.providerId = id;
      if (typeof fn.name === 'string' && fn.name !== '') tool.name = fn.name;
    }
    const signature = geminiThoughtSignature(tc);
    if (signature) {
      if (tool.index === -1) tool.signature = signature;
      else carryToolCallSignature(this.carried, tool.callId, signature);
    }
    if (tool.index === -1 && tool.name !== '') this.startTool(tool);
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    if (args === '') return;
    if (tool.index === -1) tool.pending += args;
    else if (tool.closed) this.call.removed?.push(`response.choices[0].delta.tool_calls[${position}].function.arguments`);
    else this.appendArguments(tool, args);
  }

  private startTool(tool: ToolState): void {
    this.closeCurrent();
    tool.index = this.nextIndex++;
    tool.callId = callIdOf(tool.providerId, this.call.requestId, tool.key);
    tool.origin = toolOrigin(this.toolNames, tool.name);
    tool.id = itemId(tool.origin.custom ? 'ctc' : 'fc', this.call.requestId, tool.index);
    this.openTools.push(tool);
    this.send('response.output_item.added', { output_index: tool.index, item: toolCallItem(tool.id, 'in_progress', tool.callId, tool.origin, '') });
    if (tool.signature) carryToolCallSignature(this.carried, tool.callId, tool.signature);
    if (tool.pending !== '') {
      this.appendArguments(tool, tool.pending);
      tool.pending = '';
    }
  }

  private appendArguments(tool: ToolState, args: string): void {
    tool.args += args;
    if (!tool.origin.custom) this.send('response.function_call_arguments.delta', { item_id: tool.id, output_index: tool.index, delta: args });
  }

  /**
   * Closes the open tool calls in output order; `lastStatus` is the status of the last one (`incomplete` when cut),
   * `status` the others' (`incomplete` when the stream failed: any of them may lack fragments).
   */
  private closeTools(lastStatus: string, status = 'completed'): void {
    const open = this.openTools;
    this.openTools = [];
    open.forEach((tool, k) => {
      tool.closed = true;
      const itemStatus = k === open.length - 1 ? lastStatus : status;
      let value: string;
      if (tool.origin.custom) {
        value = customInput(tool.args === '' ? '{}' : tool.args);
        if (value !== '') this.send('response.custom_tool_call_input.delta', { item_id: tool.id, output_index: tool.index, delta: value });
        this.send('response.custom_tool_call_input.done', { item_id: tool.id, output_index: tool.index, input: value });
      } else {
        if (tool.args === '') this.appendArguments(tool, '{}');
        value = tool.args;
        this.send('response.function_call_arguments.done', { item_id: tool.id, output_index: tool.index, arguments: value });
      }
      this.finishItem(tool.index, toolCallItem(tool.id, itemStatus, tool.callId, tool.origin, value));
    });
  }

  /**
   * Closes the open tool calls (the last with `lastStatus`, or `completed` when kept output follows it), then writes
   * the reasoning, text and refusal kept while they were open as items of their own, left open for what follows.
   */
  private closeToolsAndFlush(lastStatus: string): void {
    this.closeTools(this.deferred.length === 0 ? lastStatus : 'completed');
    const kept = this.deferred.splice(0);
    for (const { kind, text } of kept) {
      if (kind === 'reasoning') this.appendReasoning(text);
      else this.appendMessage(kind, text);
    }
  }

  // --- the end -------------------------------------------------------------------------------------

  /** At the finish chunk: tool calls whose name never came start now; every item closes; carried signatures follow. */
  private closeAll(): void {
    for (const tool of this.tools.values()) if (tool.index === -1) this.startTool(tool);
    const { status } = finishStatus(this.finishReason);
    const last = status === 'incomplete' ? 'incomplete' : 'completed';
    // An open call means no open reasoning or message (starting the call closed it, and later output was kept).
    if (this.openTools.length) this.closeToolsAndFlush(last);
    this.closeCurrent(last);
    const encrypted = encodeCarried(this.carried);
    if (encrypted !== '') {
      const index = this.nextIndex++;
      const item = reasoningItem(itemId('rs', this.call.requestId, index), '', encrypted);
      this.send('response.output_item.added', { output_index: index, item });
      this.finishItem(index, item);
      this.carried.google = undefined;
    }
  }

  /** `response.completed` (or `response.incomplete`) with the whole response. */
  protected override complete(): void {
    this.start({});
    if (this.finishReason === undefined) this.finishReason = 'stop';
    if (this.current || this.openTools.length || [...this.tools.values()].some((t) => t.index === -1)) this.closeAll();
    const { status, incomplete } = finishStatus(this.finishReason);
    Object.assign(this.response, {
      status,
      incomplete,
      completedAt: status === 'completed' ? nowSeconds() : null,
      output: this.output,
      usage: responsesUsage(this.usage, this.call.provider),
    });
    this.send(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: responseObject(this.response, this.echo) });
    this.state = 'done';
  }

  /**
   * `response.failed` with the items completed so far. Output kept while a call was open goes out first, as items
   * done (it had reached the client at once before it was kept, and no fragment can come now): the open calls close
   * as `incomplete`, the kept output follows, its last message `incomplete` as at a `length` cut.
   */
  protected override fail(code: string, message: string): void {
    this.start({});
    this.flushKeptOnFailure();
    Object.assign(this.response, {
      status: 'failed',
      error: { code, message },
      output: this.output.filter((item) => item !== undefined),
      usage: this.usage === undefined ? null : responsesUsage(this.usage, this.call.provider),
    });
    this.send('response.failed', { response: responseObject(this.response, this.echo) });
    this.state = 'failed';
  }

  /**
   * At a failure: writes the output kept while calls were open as items after them (see {@link fail}); nothing when
   * none was kept, leaving the open items as a failure leaves them. Also the translator's {@link onFailing}, for an
   * event past the parser's bound, after which the exchange writes the error event.
   */
  private flushKeptOnFailure(): void {
    if (this.deferred.length === 0) return;
    this.closeTools('incomplete', 'incomplete');
    for (const { kind, text } of this.deferred.splice(0)) {
      if (kind === 'reasoning') this.appendReasoning(text);
      else this.appendMessage(kind, text);
    }
    this.closeCurrent('incomplete');
  }

  protected override onFailing(): void {
    this.flushKeptOnFailure();
  }

  /** An error object of the provider (`{message, type, code, status_code?}`) as `response.failed`. */
  protected override failWithError(error: Record<string, unknown>): void {
    const status = typeof error.status_code === 'number' ? error.status_code : typeof error.status === 'number' ? error.status : undefined;
    const message = typeof error.message === 'string' && error.message !== '' ? providerErrorText(error.message, this.call) : `The ${this.call.provider ?? 'provider'} reported an error mid-stream`;
    this.fail(failureCode(error, status), message);
  }

}

/**
 * The `error.code` of a failed response: the provider's code when it gave one (Groq's `tool_use_failed`,
 * `context_length_exceeded`, …), else `rate_limit_exceeded` for a rate limit (status 429 or a rate-limit type),
 * `insufficient_quota` for a quota type, `server_error` otherwise.
 */
function failureCode(error: Record<string, unknown>, status: number | undefined): string {
  if (typeof error.code === 'string' && error.code !== '') return error.code;
  const type = typeof error.type === 'string' ? error.type : '';
  if (status === 429 || type === 'rate_limit_exceeded' || type === 'rate_limit_error' || type === 'tokens' || type === 'requests') return 'rate_limit_exceeded';
  if (type === 'insufficient_quota') return 'insufficient_quota';
  return 'server_error';
}

/**
 * A fresh transform from a chat-completions SSE stream (bytes, split anywhere, even inside a UTF-8 character) to a
 * Responses SSE stream, emitting the events of each input piece as soon as it arrives (see the module comment for the
 * event sequence). Response members it had to drop are pushed to `call.removed` when present.
 */
export function createResponsesStreamTranslator(call: TranslatorCall): Transform {
  return new ResponsesStream(call);
}
