/**
 * `anthropic-messages` → `bedrock-invoke`: a Messages client's request to one of Anthropic's models on Bedrock,
 * through InvokeModel / InvokeModelWithResponseStream. Bedrock takes Anthropic's own Messages body there, so this is
 * a framing change only:
 * - request: the client's body with `anthropic_version: "bedrock-2023-05-31"`, without `model` (it is in the URL)
 *   and `stream` (the action says it), and with the client's `anthropic-beta` header values and its own
 *   `anthropic_beta` as the body's `anthropic_beta` array (Bedrock reads betas there, not from headers), only
 *   those Bedrock takes (./wire/bedrock-betas.ts: any other would make Bedrock refuse the request), the others
 *   recorded as removed;
 * - response: Anthropic's `message` as Bedrock returns it, unchanged;
 * - stream: AWS event-stream frames whose `chunk` events carry `{"bytes": "<base64>"}`, each the JSON of one
 *   Anthropic stream event, re-emitted as Anthropic's SSE (`event: <type>\ndata: <that JSON as sent>\n\n`); an
 *   exception frame, a corrupt frame or a stream cut before `message_stop` ends it with an `event: error`.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html,
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming.
 */
import type { Transform, TransformCallback } from 'node:stream';
import { providerErrorText } from './shared/provider-errors.ts';
import { TranslatorStream } from './shared/translator-stream.ts';
import { isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from './types.ts';
import { anthropicErrorBody, anthropicErrorType } from './wire/anthropic-messages.ts';
import { EventStreamReader, headerString, loadEventStream, type EventStreamHeaders, type EventStreamSink } from './wire/aws-eventstream.ts';
import { bedrockErrorType, exceptionName } from './wire/bedrock.ts';
import { BEDROCK_ANTHROPIC_BETAS, bedrockBetas } from './wire/bedrock-betas.ts';

/** The `anthropic_version` Bedrock requires in an Anthropic model's InvokeModel body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * A call as the Bedrock transport hands it over (`ProviderCall`): the client's request headers
 * (`req.rawHeaders` pairs), of which the translator reads only `anthropic-beta`, and the betas the
 * provider's config lets through (`providers.bedrock.anthropic-betas`; null or absent: Bedrock's documented list).
 */
interface BedrockInvokeCall extends TranslatorCall {
  clientHeaders?: readonly string[] | null;
  config?: { anthropicBetas?: readonly string[] | null };
}

/**
 * The beta names of the client's `anthropic-beta` headers (`req.rawHeaders` pairs), every header and every
 * comma-separated value, trimmed, in order, without repeats; empty when none.
 */
export function anthropicBetas(raw: readonly string[] | null | undefined): string[] {
  const betas: string[] = [];
  if (!raw) return betas;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'anthropic-beta') continue;
    for (const part of raw[i + 1]!.split(',')) {
      const beta = part.trim();
      if (beta && !betas.includes(beta)) betas.push(beta);
    }
  }
  return betas;
}

function ignore(): void {}

/** The InvokeModel body (see the module comment); a streaming request also starts loading the event-stream codec. */
function translateRequest(call: TranslatorCall): Buffer {
  const { model: _model, stream: _stream, anthropic_beta: fromBody, ...rest } = call.body as Record<string, unknown>;
  const body: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  body.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
  const c = call as BedrockInvokeCall;
  const betas = bedrockBetas(anthropicBetas(c.clientHeaders), fromBody, c.config?.anthropicBetas ?? BEDROCK_ANTHROPIC_BETAS, call.removed);
  if (betas.length > 0) body.anthropic_beta = betas;
  if (call.stream) loadEventStream().catch(ignore);
  return Buffer.from(JSON.stringify(body));
}

/** Bedrock's answer is Anthropic's `message`: unchanged; 502 in Anthropic's shape when it is not a JSON object. */
function translateResponse(body: Buffer): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed)) return { status: 502, body: anthropicErrorBody('api_error', 'bedrock returned a response that is not a JSON object') };
  return { status: 200, body: parsed };
}

/** One Anthropic `error` event. */
function errorEvent(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(type, message))}\n\n`;
}

/**
 * InvokeModelWithResponseStream event-stream bytes in, Anthropic SSE bytes out, one instance per response. Frames
 * come whole from an {@link EventStreamReader}; events collect in `out` and are pushed once per input piece.
 */
class BedrockAnthropicStream extends TranslatorStream implements EventStreamSink {
  private readonly frames = new EventStreamReader();

  constructor(private readonly call: TranslatorCall) {
    super();
  }

  get acceptsFrames(): boolean {
    return this.state === 'open';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.frames.write(chunk, this, callback);
  }

  override _flush(callback: TransformCallback): void {
    if (this.state === 'open') this.fail('api_error', 'bedrock ended the stream before message_stop');
    this.drain();
    callback();
  }

  onUnreadable(message: string): void {
    this.fail('api_error', message);
  }

  private fail(type: string, message: string): void {
    this.out += errorEvent(type, message);
    this.state = 'failed';
  }

  onFrame(headers: EventStreamHeaders, body: Record<string, unknown>): void {
    const messageType = headerString(headers, ':message-type') ?? 'event';
    if (messageType === 'event') {
      if (headerString(headers, ':event-type') === 'chunk') this.onChunk(body);
      return;
    }
    // An exception frame (`:exception-type`, `{message}`) or an error frame (`:error-code`, `:error-message`).
    const name = exceptionName(headerString(headers, ':exception-type')) ?? headerString(headers, ':error-code') ?? null;
    const text = typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : headerString(headers, ':error-message');
    this.fail(anthropicErrorType(bedrockErrorType(name, 500)), text ? providerErrorText(text, this.call) : `bedrock stream exception ${name ?? ''}`.trim());
  }

  /** A `chunk` event: its base64 `bytes` are one Anthropic event's JSON, sent on as they are. */
  private onChunk(body: Record<string, unknown>): void {
    if (typeof body.bytes !== 'string') return;
    const json = Buffer.from(body.bytes, 'base64').toString('utf8');
    const event = parseJson(json);
    if (!isRecord(event) || typeof event.type !== 'string' || !/^[a-z_]+$/.test(event.type)) {
      this.fail('api_error', 'bedrock sent a stream chunk that is not an Anthropic event');
      return;
    }
    if (event.type === 'error') {
      // Anthropic's own error event, sent on as it came but for the credentials its text may repeat.
      this.out += `event: error\ndata: ${providerErrorText(json, this.call)}\n\n`;
      this.state = 'failed';
      return;
    }
    this.out += `event: ${event.type}\ndata: ${json}\n\n`;
    if (event.type === 'message_stop') this.state = 'done';
  }
}

/**
 * A fresh transform from InvokeModelWithResponseStream's event stream to Anthropic's SSE (see the module comment).
 * Frames may be split anywhere across input pieces. `call`: only its `redactor`, for a failure's provider text.
 */
export function createBedrockAnthropicStream(call: TranslatorCall): Transform {
  return new BedrockAnthropicStream(call);
}

/** `anthropic-messages` → `bedrock-invoke` (see the module comment). */
export const anthropicMessagesToBedrockInvoke: MappingTranslator = {
  dialect: 'anthropic-messages',
  wireFormat: 'bedrock-invoke',
  identity: false,
  translateRequest,
  translateResponse,
  createStreamTranslator: createBedrockAnthropicStream,
};
