/**
 * A Responses translator for a wire format that the gateway already reaches from chat completions: the request is
 * translated to a chat body (./request.ts, with the target provider's profile), adapted to what the chat translator of
 * that wire format carries, and handed to it; its answer, a `chat.completion`, becomes a Responses `response`
 * (./response.ts), and its stream, chat chunks, becomes Responses events (./stream.ts) through a chain of the two
 * stream translators (../shared/chained-stream.ts). So every member the Responses → chat translation maps, records or
 * refuses is handled once, and the chat → wire translation's mapping is reused as it is.
 *
 * The chat translator reads only the chat members it maps; the {@link ChatRoute} of a wire format says what to do with
 * the others the chat body may hold (`reasoning_effort`, `response_format`, …): remove them and record the Responses
 * member they came from, refuse them, or map them onto the wire body afterwards. Errors the chat translator throws,
 * and the members it records as removed, name the chat body's members (`messages[3].content[0]`); they reach the
 * client and the record naming the Responses members those came from (./message-origins.ts).
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { chainStreams } from '../shared/chained-stream.ts';
import { isRecord } from '../shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall, WireFormat } from '../types.ts';
import { toChatRequest } from './request.ts';
import { toResponse } from './response.ts';
import { inResponsesTerms, responsesPathOf } from './message-origins.ts';
import { createResponsesStreamTranslator } from './stream.ts';

/** How Responses requests reach one wire format through chat completions. */
export interface ChatRoute {
  /** The chat → wire format translator (dialect `openai-chat`). */
  readonly chat: MappingTranslator;
  /** The provider whose profile and model table shape the chat body when the call names none (`anthropic`, `bedrock`). */
  readonly provider: string;
  /**
   * Adapts the chat body to what `chat` carries (`request` is the client's Responses body, for naming members), pushing
   * the Responses paths of what it removes to `removed`; returns
   * a step that completes the wire body `chat` wrote (parsed JSON), or null when there is none.
   * @throws {GatewayError} 400 naming the Responses member the wire format cannot honour.
   */
  readonly adapt: (body: ChatCompletionRequest, removed: string[], request: Record<string, unknown>) => ((wire: Record<string, unknown>) => void) | null;
}

/**
 * The call the chat translator reads: the same request, with the chat body (for the answer only its model; for the
 * stream its model and `stream_options.include_usage`, so that the chat step ends with the usage chunk), and
 * `removed` for the chat paths of what it removes (when the request's removals are collected), and the request's
 * `redactor`, so the chat step's error events are redacted as the Responses step's are.
 */
function chatCall(call: TranslatorCall, body: ChatCompletionRequest, removed?: string[]): TranslatorCall {
  return {
    body,
    stream: call.stream,
    requestId: call.requestId,
    ...(call.provider !== undefined ? { provider: call.provider } : {}),
    ...(removed ? { removed } : {}),
    ...(call.redactor ? { redactor: call.redactor } : {}),
  };
}

/**
 * The chat stream step's `stream_options`: the Responses step (./stream.ts) reads the answer's usage from the chat
 * usage chunk, which the chat translators write only when asked, as OpenAI does (`include_usage`).
 */
const WITH_USAGE_CHUNK = Object.freeze({ include_usage: true });

/** The `openai-responses` → `wireFormat` translator going through chat completions by `route`. */
export function responsesThroughChat(wireFormat: WireFormat, route: ChatRoute): MappingTranslator {
  const createChatStream = route.chat.createStreamTranslator;
  return {
    dialect: 'openai-responses',
    wireFormat,
    identity: false,
    translateRequest(call: TranslatorCall): Buffer {
      const { body, removed, toolNames, origins } = toChatRequest(call.body, call.provider ?? route.provider);
      const complete = route.adapt(body, removed, call.body as unknown as Record<string, unknown>);
      const chatRemoved: string[] | undefined = call.removed ? [] : undefined;
      let bytes: Buffer;
      try {
        bytes = route.chat.translateRequest(chatCall(call, body, chatRemoved));
      } catch (err) {
        throw inResponsesTerms(err, origins);
      }
      // What the chat translator removed (an image's `detail`), named as the Responses client sent it.
      if (chatRemoved) for (const path of chatRemoved) removed.push(responsesPathOf(path, origins));
      if (complete) {
        const wire = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        complete(wire);
        bytes = Buffer.from(JSON.stringify(wire));
      }
      if (removed.length && call.removed) call.removed.push(...removed);
      if (toolNames.size) call.toolNames = toolNames;
      return bytes;
    },
    translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
      const chat = route.chat.translateResponse(body, chatCall(call, { model: call.body.model, messages: [] }));
      if (chat.status !== 200 || !isRecord(chat.body) || !Array.isArray(chat.body.choices) || chat.body.choices.length === 0) return chat;
      return { status: 200, body: toResponse(chat.body, call) };
    },
    ...(createChatStream
      ? {
          createStreamTranslator(call: TranslatorCall) {
            const chatBody = { model: call.body.model, messages: [], stream_options: WITH_USAGE_CHUNK };
            return chainStreams(createChatStream(chatCall(call, chatBody)), createResponsesStreamTranslator(call));
          },
        }
      : {}),
  };
}

/**
 * Removes chat member `member` from `body` when present (the chat translator of the route would ignore it) and records
 * the Responses member it came from (`from`).
 */
export function dropChatMember(body: ChatCompletionRequest, member: string, from: string, removed: string[]): void {
  if (body[member] === undefined) return;
  delete body[member];
  removed.push(from);
}

/**
 * Removes `strict` from the chat body's function tools (the route's chat translator would record it under the chat
 * tools' names) and records the Responses paths of the tools that asked for strict arguments: `tools[i].strict`, or
 * `tools[i].tools[j].strict` inside a namespace (`request` is the client's Responses body).
 */
export function dropStrictTools(body: ChatCompletionRequest, request: Record<string, unknown>, removed: string[]): void {
  for (const tool of body.tools ?? []) if (tool.function) delete tool.function.strict;
  if (!Array.isArray(request.tools)) return;
  for (let i = 0; i < request.tools.length; i++) {
    const tool: unknown = request.tools[i];
    if (!isRecord(tool)) continue;
    if (tool.type === 'function' && tool.strict === true) removed.push(`tools[${i}].strict`);
    if (tool.type !== 'namespace' || !Array.isArray(tool.tools)) continue;
    for (let j = 0; j < tool.tools.length; j++) {
      const inner: unknown = tool.tools[j];
      if (isRecord(inner) && inner.type === 'function' && inner.strict === true) removed.push(`tools[${i}].tools[${j}].strict`);
    }
  }
}
