/**
 * A chat-completions answer (`chat.completion`) as a Responses `response` object.
 *
 * - `id` `resp_<gateway request id>`, `created_at` the completion's `created` (else now), `completed_at` now (s);
 * - `model`: the provider's (`model` of the completion), else the model the request named;
 * - `output`, in this order (./output.ts for the shapes and ids): one `reasoning` item whose summary is the
 *   provider's reasoning text (`reasoning_content`, `reasoning`, or Mistral's `thinking` parts); one `message` item
 *   with an `output_text` part (the `content`) and/or a `refusal` part (the `refusal`); one `function_call` (or
 *   `custom_tool_call`) item per tool call, named as the client knows the tool; and, when Gemini sent thought
 *   signatures, a last `reasoning` item with no summary whose `encrypted_content` carries them, so a client that
 *   replays its items (Codex, or the gateway's response store) sends them back. A wire format whose answer is an
 *   ordered list of blocks (Anthropic's `content`) gives that order as {@link OutputSegment}s instead: one item per
 *   run of blocks of one kind, in the provider's order, as its stream yields them;
 * - `status` and `incomplete_details` from the finish reason, `usage` from the completion's (./output.ts);
 * - the request's parameters echoed (./echo.ts).
 * Content parts of types other than text and thinking are dropped and their paths recorded
 * (`response.choices[0].message.content[k]`).
 * Sources: https://platform.openai.com/docs/api-reference/responses/object,
 * https://platform.openai.com/docs/api-reference/chat/object.
 */
import { carryMessageSignature, carryToolCallSignature, encodeCarried, geminiThoughtSignature, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { partsText, reasoningText } from '../shared/openai-chat-answer.ts';
import { isRecord } from '../shared/values.ts';
import type { TranslatorCall } from '../types.ts';
import { responseEcho, responseObject } from './echo.ts';
import { callIdOf, customInput, finishStatus, itemId, messageItem, outputTextPart, reasoningItem, refusalPart, responseIdOf, responsesUsage, toolCallItem } from './output.ts';
import { toolNamesOf, toolOrigin, type ToolNameMap } from './tool-names.ts';

/** Unix time in whole seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The arguments string of a tool call as the provider sent it (an object is serialized; absent or '' is `{}`). */
export function argumentsOf(args: unknown): string {
  if (typeof args === 'string') return args === '' ? '{}' : args;
  return args === undefined || args === null ? '{}' : JSON.stringify(args);
}

/** The text, refusal and reasoning of a completion's message; parts of unknown types are reported through `lost`. */
function messageParts(message: Record<string, unknown>, lost: (k: number) => void): { text: string; refusal: string; reasoning: string } {
  let reasoning = reasoningText(message);
  let text = typeof message.content === 'string' ? message.content : '';
  if (Array.isArray(message.content)) {
    const parts = partsText(message.content, lost);
    text = parts.text;
    reasoning += parts.reasoning;
  }
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  return { text, refusal, reasoning };
}

/**
 * One run of an answer's output in the provider's order, for a wire format whose answer keeps it (Anthropic's content
 * blocks) where the chat completion has only one of each: reasoning text, message text (and refusal), or the chat
 * completion's tool call `call` (its index in `message.tool_calls`).
 */
export type OutputSegment = { kind: 'reasoning'; text: string } | { kind: 'message'; text: string; refusal: string } | { kind: 'tool'; call: number };

/** The chat completion's own order: its reasoning, its message, its tool calls. */
function chatOrder(reasoning: string, text: string, refusal: string, toolCalls: number): OutputSegment[] {
  const segments: OutputSegment[] = [{ kind: 'reasoning', text: reasoning }, { kind: 'message', text, refusal }];
  for (let k = 0; k < toolCalls; k++) segments.push({ kind: 'tool', call: k });
  return segments;
}

/**
 * Maps a `chat.completion` (already checked to be an object with a `choices` array) to a Responses `response`
 * object, per the rules above; `order` is the provider's order of the output when it kept one (else the chat
 * completion's). Members it had to drop are pushed to `call.removed` when present.
 */
export function toResponse(completion: Record<string, unknown>, call: TranslatorCall, order?: readonly OutputSegment[]): Record<string, unknown> {
  const choices = completion.choices as unknown[];
  const choice = isRecord(choices[0]) ? choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const { text, refusal, reasoning } = messageParts(message, (k) => call.removed?.push(`response.choices[0].message.content[${k}]`));
  const toolNames = call.toolNames ?? toolNamesOf((call.body as unknown as Record<string, unknown>).tools).bySent;
  const carried: CarriedReasoning = {};
  const messageSignature = geminiThoughtSignature(message);
  if (messageSignature) carryMessageSignature(carried, messageSignature);
  const output: Record<string, unknown>[] = [];
  const { status, incomplete } = finishStatus(choice.finish_reason);
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  for (const segment of order ?? chatOrder(reasoning, text, refusal, toolCalls.length)) {
    if (segment.kind === 'reasoning') {
      if (segment.text !== '') output.push(reasoningItem(itemId('rs', call.requestId, output.length), segment.text, ''));
    } else if (segment.kind === 'message') {
      if (segment.text === '' && segment.refusal === '') continue;
      const content = [];
      if (segment.text !== '') content.push(outputTextPart(segment.text));
      if (segment.refusal !== '') content.push(refusalPart(segment.refusal));
      output.push(messageItem(itemId('msg', call.requestId, output.length), 'completed', content));
    } else {
      const item = toolCallOutput(toolCalls[segment.call], segment.call, output.length, call, toolNames, carried);
      if (item !== null) output.push(item);
    }
  }
  const encrypted = encodeCarried(carried);
  if (encrypted !== '') output.push(reasoningItem(itemId('rs', call.requestId, output.length), '', encrypted));
  if (status === 'incomplete') markLastIncomplete(output);
  return responseObject(
    {
      id: responseIdOf(call.requestId),
      createdAt: typeof completion.created === 'number' ? completion.created : nowSeconds(),
      status,
      completedAt: status === 'completed' ? nowSeconds() : null,
      error: null,
      incomplete,
      model: typeof completion.model === 'string' && completion.model !== '' ? completion.model : call.body.model,
      output,
      usage: responsesUsage(completion.usage, call.provider),
    },
    responseEcho(call.body),
  );
}

/**
 * The output item (at output index `index`) of tool call `k` of the chat completion (`raw`), named as the client knows
 * the tool, its Gemini thought signature added to `carried`; null (and its path recorded) when it is not an object.
 */
function toolCallOutput(raw: unknown, k: number, index: number, call: TranslatorCall, toolNames: ToolNameMap, carried: CarriedReasoning): Record<string, unknown> | null {
  if (!isRecord(raw)) {
    call.removed?.push(`response.choices[0].message.tool_calls[${k}]`);
    return null;
  }
  const fn = isRecord(raw.function) ? raw.function : {};
  const callId = callIdOf(raw.id, call.requestId, k);
  const origin = toolOrigin(toolNames, typeof fn.name === 'string' ? fn.name : '');
  const args = argumentsOf(fn.arguments);
  const signature = geminiThoughtSignature(raw);
  if (signature) carryToolCallSignature(carried, callId, signature);
  const prefix = origin.custom ? 'ctc' : 'fc';
  return toolCallItem(itemId(prefix, call.requestId, index), 'completed', callId, origin, origin.custom ? customInput(args) : args);
}

/** The last message or tool call item of an incomplete response is `incomplete` (its text or arguments were cut). */
export function markLastIncomplete(output: Record<string, unknown>[]): void {
  for (let i = output.length - 1; i >= 0; i--) {
    if (output[i]!.type !== 'reasoning') {
      output[i]!.status = 'incomplete';
      return;
    }
  }
}
