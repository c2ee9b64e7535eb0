/**
 * A stub of Bedrock's runtime for the chat and embeddings translations, run in its own process
 * (`node --import tsx test/support/bedrock-stub.ts`) like `stub-upstream.ts`:
 *
 * - `POST /model/<id>/converse`: the recorded `bedrock/converse.json` with its text replaced: JSON following the
 *   request's `outputConfig.textFormat.structure.jsonSchema.schema` when it has one (./schema-example.ts), else
 *   {@link PLAIN_TEXT}; `/converse-stream` the same text as a ConverseStream event stream (messageStart, the text in
 *   two deltas, messageStop, metadata with the recording's usage), framed with @smithy/eventstream-codec;
 * - `POST /model/<id>/invoke`: an embedding model's answer, Cohere's (`cohere.embed…`: `{embeddings, id,
 *   response_type, texts}`, one vector a text) or Titan's (`{embedding, inputTextTokenCount}`), with Bedrock's
 *   `X-Amzn-Bedrock-Input-Token-Count` header (2 tokens a text), left out for a model id containing `no-token-count`.
 *
 * `GET /__requests` returns the requests received; `DELETE` clears them. Env: `STUB_PORT` (0 = any); the port is sent
 * over IPC as `{type: 'stub.ready', port}`.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { exampleOf } from './schema-example.ts';
import { sendJson, serveScripted, type Json } from './scripted-stub.ts';

/** The answer to a request without a format. */
export const PLAIN_TEXT = 'Hello from the Bedrock stub.';

const CONVERSE = JSON.parse(readFileSync(new URL('../fixtures/providers/bedrock/converse.json', import.meta.url), 'utf8')) as Json;

/** The text answering a Converse body: JSON of its format's schema (a JSON string, as Converse takes it), else the plain text. */
function answerText(body: Json): string {
  const schema: unknown = body.outputConfig?.textFormat?.structure?.jsonSchema?.schema;
  return typeof schema === 'string' ? JSON.stringify(exampleOf(JSON.parse(schema) as Json)) : PLAIN_TEXT;
}

/** A ConverseStream answer of `text`: one event-stream frame an event. */
async function converseStream(text: string): Promise<Buffer> {
  const [{ EventStreamCodec }, { fromUtf8, toUtf8 }] = await Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]);
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const half = Math.ceil(text.length / 2);
  const events: Array<[string, Json]> = [
    ['messageStart', { role: 'assistant' }],
    ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: text.slice(0, half) } }],
    ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: text.slice(half) } }],
    ['contentBlockStop', { contentBlockIndex: 0 }],
    ['messageStop', { stopReason: 'end_turn' }],
    ['metadata', { usage: CONVERSE.usage, metrics: CONVERSE.metrics }],
  ];
  const frames = events.map(([type, payload]) =>
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
  return Buffer.concat(frames);
}

/** An embedding model's answer to `body` (see the module comment), with the token count header unless the model id says `no-token-count`. */
function embeddings(model: string, body: Json, res: http.ServerResponse): void {
  const texts: string[] = Array.isArray(body.texts) ? body.texts : [String(body.inputText)];
  const headers: Record<string, string> = model.includes('no-token-count') ? {} : { 'X-Amzn-Bedrock-Input-Token-Count': String(2 * texts.length) };
  const vectors = texts.map((_t, i) => [0.5 + i, -0.25]);
  const answer = model.includes('cohere.embed')
    ? { embeddings: vectors, id: 'emb-1', response_type: 'embeddings_floats', texts }
    : { embedding: vectors[0], inputTextTokenCount: 2 * texts.length };
  sendJson(res, 200, answer, headers);
}

const bedrockError = (message: string): Json => ({ message });

serveScripted((path: string, body: Json, res: http.ServerResponse) => {
  const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(path);
  if (!route) return sendJson(res, 404, bedrockError(`stub: no route ${path}`), { 'x-amzn-errortype': 'UnknownOperationException' });
  const [, model, action] = route as unknown as [string, string, string];
  if (action === 'invoke') return embeddings(decodeURIComponent(model), body, res);
  const text = answerText(body);
  if (action === 'converse') {
    const answer = { ...CONVERSE, output: { message: { role: 'assistant', content: [{ text }] } } };
    return sendJson(res, 200, answer);
  }
  void converseStream(text).then((bytes) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'content-length': bytes.length });
    res.end(bytes);
  });
}, bedrockError);
