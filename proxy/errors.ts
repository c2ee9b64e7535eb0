/**
 * Gateway errors: each a status, an OpenAI error `type` and a stable `code`, answered to the client
 * in the error shape of the endpoint kind it called ({@link ErrorShape}; both current kinds use
 * OpenAI's `{"error":{"message","type","param","code"}}`).
 */
import type { ServerResponse } from 'node:http';
import type { OpenAIErrorBody } from '../shared/chat.ts';

/** An error the gateway answers to its client. `status` is the HTTP status (400..599). */
export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = status >= 500 ? 'server_error' : 'invalid_request_error',
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** Extra response headers, e.g. `Retry-After` on 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The OpenAI-shaped body of this error. */
  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 for a malformed request; `param` names the offending member. */
export function badRequest(message: string, param: string | null = null, code: string | null = 'invalid_request'): GatewayError {
  return new GatewayError(400, message, 'invalid_request_error', code, param);
}

/**
 * 503 `provider_key_missing`: the gateway holds no credentials for `provider`, so nothing is sent
 * to it. The gateway's own configuration is at fault, not the client's request or key, hence a 5xx
 * that names what the operator must set. `envHint` names the environment variable(s), e.g.
 * `OPENAI_API_KEY`.
 */
export function providerKeyMissing(provider: string, envHint: string): GatewayError {
  return new GatewayError(503, `provider ${provider} has no API key: set ${envHint}`, 'server_error', 'provider_key_missing');
}

/** Builds the JSON error body a client of one endpoint kind expects from a {@link GatewayError}. */
export type ErrorShape = (err: GatewayError) => unknown;

/** OpenAI's error shape `{"error":{"message","type","param","code"}}` (https://platform.openai.com/docs/guides/error-codes). */
export const openAIErrorShape: ErrorShape = (err) => err.toBody();

/**
 * Writes `err` to `res` as a JSON error in `shape` (OpenAI's by default), unless headers were
 * already sent (then the response is ended as it stands). `extraHeaders` are added (e.g. `Svc-Id`).
 */
export function sendError(res: ServerResponse, err: GatewayError, extraHeaders: Record<string, string> = {}, shape: ErrorShape = openAIErrorShape): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = JSON.stringify(shape(err));
  res.writeHead(err.status, {
    ...extraHeaders,
    ...err.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
