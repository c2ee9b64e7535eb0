/**
 * A stub provider, run in its own process (`node --import tsx test/support/provider-quirks-stub.ts`), for
 * two answers of OpenAI-compatible providers that differ from OpenAI's own:
 *   - Gemini's OpenAI-compatible endpoint (`POST /v1beta/openai/chat/completions`, `…/embeddings`) answers
 *     an error as a one-element JSON array around Google's error object: `[{"error": {"code": 400,
 *     "message", "status": "INVALID_ARGUMENT", "details"}}]`. The request's `model` picks it: `error-400`
 *     (an unknown member, as Google reports it) or `error-429` (`RESOURCE_EXHAUSTED`); any other model gets
 *     the recorded `gemini/openai-compat-chat-completion.json` (chat) or a two-number embedding.
 *     No recording of such an error body exists; its shape is the one Gemini's users quote, e.g.
 *     SuzumiyaAkizuki/ComfyUI-NewBie-LLM-Formatter#3 and leookun/cursor-byok#112 (400 `Invalid JSON payload
 *     received. Unknown name "…": Cannot find field.`).
 *   - Azure OpenAI's chat stream (`POST /openai/deployments/<deployment>/chat/completions` with `stream:
 *     true`) starts with the prompt's content-filter chunk, `{"choices": [], "id": "", "model": "",
 *     "created": 0, "object": "", "prompt_filter_results": [...]}`, carries `content_filter_results` on each
 *     choice and a `content_filter_offsets` chunk (again with empty id and model) after the finish chunk, then
 *     the usage chunk and `data: [DONE]`. Made here after Microsoft Learn, "Azure OpenAI content filtering"
 *     (annotations in streaming) and "Azure OpenAI in Azure AI Foundry Models REST API reference". A test
 *     gets the bytes to compare by asking the stub itself.
 * `GET /__requests` lists the requests received, `DELETE` clears them.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

const GEMINI_CHAT = readFileSync(new URL('../fixtures/providers/gemini/openai-compat-chat-completion.json', import.meta.url));

/** Gemini's array-wrapped error bodies by request model, with their HTTP status. */
const GEMINI_ERRORS: Readonly<Record<string, { status: number; body: unknown }>> = {
  'error-400': {
    status: 400,
    body: [
      {
        error: {
          code: 400,
          message: 'Invalid JSON payload received. Unknown name "foo": Cannot find field.',
          status: 'INVALID_ARGUMENT',
          details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: 'Invalid JSON payload received. Unknown name "foo": Cannot find field.' }] }],
        },
      },
    ],
  },
  'error-429': { status: 429, body: [{ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }] },
};

const FILTER = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
const CHUNK = { created: 1729000000, id: 'chatcmpl-AZURE1', model: 'gpt-4o-mini-2024-07-18', object: 'chat.completion.chunk', system_fingerprint: 'fp_azure' };
const event = (data: Json): string => `data: ${JSON.stringify(data)}\n\n`;

/** Azure's chat stream, event by event: the content-filter chunk first, `data: [DONE]` last. */
const AZURE_STREAM: readonly string[] = [
  event({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER }] }),
  event({ ...CHUNK, choices: [{ content_filter_results: {}, delta: { content: '', refusal: null, role: 'assistant' }, finish_reason: null, index: 0, logprobs: null }], usage: null }),
  event({ ...CHUNK, choices: [{ content_filter_results: FILTER, delta: { content: 'Hello' }, finish_reason: null, index: 0, logprobs: null }], usage: null }),
  event({ ...CHUNK, choices: [{ content_filter_results: FILTER, delta: { content: ' there' }, finish_reason: null, index: 0, logprobs: null }], usage: null }),
  event({ ...CHUNK, choices: [{ content_filter_results: {}, delta: {}, finish_reason: 'stop', index: 0, logprobs: null }], usage: null }),
  event({ choices: [{ content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 11 }, content_filter_results: FILTER, finish_reason: null, index: 0 }], created: 0, id: '', model: '', object: '' }),
  event({ ...CHUNK, choices: [], usage: { completion_tokens: 3, prompt_tokens: 10, total_tokens: 13, prompt_tokens_details: { cached_tokens: 0 } } }),
  'data: [DONE]\n\n',
];

function answer(path: string, body: Json, res: http.ServerResponse): void {
  if (path.startsWith('/v1beta/openai/')) {
    const error = GEMINI_ERRORS[String(body.model)];
    if (error) return sendJson(res, error.status, Buffer.from(JSON.stringify(error.body)));
    if (path.endsWith('/embeddings')) return sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: body.model });
    return sendJson(res, 200, GEMINI_CHAT);
  }
  if (path.startsWith('/openai/deployments/') && path.endsWith('/chat/completions') && body.stream === true) return sendSse(res, [...AZURE_STREAM]);
  throw new Error(`no answer for ${path}`);
}

serveScripted(answer, (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
