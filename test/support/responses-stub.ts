/**
 * A stub model provider for driving real OpenAI Responses clients (Codex, the Vercel AI SDK, LangChain,
 * the OpenAI Agents SDK) through the gateway, tool turns included. It runs in its own process
 * (`node --import tsx test/support/responses-stub.ts`) like `stub-upstream.ts`, and plays OpenAI's
 * Responses API (`POST …/responses`), an OpenAI-compatible chat provider (`POST …/chat/completions`),
 * Anthropic (`POST …/messages`) and Bedrock's Converse (`POST /model/<id>/converse` and
 * `…/converse-stream`). It decides each answer from the conversation it receives:
 *
 *   1. the last input item is a function result (Responses: a `function_call_output` item; chat: a last
 *      message of `role: "tool"`; Anthropic: a `tool_result` block in the last user message; Converse: a
 *      `toolResult` block in the last user message) → a final
 *      text answer `"The function returned: <the result's last non-empty line, trimmed>"` (Codex wraps a
 *      command's output in lines of its own before it; the last line is the command's);
 *   2. else a user text contains `Call the function <name> with <JSON arguments>` (to the end of its
 *      line) → a call of function `<name>` with those arguments (Responses: a `function_call` output
 *      item with `call_id` {@link CALL_ID}; chat: a `tool_calls` delta; Anthropic: a `tool_use` block;
 *      Converse: a `toolUse` block with `toolUseId` {@link CALL_ID});
 *   3. else the recorded plain answer of `test/fixtures/providers/`, byte for byte: OpenAI's
 *      `responses-stream.sse` ("2 + 2 equals 4.") or `responses-text.json` ("The capital of France is
 *      Paris."), `chat-completion-stream.sse` ("The capital of the UK is London.") or
 *      `chat-completion.json` ("The capital of France is Paris."), Anthropic's `message-stream.sse`
 *      ("Hello there!") or `message.json`, Bedrock's `converse-stream.eventstream` ("The capital of France
 *      is Paris. …") or `converse.json`.
 *
 * The answers of (1) and (2) are not recordings (no recording of these calls exists). The non-stream
 * Responses bodies are the recorded `responses-text.json` and `responses-function-call.json` with their
 * output item replaced; the Responses streams follow the event sequence of the recorded
 * `responses-stream.sse` and `responses-stream-function-call.sse` (OpenAI API reference, "Responses" →
 * "Streaming events"), with `sequence_number`s counted from 0; the chat and Anthropic streams follow the
 * recorded `chat-completion-stream-tool-call.sse` and `anthropic/message-stream-tool-use.sse`, and the
 * Converse stream the recorded `bedrock/converse-stream-tool-use.jsonl` (AWS event-stream frames made
 * with @smithy's codec, as Bedrock frames them). Every
 * Responses answer carries OpenAI's recorded response headers (`openai/responses-text.headers.json`:
 * `x-request-id`, `x-ratelimit-*`, `openai-*`).
 *
 * Any other path or method: 404 in OpenAI's error shape. `GET /__requests` returns every request
 * received (method, url, headers, the body parsed) and `DELETE /__requests` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));

const F = {
  responsesStream: fixture('openai/responses-stream.sse'),
  responses: fixture('openai/responses-text.json'),
  responsesToolCall: fixture('openai/responses-function-call.json'),
  chatStream: fixture('openai/chat-completion-stream.sse'),
  chat: fixture('openai/chat-completion.json'),
  anthropicStream: fixture('anthropic/message-stream.sse'),
  anthropic: fixture('anthropic/message.json'),
  converseStream: fixture('bedrock/converse-stream.eventstream'),
  converse: fixture('bedrock/converse.json'),
};

/** The phrase that makes the stub call a function: `Call the function <name> with <JSON arguments>`. */
const CALL_MARKER = 'Call the function ';
/** What the final answer after a function result starts with (followed by the result's last line). */
const FINAL_PREFIX = 'The function returned: ';
/** The `call_id` (Responses), tool call `id` (chat) and `tool_use` id (Anthropic) of the stub's calls. */
const CALL_ID = 'call_stub_responses_1';


/** What the stub decided to answer: a function call, a final text after a function result, or the recorded answer. */
type Turn = { kind: 'call'; name: string; args: string } | { kind: 'final'; text: string } | { kind: 'recorded' };
type Scripted = Exclude<Turn, { kind: 'recorded' }>;

/** OpenAI's recorded Responses headers (names lower-cased): `x-request-id`, `x-ratelimit-*` and `openai-*`. */
const OPENAI_HEADERS: Record<string, string> = (() => {
  const recorded = JSON.parse(fixture('openai/responses-text.headers.json').toString('utf8')) as Record<string, string[]>;
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(recorded)) {
    const k = name.toLowerCase();
    if (k === 'x-request-id' || k.startsWith('x-ratelimit-') || k.startsWith('openai-')) out[k] = values.join(', ');
  }
  return out;
})();

/** The text of a result or content: a string, or an array of parts of which the text ones count. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: Json) => (typeof b?.text === 'string' ? b.text : '')).join('');
  return '';
}

/** The final answer to a function result: its last non-empty line. */
function finalTurn(result: unknown): Turn {
  const lines = textOf(result).split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return { kind: 'final', text: FINAL_PREFIX + (lines.at(-1) ?? '') };
}

/** The function call a user text asks for, if any (see the module comment). */
function callIn(texts: string[]): Turn {
  for (const t of texts) {
    const i = t.indexOf(CALL_MARKER);
    if (i < 0) continue;
    const line = t.slice(i + CALL_MARKER.length).split('\n')[0]!;
    const m = /^(\S+) with (.*)$/.exec(line.trim());
    if (m) return { kind: 'call', name: m[1]!, args: JSON.stringify(JSON.parse(m[2]!)) };
  }
  return { kind: 'recorded' };
}

/** Decides a Responses turn: `input` as a string or items. */
function responsesTurn(body: Json): Turn {
  const items: Json[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  const last = items.at(-1);
  if (last?.type === 'function_call_output') return finalTurn(last.output);
  return callIn(items.filter((i) => i?.role === 'user').map((i) => textOf(i.content)));
}

/** Decides an OpenAI chat turn. */
function chatTurn(body: Json): Turn {
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return finalTurn(last.content);
  return callIn(messages.filter((m) => m?.role === 'user').map((m) => textOf(m.content)));
}

/** Decides an Anthropic Messages turn. */
function anthropicTurn(body: Json): Turn {
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: Json) => b?.type === 'tool_result') : undefined;
  if (result) return finalTurn(result.content);
  return callIn(messages.filter((m) => m?.role === 'user').map((m) => textOf(m.content)));
}

/** Decides a Bedrock Converse turn (content blocks `{text}`, `{toolUse}`, `{toolResult: {content: [{text} | {json}]}}`). */
function converseTurn(body: Json): Turn {
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: Json) => b?.toolResult)?.toolResult : undefined;
  if (result) return finalTurn((result.content as Json[] | undefined)?.map((c) => c.text ?? JSON.stringify(c.json ?? '')).join('') ?? '');
  return callIn(messages.filter((m) => m?.role === 'user').map((m) => textOf(m.content)));
}

/** Splits a scripted text or JSON in two, so a client that joins deltas wrongly is caught. */
const halves = (s: string): [string, string] => [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))];

/** The Responses output item of a scripted turn (ids in OpenAI's `msg_`/`fc_` form). */
function outputItem(turn: Scripted, status: 'in_progress' | 'completed'): Json {
  const done = status === 'completed';
  if (turn.kind === 'final') {
    return { id: 'msg_stub_responses_1', type: 'message', status, content: done ? [{ type: 'output_text', annotations: [], logprobs: [], text: turn.text }] : [], role: 'assistant' };
  }
  return { id: 'fc_stub_responses_1', type: 'function_call', status, arguments: done ? turn.args : '', call_id: CALL_ID, name: turn.name };
}

/** A recorded Responses body with its output replaced by the scripted turn's item, the request's model kept. */
function responsesBody(turn: Scripted, model: string): Json {
  const recorded = JSON.parse((turn.kind === 'final' ? F.responses : F.responsesToolCall).toString('utf8')) as Json;
  return { ...recorded, model: model || recorded.model, output: [outputItem(turn, 'completed')], tools: [], tool_choice: 'auto' };
}

/** A Responses stream for a scripted turn, in the event sequence of the recorded streams. */
function responsesStream(turn: Scripted, model: string): string[] {
  const final = responsesBody(turn, model);
  const start = { ...final, status: 'in_progress', output: [], usage: null, completed_at: null };
  const events: Json[] = [
    { type: 'response.created', response: start },
    { type: 'response.in_progress', response: start },
    { type: 'response.output_item.added', output_index: 0, item: outputItem(turn, 'in_progress') },
  ];
  if (turn.kind === 'final') {
    const ids = { item_id: 'msg_stub_responses_1', output_index: 0, content_index: 0 };
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
    events.push({ type: 'response.content_part.added', ...ids, part });
    for (const delta of halves(turn.text)) events.push({ type: 'response.output_text.delta', ...ids, delta, logprobs: [] });
    events.push({ type: 'response.output_text.done', ...ids, text: turn.text, logprobs: [] });
    events.push({ type: 'response.content_part.done', ...ids, part: { ...part, text: turn.text } });
  } else {
    const ids = { item_id: 'fc_stub_responses_1', output_index: 0 };
    for (const delta of halves(turn.args)) events.push({ type: 'response.function_call_arguments.delta', ...ids, delta });
    events.push({ type: 'response.function_call_arguments.done', ...ids, arguments: turn.args });
  }
  events.push({ type: 'response.output_item.done', output_index: 0, item: outputItem(turn, 'completed') });
  events.push({ type: 'response.completed', response: final });
  return events.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`);
}

/** One OpenAI chat completion chunk as an SSE `data:` line. */
function chunk(model: string, delta: Json, finish: string | null, usage: Json | null = null): string {
  const choices = usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-stub-responses', object: 'chat.completion.chunk', created: 1782955817, model, choices, usage })}\n\n`;
}

/** An OpenAI chat stream for a scripted turn (sequence of the recorded tool-call stream). */
function chatStream(turn: Scripted, model: string, includeUsage: boolean): string[] {
  const out: string[] = [];
  if (turn.kind === 'final') {
    out.push(chunk(model, { role: 'assistant', content: '', refusal: null }, null));
    for (const part of halves(turn.text)) out.push(chunk(model, { content: part }, null));
    out.push(chunk(model, {}, 'stop'));
  } else {
    out.push(chunk(model, { role: 'assistant', content: null, tool_calls: [{ index: 0, id: CALL_ID, type: 'function', function: { name: turn.name, arguments: '' } }], refusal: null }, null));
    for (const part of halves(turn.args)) out.push(chunk(model, { tool_calls: [{ index: 0, function: { arguments: part } }] }, null));
    out.push(chunk(model, {}, 'tool_calls'));
  }
  if (includeUsage) out.push(chunk(model, {}, null, { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 }));
  out.push('data: [DONE]\n\n');
  return out;
}

/** The same answer as one chat.completion body. */
function chatCompletion(turn: Scripted, model: string): Json {
  const message =
    turn.kind === 'final'
      ? { role: 'assistant', content: turn.text, refusal: null }
      : { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: CALL_ID, type: 'function', function: { name: turn.name, arguments: turn.args } }] };
  const choices = [{ index: 0, message, logprobs: null, finish_reason: turn.kind === 'call' ? 'tool_calls' : 'stop' }];
  return { id: 'chatcmpl-stub-responses', object: 'chat.completion', created: 1782955817, model, choices, usage: { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 } };
}

/** One Anthropic SSE event. */
const event = (type: string, data: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** An Anthropic Messages stream for a scripted turn (sequence of the recorded tool-use stream). */
function anthropicStream(turn: Scripted, model: string): string[] {
  const message = { id: 'msg_stub_responses', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 42, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } };
  const out = [event('message_start', { message })];
  if (turn.kind === 'final') {
    out.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    for (const part of halves(turn.text)) out.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: part } }));
  } else {
    out.push(event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: CALL_ID, name: turn.name, input: {} } }));
    for (const part of halves(turn.args)) out.push(event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: part } }));
  }
  out.push(event('content_block_stop', { index: 0 }));
  out.push(event('message_delta', { delta: { stop_reason: turn.kind === 'call' ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }));
  out.push(event('message_stop', {}));
  return out;
}

/** The same answer as one Anthropic message body. */
function anthropicMessage(turn: Scripted, model: string): Json {
  const content = turn.kind === 'final' ? [{ type: 'text', text: turn.text }] : [{ type: 'tool_use', id: CALL_ID, name: turn.name, input: JSON.parse(turn.args) }];
  return { id: 'msg_stub_responses', type: 'message', role: 'assistant', model, content, stop_reason: turn.kind === 'call' ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 42, output_tokens: 12 } };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One AWS event-stream frame of a Converse stream event (`:event-type` its name, the body its JSON). */
const frame = (type: string, data: Json): Buffer =>
  Buffer.from(
    codec.encode({
      headers: { ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: 'event' } },
      body: fromUtf8(JSON.stringify(data)),
    }),
  );

/** A Converse stream for a scripted turn (event sequence of the recorded tool-use stream). */
function converseStream(turn: Scripted): Buffer[] {
  const out = [frame('messageStart', { role: 'assistant' })];
  if (turn.kind === 'final') {
    for (const text of halves(turn.text)) out.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } }));
  } else {
    out.push(frame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { name: turn.name, toolUseId: CALL_ID } } }));
    for (const input of halves(turn.args)) out.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } } }));
  }
  out.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
  out.push(frame('messageStop', { stopReason: turn.kind === 'call' ? 'tool_use' : 'end_turn' }));
  out.push(frame('metadata', { usage: { inputTokens: 42, outputTokens: 12, totalTokens: 54 }, metrics: { latencyMs: 10 } }));
  return out;
}

/** The same answer as one Converse response body. */
function converseBody(turn: Scripted): Json {
  const content = turn.kind === 'final' ? [{ text: turn.text }] : [{ toolUse: { toolUseId: CALL_ID, name: turn.name, input: JSON.parse(turn.args) } }];
  return { output: { message: { role: 'assistant', content } }, stopReason: turn.kind === 'call' ? 'tool_use' : 'end_turn', usage: { inputTokens: 42, outputTokens: 12, totalTokens: 54 }, metrics: { latencyMs: 10 } };
}

/** Writes a 200 AWS event stream of `frames`. */
function sendEventStream(res: http.ServerResponse, frames: Buffer[]): void {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const f of frames) res.write(f);
  res.end();
}

/** Answers one provider request (the body already parsed). */
function answer(path: string, body: Json, res: http.ServerResponse): void {
  const model = String(body.model ?? '');
  const stream = body.stream === true;
  const converse = /^\/model\/[^/]+\/(converse|converse-stream)$/.exec(path);
  if (converse) {
    const turn = converseTurn(body);
    const streamed = converse[1] === 'converse-stream';
    if (turn.kind === 'recorded') return streamed ? sendEventStream(res, [F.converseStream]) : sendJson(res, 200, F.converse);
    return streamed ? sendEventStream(res, converseStream(turn)) : sendJson(res, 200, converseBody(turn));
  }
  if (path.endsWith('/responses')) {
    const turn = responsesTurn(body);
    if (turn.kind === 'recorded') return stream ? sendSse(res, [F.responsesStream], OPENAI_HEADERS) : sendJson(res, 200, F.responses, OPENAI_HEADERS);
    return stream ? sendSse(res, responsesStream(turn, model), OPENAI_HEADERS) : sendJson(res, 200, responsesBody(turn, model), OPENAI_HEADERS);
  }
  if (path.endsWith('/chat/completions')) {
    const turn = chatTurn(body);
    if (turn.kind === 'recorded') return stream ? sendSse(res, [F.chatStream]) : sendJson(res, 200, F.chat);
    return stream ? sendSse(res, chatStream(turn, model, body.stream_options?.include_usage === true)) : sendJson(res, 200, chatCompletion(turn, model));
  }
  if (path.endsWith('/messages')) {
    const turn = anthropicTurn(body);
    if (turn.kind === 'recorded') return stream ? sendSse(res, [F.anthropicStream]) : sendJson(res, 200, F.anthropic);
    return stream ? sendSse(res, anthropicStream(turn, model)) : sendJson(res, 200, anthropicMessage(turn, model));
  }
  sendJson(res, 404, { error: { message: `stub: no such path ${path}`, type: 'invalid_request_error', param: null, code: null } });
}

serveScripted(answer, (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
