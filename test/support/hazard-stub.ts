/**
 * A provider stub whose answers strain the gateway's reading of a response body, run in its own
 * process (`node --import tsx test/support/hazard-stub.ts`). It serves OpenAI chat completions
 * (`…/chat/completions`), Anthropic Messages (`…/messages`) and OpenAI Responses (`…/responses`)
 * from the recorded fixtures of `test/fixtures/providers/`; the request's model (after any
 * `<provider>/` prefix, then `<behaviour>:<argument>`) picks the behaviour:
 *   - `firehose:<MiB>` → a stream of that many MiB of text deltas, written as fast as the
 *     connection takes them, then the stream's normal end;
 *   - `big-json:<KiB>` → a 200 JSON answer (its length said) whose text is that many KiB of `y`;
 *   - `endless-json` → a 200 JSON answer without a length whose text never ends (64 KiB pieces as
 *     fast as the connection takes them);
 *   - `trickle-json:<ms>` / `trickle-error:<ms>` → a 200 / 400 JSON answer's first bytes, then one
 *     byte every `<ms>` (default 200) for as long as the connection stays open;
 *   - `hang-mid-stream` → the stream's first two events, then silence;
 *   - `gzip`, `br`, `deflate` → the normal answer (JSON, or the stream with `stream: true`) encoded
 *     so, with `content-encoding` (a stream is written in pieces as encoded, flushed per event);
 *     `gzip-error` → OpenAI's 429 body gzip-encoded; `gzip-bad` → `content-encoding: gzip` on bytes
 *     that are not gzip; `compress` → the normal answer (JSON or stream) under `content-encoding:
 *     compress`, a coding the gateway does not read; `gzip-hang` → the stream gzip-encoded, its
 *     first two events, then silence (the connection left open);
 *   - anything else → the recorded answer.
 * `GET /__responses` lists every answer: `{model, path, written (bytes the stub wrote), closedAt
 * (epoch ms or null), finished (the stub ended it itself)}`; `DELETE /__responses` forgets them.
 * The port (`STUB_PORT`, 0 = any) is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { serveStub } from './scripted-stub.ts';

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);
const fixture = (name: string): Buffer => readFileSync(new URL(name, FIXTURES));
const JSON_ANSWERS = { chat: fixture('openai/chat-completion.json'), messages: fixture('anthropic/message.json'), responses: fixture('openai/responses-text.json') };
const STREAMS = { chat: fixture('openai/chat-completion-stream.sse'), messages: fixture('anthropic/message-stream-recorded.sse'), responses: fixture('openai/responses-stream.sse') };
const ERROR_429 = fixture('openai/error-429.json');
type Kind = keyof typeof JSON_ANSWERS;

/** One answer the stub gave, as `GET /__responses` lists it. */
interface Answer {
  model: string;
  path: string;
  written: number;
  closedAt: number | null;
  finished: boolean;
}
const answers: Answer[] = [];

/** A stream's events (each with its blank line). */
const eventsOf = (sse: Buffer): string[] => sse.toString('utf8').split(/(?<=\n\n)/).filter(Boolean);

/** One text-delta event of `kind`'s stream carrying `text`. */
function deltaEvent(kind: Kind, text: string): string {
  const t = JSON.stringify(text);
  if (kind === 'chat') return `data: {"id":"chatcmpl-hazard","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":${t}},"finish_reason":null}]}\n\n`;
  if (kind === 'messages') return `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${t}}}\n\n`;
  return `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_hazard","output_index":0,"content_index":0,"delta":${t}}\n\n`;
}

/** `kind`'s recorded JSON answer with its text replaced by `text`. */
function jsonWithText(kind: Kind, text: string): Buffer {
  const o = JSON.parse(JSON_ANSWERS[kind].toString('utf8'));
  if (kind === 'chat') o.choices[0].message.content = text;
  else if (kind === 'messages') o.content = [{ type: 'text', text }];
  else o.output = [{ type: 'message', id: 'msg_hazard', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }];
  return Buffer.from(JSON.stringify(o));
}

/** Writes `next()` pieces as fast as `res` takes them until it returns null, then ends `res` with `last`. */
function pump(res: http.ServerResponse, answer: Answer, next: () => string | Buffer | null, last: string | null): void {
  const go = (): void => {
    for (;;) {
      if (res.destroyed) return;
      const piece = next();
      if (piece === null) {
        if (last !== null) res.end(last);
        return;
      }
      answer.written += Buffer.byteLength(piece);
      if (!res.write(piece)) {
        res.once('drain', go);
        return;
      }
    }
  };
  go();
}

/** Writes the first bytes of a JSON answer, then one byte every `everyMs` until the connection closes. */
function trickle(res: http.ServerResponse, answer: Answer, status: number, head: string, everyMs: number): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.write(head);
  answer.written += head.length;
  const timer = setInterval(() => {
    res.write('x');
    answer.written++;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

const ENCODERS = { gzip: zlib.gzipSync, br: zlib.brotliCompressSync, deflate: zlib.deflateSync } as const;
const STREAM_ENCODERS = { gzip: zlib.createGzip, br: zlib.createBrotliCompress, deflate: zlib.createDeflate } as const;

/** The normal answer encoded as `encoding` (a stream through an encoder flushed after each event). */
function encoded(res: http.ServerResponse, kind: Kind, stream: boolean, encoding: keyof typeof ENCODERS): void {
  if (!stream) {
    const bytes = ENCODERS[encoding](JSON_ANSWERS[kind]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': bytes.length });
    res.end(bytes);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'content-encoding': encoding });
  const encoder = STREAM_ENCODERS[encoding]();
  encoder.pipe(res);
  const events = eventsOf(STREAMS[kind]);
  let i = 0;
  const step = (): void => {
    if (i === events.length) return void encoder.end();
    encoder.write(events[i++]);
    encoder.flush(() => setTimeout(step, 2));
  };
  step();
}

serveStub((req, res, raw) => {
  const url = req.url ?? '/';
  if (url === '/__responses') {
    if (req.method === 'DELETE') answers.length = 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(answers));
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    // an unreadable body gets the default answer
  }
  const kind: Kind = url.endsWith('/messages') ? 'messages' : url.endsWith('/responses') ? 'responses' : 'chat';
  const model = String(body.model ?? '').replace(/^[a-z]+\//, '');
  const [behaviour, arg] = model.split(':') as [string, string | undefined];
  const answer: Answer = { model, path: url, written: 0, closedAt: null, finished: false };
  answers.push(answer);
  res.on('close', () => {
    answer.closedAt = Date.now();
    answer.finished = res.writableFinished;
  });
  const stream = body.stream === true;
  switch (behaviour) {
    case 'firehose': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const events = eventsOf(STREAMS[kind]);
      // The recorded stream's opening events, the deltas, then its closing events.
      const opening = kind === 'chat' ? [] : events.slice(0, 2);
      const closing = events.slice(-3);
      const delta = deltaEvent(kind, 'x'.repeat(4000));
      let left = Number(arg ?? 20) * 1024 * 1024;
      for (const e of opening) res.write(e);
      pump(res, answer, () => (left <= 0 ? null : ((left -= delta.length), delta)), closing.join(''));
      return;
    }
    case 'big-json': {
      const bytes = jsonWithText(kind, 'y'.repeat(Number(arg ?? 1024) * 1024));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      answer.written = bytes.length;
      res.end(bytes);
      return;
    }
    case 'endless-json': {
      res.writeHead(200, { 'content-type': 'application/json' });
      const piece = 'y'.repeat(64 * 1024);
      let first = true;
      pump(res, answer, () => (first ? ((first = false), '{"id":"endless","text":"') : piece), null);
      return;
    }
    case 'trickle-json':
      return trickle(res, answer, 200, '{"id":"', Number(arg ?? 200));
    case 'trickle-error':
      return trickle(res, answer, 400, '{"error":{"message":"', Number(arg ?? 200));
    case 'hang-mid-stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      for (const e of eventsOf(STREAMS[kind]).slice(0, 2)) res.write(e);
      return;
    }
    case 'gzip':
    case 'br':
    case 'deflate':
      return encoded(res, kind, stream, behaviour);
    case 'gzip-error': {
      const bytes = zlib.gzipSync(ERROR_429);
      res.writeHead(429, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': bytes.length });
      return void res.end(bytes);
    }
    case 'compress': {
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'content-encoding': 'compress' });
      return void res.end(stream ? STREAMS[kind] : JSON_ANSWERS[kind]);
    }
    case 'gzip-hang': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'content-encoding': 'gzip' });
      const encoder = zlib.createGzip();
      encoder.pipe(res);
      for (const e of eventsOf(STREAMS[kind]).slice(0, 2)) encoder.write(e);
      encoder.flush();
      return;
    }
    case 'gzip-bad': {
      const bytes = Buffer.from('this is not gzip at all');
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'content-encoding': 'gzip', 'content-length': bytes.length });
      return void res.end(bytes);
    }
    default:
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        return void res.end(STREAMS[kind]);
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': JSON_ANSWERS[kind].length });
      res.end(JSON_ANSWERS[kind]);
  }
});
