/**
 * Stage validate: the body read is UTF-8 JSON, nested at most {@link MAX_JSON_DEPTH} deep, an
 * object; then the endpoint kind checks its members (or, for a request naming a managed prompt,
 * the prompt members: the kind checks the merged body after resolve-prompt). One byte scan before
 * `JSON.parse` bounds the depth and finds the top-level `"model"` bytes, so translate can forward the
 * client's own bytes with only the model spliced in.
 */
import { isUtf8 } from 'node:buffer';
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { isObject } from '../endpoints/members.ts';
import { badRequest } from '../errors.ts';
import { scanJson } from '../json-scan.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { checkSessionHeaders, header } from '../pipeline/headers.ts';

/** Deepest JSON nesting accepted in a request body (objects and arrays); deeper is a 400. */
export const MAX_JSON_DEPTH = 128;

/**
 * Parses `ctx.rawBody` into `ctx.body`/`ctx.clientBody`, checks the session headers
 * (`Svc-Session-Id`, `-Path`, `-Name`), applies `Svc-Model-Override`, and keeps the body's text for
 * the log (observability, no override) and the model's byte span.
 * @throws {GatewayError} 400 `invalid_encoding`, `too_deep`, `invalid_json`, `invalid_body`,
 *   `invalid_header` (a session header, named in `param`), or the
 *   kind's member errors (`missing_model`, `invalid_type`, ... naming the member).
 */
export function validate(ctx: RequestContext): void {
  const raw = ctx.rawBody!;
  if (!isUtf8(raw)) throw badRequest('the request body is not valid UTF-8', null, 'invalid_encoding');
  const scan = scanJson(raw, MAX_JSON_DEPTH);
  if (scan.tooDeep) throw badRequest(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, null, 'too_deep');
  const text = raw.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON body: ${(err as Error).message}`, null, 'invalid_json');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object', null, 'invalid_body');
  const b = body as ChatCompletionRequest;
  // The scan's span is used only when it holds exactly what JSON.parse read (no escapes, no surprises).
  if (scan.modelStart >= 0 && typeof b.model === 'string' && raw.toString('utf8', scan.modelStart, scan.modelEnd) === JSON.stringify(b.model)) {
    ctx.modelStart = scan.modelStart;
    ctx.modelEnd = scan.modelEnd;
  }
  checkSessionHeaders(ctx.req);
  const override = header(ctx.req, 'svc-model-override');
  if (override) b.model = override;
  else if (ctx.gw.observe) ctx.rawBodyLogged = true;
  if (b.prompt_id !== undefined && ctx.kind.prompts) validatePromptMembers(b);
  else ctx.kind.validate(b);
  ctx.body = b;
  ctx.clientBody = b;
  ctx.requestModel = typeof b.model === 'string' ? b.model : null;
}

/**
 * The members naming a managed prompt: `prompt_id` a non-empty string, `version_id` and
 * `environment` strings, `inputs` an object.
 * @throws {GatewayError} 400 `invalid_type` naming the member.
 */
export function validatePromptMembers(b: Record<string, unknown>): void {
  if (typeof b.prompt_id !== 'string' || b.prompt_id.length === 0) throw badRequest('"prompt_id" must be a non-empty string', 'prompt_id', 'invalid_type');
  for (const k of ['version_id', 'environment'] as const) {
    if (b[k] !== undefined && b[k] !== null && typeof b[k] !== 'string') throw badRequest(`"${k}" must be a string`, k, 'invalid_type');
  }
  if (b.inputs !== undefined && b.inputs !== null && !isObject(b.inputs)) throw badRequest('"inputs" must be an object', 'inputs', 'invalid_type');
}
