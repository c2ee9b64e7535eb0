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
 *   replays its items (Codex, or the gateway's response store) sends them back;
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
import { toolNamesOf, toolOrigin } from './tool-names.ts';

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
 * Maps a `chat.completion` (already checked to be an object with a `choices` array) to a Responses `response`
 * object, per the rules above. Members it had to drop are pushed to `call.removed` when present.
 */
export function toResponse(completion: Record<string, unknown>, call: TranslatorCall): Record<string, unknown> {
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
  if (reasoning !== '') output.push(reasoningItem(itemId('rs', call.requestId, output.length), reasoning, ''));
  if (text !== '' || refusal !== '') {
    const content = [];
    if (text !== '') content.push(outputTextPart(text));
    if (refusal !== '') content.push(refusalPart(refusal));
    output.push(messageItem(itemId('msg', call.requestId, output.length), 'completed', content));
  }
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  toolCalls.forEach((raw, k) => {
    if (!isRecord(raw)) return void call.removed?.push(`response.choices[0].message.tool_calls[${k}]`);
    const fn = isRecord(raw.function) ? raw.function : {};
    const callId = callIdOf(raw.id, call.requestId, k);
    const origin = toolOrigin(toolNames, typeof fn.name === 'string' ? fn.name : '');
    const args = argumentsOf(fn.arguments);
    const signature = geminiThoughtSignature(raw);
    if (signature) carryToolCallSignature(carried, callId, signature);
    const prefix = origin.custom ? 'ctc' : 'fc';
    output.push(toolCallItem(itemId(prefix, call.requestId, output.length), 'completed', callId, origin, origin.custom ? customInput(args) : args));
  });
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

/** The last message or tool call item of an incomplete response is `incomplete` (its text or arguments were cut). */
export function markLastIncomplete(output: Record<string, unknown>[]): void {
  for (let i = output.length - 1; i >= 0; i--) {
    if (output[i]!.type !== 'reasoning') {
      output[i]!.status = 'incomplete';
      return;
    }
  }
}
