/**
 * A stub model provider for driving a real coding-agent CLI (Claude Code) through a tool-use turn,
 * run in its own process (`node --import tsx test/support/claude-code-stub.ts`) like
 * `stub-upstream.ts`. It plays Anthropic (`POST …/messages`) and an OpenAI-compatible provider
 * (`POST …/chat/completions`), and decides each answer from the conversation it receives:
 *
 *   1. the last message carries a tool result (Anthropic: a `tool_result` block in the last user
 *      message; OpenAI: a last message of `role: "tool"`) → a final text answer
 *      `"The command printed: <the tool result's text, trimmed>"`;
 *   2. else a user text contains `Run this command with Bash: <command>` (to the end of its line)
 *      → a call of the `Bash` tool with `{command, description}` (Anthropic: a `tool_use` block and
 *      `stop_reason: "tool_use"`; OpenAI: a `tool_calls` delta and `finish_reason: "tool_calls"`);
 *   3. else the recorded plain answer of `test/fixtures/providers/`: Anthropic's
 *      `message-stream.sse` ("Hello there!") or `message.json`, OpenAI's `chat-completion-stream.sse`
 *      ("The capital of the UK is London.") or `chat-completion.json`, byte for byte.
 *
 * The tool-call and final-text streams of (1) and (2) are not recordings (no recording of a Bash
 * call exists): they follow the event sequence of the recorded `anthropic/message-stream-tool-use.sse`
 * and `openai/chat-completion-stream-tool-call.sse` (Anthropic API reference, "Streaming Messages";
 * OpenAI API reference, "The chat completion chunk object"), with the tool's name and arguments
 * changed. `stream: false` gets the same answers as one JSON body.
 *
 * `POST …/messages/count_tokens` answers `anthropic/count-tokens.json`. Any other path: 404 in
 * Anthropic's error shape. `GET /__requests` returns every request received (method, url,
 * headers, the body parsed) and `DELETE /__requests` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { sendJson as sendScriptedJson, sendSse as sendScriptedSse, serveScripted, type Json } from './scripted-stub.ts';

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));

const F = {
  anthropicStream: fixture('anthropic/message-stream.sse'),
  anthropic: fixture('anthropic/message.json'),
  anthropicCount: fixture('anthropic/count-tokens.json'),
  chatStream: fixture('openai/chat-completion-stream.sse'),
  chat: fixture('openai/chat-completion.json'),
};

/** The phrase that makes the stub call the Bash tool with the rest of the line as the command. */
const BASH_MARKER = 'Run this command with Bash: ';
/** What the final answer after a tool result starts with (followed by the result's text). */
const FINAL_PREFIX = 'The command printed: ';


/** What the stub decided to answer: a tool call, a final text after a tool result, or the recorded answer. */
type Turn = { kind: 'tool'; command: string } | { kind: 'final'; text: string } | { kind: 'recorded' };

/** The text of a tool result's `content` (a string, or an array of blocks of which the text ones count). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: Json) => (b?.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
  return '';
}

/** Every user text of a conversation in either dialect (string content or text blocks/parts). */
function userTexts(messages: Json[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') out.push(m.content);
    else if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'text' && typeof b.text === 'string') out.push(b.text);
  }
  return out;
}

/** The command after {@link BASH_MARKER} in a user text, if any. */
function bashCommand(messages: Json[]): string | null {
  for (const t of userTexts(messages)) {
    const i = t.indexOf(BASH_MARKER);
    if (i >= 0) return t.slice(i + BASH_MARKER.length).split('\n')[0]!.trim();
  }
  return null;
}

/** Decides an Anthropic Messages turn (see the module comment). */
function anthropicTurn(body: Json): Turn {
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: Json) => b?.type === 'tool_result') : undefined;
  if (result) return { kind: 'final', text: FINAL_PREFIX + resultText(result.content).trim() };
  const command = bashCommand(messages);
  return command === null ? { kind: 'recorded' } : { kind: 'tool', command };
}

/** Decides an OpenAI chat turn (see the module comment). */
function chatTurn(body: Json): Turn {
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { kind: 'final', text: FINAL_PREFIX + resultText(last.content).trim() };
  const command = bashCommand(messages);
  return command === null ? { kind: 'recorded' } : { kind: 'tool', command };
}

const bashInput = (command: string) => ({ command, description: 'Run the command the user asked for' });

/** One Anthropic SSE event. */
const event = (type: string, data: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** An Anthropic Messages stream for a tool call or a final text (sequence of the recorded tool-use stream). */
function anthropicStream(turn: Exclude<Turn, { kind: 'recorded' }>, model: string): string[] {
  const message = { id: 'msg_stub_claude_code', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 42, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } };
  const out = [event('message_start', { message })];
  if (turn.kind === 'final') {
    out.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    // Two deltas, so a client that joins them wrongly is caught.
    const cut = Math.ceil(turn.text.length / 2);
    for (const part of [turn.text.slice(0, cut), turn.text.slice(cut)]) out.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: part } }));
    out.push(event('content_block_stop', { index: 0 }));
  } else {
    const json = JSON.stringify(bashInput(turn.command));
    out.push(event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_stub_bash_1', name: 'Bash', input: {} } }));
    for (const part of [json.slice(0, 12), json.slice(12)]) out.push(event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: part } }));
    out.push(event('content_block_stop', { index: 0 }));
  }
  out.push(event('message_delta', { delta: { stop_reason: turn.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }));
  out.push(event('message_stop', {}));
  return out;
}

/** The same answer as one Anthropic message body. */
function anthropicMessage(turn: Exclude<Turn, { kind: 'recorded' }>, model: string): Json {
  const content = turn.kind === 'final' ? [{ type: 'text', text: turn.text }] : [{ type: 'tool_use', id: 'toolu_stub_bash_1', name: 'Bash', input: bashInput(turn.command) }];
  return { id: 'msg_stub_claude_code', type: 'message', role: 'assistant', model, content, stop_reason: turn.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 42, output_tokens: 12 } };
}

/** One OpenAI chat completion chunk as an SSE `data:` line. */
function chunk(model: string, delta: Json, finish: string | null, usage: Json | null = null): string {
  const choices = usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-stub-claude-code', object: 'chat.completion.chunk', created: 1782955817, model, choices, usage })}\n\n`;
}

/** An OpenAI chat stream for a tool call or a final text (sequence of the recorded tool-call stream). */
function chatStream(turn: Exclude<Turn, { kind: 'recorded' }>, model: string, includeUsage: boolean): string[] {
  const out: string[] = [];
  if (turn.kind === 'final') {
    out.push(chunk(model, { role: 'assistant', content: '', refusal: null }, null));
    const cut = Math.ceil(turn.text.length / 2);
    for (const part of [turn.text.slice(0, cut), turn.text.slice(cut)]) out.push(chunk(model, { content: part }, null));
    out.push(chunk(model, {}, 'stop'));
  } else {
    const json = JSON.stringify(bashInput(turn.command));
    out.push(chunk(model, { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_stub_bash_1', type: 'function', function: { name: 'Bash', arguments: '' } }], refusal: null }, null));
    for (const part of [json.slice(0, 12), json.slice(12)]) out.push(chunk(model, { tool_calls: [{ index: 0, function: { arguments: part } }] }, null));
    out.push(chunk(model, {}, 'tool_calls'));
  }
  if (includeUsage) out.push(chunk(model, {}, null, { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 }));
  out.push('data: [DONE]\n\n');
  return out;
}

/** The same answer as one chat.completion body. */
function chatCompletion(turn: Exclude<Turn, { kind: 'recorded' }>, model: string): Json {
  const message =
    turn.kind === 'final'
      ? { role: 'assistant', content: turn.text, refusal: null }
      : { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_stub_bash_1', type: 'function', function: { name: 'Bash', arguments: JSON.stringify(bashInput(turn.command)) } }] };
  return {
    id: 'chatcmpl-stub-claude-code',
    object: 'chat.completion',
    created: 1782955817,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: turn.kind === 'tool' ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 42, completion_tokens: 12, total_tokens: 54 },
  };
}

/** Every answer carries a request-id, as Anthropic's do. */
const HEADERS = { 'request-id': 'req_stub_claude_code' };
const sendJson = (res: http.ServerResponse, status: number, body: Buffer | Json): void => sendScriptedJson(res, status, body, HEADERS);
const sendSse = (res: http.ServerResponse, parts: Array<string | Buffer>): void => sendScriptedSse(res, parts, HEADERS);

/** Answers one provider request (the body already parsed). */
function answer(path: string, body: Json, res: http.ServerResponse): void {
  const model = String(body.model ?? '');
  const stream = body.stream === true;
  if (path.endsWith('/messages/count_tokens')) return sendJson(res, 200, F.anthropicCount);
  if (path.endsWith('/messages')) {
    const turn = anthropicTurn(body);
    if (turn.kind === 'recorded') return stream ? sendSse(res, [F.anthropicStream]) : sendJson(res, 200, F.anthropic);
    return stream ? sendSse(res, anthropicStream(turn, model)) : sendJson(res, 200, anthropicMessage(turn, model));
  }
  if (path.endsWith('/chat/completions')) {
    const turn = chatTurn(body);
    if (turn.kind === 'recorded') return stream ? sendSse(res, [F.chatStream]) : sendJson(res, 200, F.chat);
    return stream ? sendSse(res, chatStream(turn, model, body.stream_options?.include_usage === true)) : sendJson(res, 200, chatCompletion(turn, model));
  }
  sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `stub: no such path ${path}` } });
}

serveScripted(answer, (message, status) => ({ type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message } }));
