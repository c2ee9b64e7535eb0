/**
 * A stub provider, run in its own process (`node --import tsx test/support/gemini-parallel-tools-stub.ts`), playing
 * Gemini's OpenAI-compatible chat endpoint (`POST /v1beta/openai/chat/completions`) answering with two parallel tool
 * calls, `Read {"file_path":"/a"}` (id `jm4owj31`, with a thought signature) and `Bash {"command":"ls"}` (id
 * `k2p9xq07`):
 *   - streamed (`stream: true`), the way Gemini streams them: each call whole in a chunk of its own with its own id
 *     and no `tool_calls[].index` (request model `index-zero`: `index: 0` on every call, as some Gemini relays send),
 *     the first chunk also carrying `role`; then a chunk with `finish_reason: "stop"` (Gemini's finish reason for
 *     tool calls in a stream) and the usage; then `data: [DONE]`;
 *   - not streamed: one `chat.completion` whose `message.tool_calls` holds both calls, `finish_reason: "tool_calls"`.
 * No recording of a Gemini stream with parallel calls exists here; the chunk shape is the one Gemini's users captured
 * and quote (THU-MAIC/OpenMAIC#1556: `{"choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":
 * {"google":{"thought_signature":"…"}},"function":{"arguments":"…","name":"read"},"id":"call_297140","type":
 * "function"}]},"index":0}],"model":…,"object":"chat.completion.chunk"}`; noho/dayu-agent#45: each call given whole
 * in one delta without `index`; su-kaka/gcli2api#406: index 0 on every parallel call; googleapis/python-genai#2868:
 * `finish_reason` `stop` when streaming tool calls), and the non-streamed body follows the recorded
 * `gemini/openai-compat-chat-completion-tool-call.json`.
 * `GET /__requests` lists the requests received, `DELETE` clears them.
 */
import type http from 'node:http';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

/** The two calls, as Gemini gives each: whole, with its id (and, on the first, its thought signature). */
const CALLS: readonly Json[] = [
  { extra_content: { google: { thought_signature: 'c2lnbmF0dXJlLWE=' } }, function: { arguments: '{"file_path":"/a"}', name: 'Read' }, id: 'jm4owj31', type: 'function' },
  { function: { arguments: '{"command":"ls"}', name: 'Bash' }, id: 'k2p9xq07', type: 'function' },
];
const USAGE = { completion_tokens: 24, prompt_tokens: 61, total_tokens: 85 };

const event = (data: Json): string => `data: ${JSON.stringify(data)}\n\n`;

/** The stream's events; `withIndex` puts `index: 0` on every call. */
function stream(model: string, withIndex: boolean): string[] {
  const base = { created: 1760000000, id: 'Zr9aaPq3Lc2nz7IP9sWf8Q0', model, object: 'chat.completion.chunk' };
  const chunk = (delta: Json, finish: string | null, extra: Json = {}): string => event({ ...base, choices: [{ delta, finish_reason: finish, index: 0 }], ...extra });
  const tool = (c: Json): Json => (withIndex ? { index: 0, ...c } : c);
  return [
    chunk({ role: 'assistant', tool_calls: [tool(CALLS[0]!)] }, null),
    chunk({ role: 'assistant', tool_calls: [tool(CALLS[1]!)] }, null),
    chunk({ role: 'assistant' }, 'stop', { usage: USAGE }),
    'data: [DONE]\n\n',
  ];
}

function answer(path: string, body: Json, res: http.ServerResponse): void {
  if (path !== '/v1beta/openai/chat/completions') throw new Error(`no answer for ${path}`);
  const model = String(body.model);
  if (body.stream === true) return sendSse(res, stream(model, model === 'index-zero'));
  sendJson(res, 200, {
    choices: [{ finish_reason: 'tool_calls', index: 0, message: { role: 'assistant', tool_calls: CALLS } }],
    created: 1760000000,
    id: 'Zr9aaPq3Lc2nz7IP9sWf8Q1',
    model,
    object: 'chat.completion',
    usage: USAGE,
  });
}

serveScripted(answer, (message, status) => ({ error: { code: status, message, status: 'INVALID_ARGUMENT' } }));
