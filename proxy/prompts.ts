/**
 * Managed prompts through the gateway. A chat request may carry `prompt_id`, optionally `version_id`
 * or `environment` (default `production`), and `inputs`. The prompt version's body (fetched from
 * admin over the control plane and cached) supplies the defaults: the request's own members override
 * them, and the request's messages are appended after the prompt's. Two members are the client's
 * transport choice and never the prompt's: `stream` is not taken from the prompt, and its
 * `stream_options` only when the request streams (OpenAI refuses stream_options without stream).
 * Variables written `{{svc:<name>:<type>}}` (../shared/prompt-placeholders.ts) in the prompt's
 * messages are replaced by `inputs[name]`.
 */
import type { ChatCompletionRequest, ChatMessage } from '../shared/chat.ts';
import { PLACEHOLDER } from '../shared/prompt-placeholders.ts';
import { unknownPromptMember } from '../shared/prompt-lookup.ts';
import type { ControlPlaneClient, PromptVersion } from './controlplane.ts';
import { badRequest, GatewayError } from './errors.ts';

/**
 * The managed prompt a request named, as far as it was resolved: once applied, `body` is the merged
 * body and the version is set; while (or when) the lookup is pending or failed, `body` is the
 * client's and `versionId`/`version` are null, so the log record of a failed resolution still names
 * the prompt (and the version, when only the inputs or the merged body were wrong).
 */
export interface AppliedPrompt {
  /** The merged body to send (the client's until the prompt is merged). */
  body: ChatCompletionRequest;
  /** The client's body as received (for the log). */
  originalBody: ChatCompletionRequest;
  promptId: string;
  /** Null until the version is found. */
  versionId: string | null;
  /** `major.minor`; null until the version is found. */
  version: string | null;
  environment: string | null;
  inputs: Record<string, unknown>;
}

/**
 * Replaces `{{svc:name:type}}` variables in `text` by `inputs`.
 * @throws {GatewayError} 400 naming the input when it is missing or not of the declared type.
 */
export function substitute(text: string, inputs: Record<string, unknown>): string {
  return text.replace(PLACEHOLDER, (_m, name: string, type: string) => {
    if (!Object.prototype.hasOwnProperty.call(inputs, name)) throw badRequest(`missing input "${name}" (${type}) required by the prompt`, `inputs.${name}`, 'missing_prompt_input');
    const value = inputs[name];
    if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
      throw badRequest(`input "${name}" must be a ${type}, got ${value === null ? 'null' : typeof value}`, `inputs.${name}`, 'invalid_prompt_input');
    }
    return String(value);
  });
}

function substituteMessage(m: ChatMessage, inputs: Record<string, unknown>): ChatMessage {
  if (typeof m.content === 'string') return { ...m, content: substitute(m.content, inputs) };
  if (Array.isArray(m.content)) {
    return { ...m, content: m.content.map((p) => (typeof p.text === 'string' ? { ...p, text: substitute(p.text, inputs) } : p)) };
  }
  return m;
}

/**
 * Reads the prompt members of `body` into an unresolved {@link AppliedPrompt} (the client's body,
 * no version yet).
 * @throws {GatewayError} 400 naming a malformed `prompt_id`, `version_id`, `environment`, `inputs` or `messages`.
 */
export function namedPrompt(body: ChatCompletionRequest): AppliedPrompt {
  const { prompt_id: promptId, version_id: versionId, environment, inputs = {} } = body as Record<string, unknown>;
  if (typeof promptId !== 'string' || promptId.length === 0) throw badRequest('"prompt_id" must be a non-empty string', 'prompt_id');
  if (versionId !== undefined && versionId !== null && typeof versionId !== 'string') throw badRequest('"version_id" must be a string', 'version_id');
  if (environment !== undefined && environment !== null && typeof environment !== 'string') throw badRequest('"environment" must be a string', 'environment');
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) throw badRequest('"inputs" must be an object', 'inputs');
  if (body.messages !== undefined && !Array.isArray(body.messages)) throw badRequest('"messages" must be an array', 'messages');
  const env = versionId ? null : ((environment as string | undefined) ?? 'production');
  return { body, originalBody: body, promptId, versionId: null, version: null, environment: env, inputs: inputs as Record<string, unknown> };
}

/**
 * Fetches the version `prompt` names (`version_id` of its client body, else its environment).
 * @throws {GatewayError} 404 `prompt_not_found` naming `prompt_id`, `version_id` or `environment`
 *   (whichever admin found unknown); 503/504 when admin cannot be asked.
 */
export async function lookUpVersion(prompt: AppliedPrompt, controlPlane: ControlPlaneClient): Promise<PromptVersion> {
  const versionId = prompt.originalBody.version_id;
  const pending = controlPlane.getPrompt(prompt.promptId, typeof versionId === 'string' && versionId ? versionId : null, prompt.environment);
  const lookup = pending instanceof Promise ? await pending : pending;
  if (lookup.ok) return lookup.version;
  if (lookup.status === 404) throw new GatewayError(404, lookup.error, 'invalid_request_error', 'prompt_not_found', unknownPromptMember(lookup.error));
  throw new GatewayError(lookup.status, lookup.error, 'server_error', 'prompt_unavailable', 'prompt_id');
}

/**
 * Merges `version` into the client's body: its messages (inputs substituted) first, then the
 * client's; its other members as defaults, except `stream` (never) and `stream_options` (only when
 * the client's body streams).
 * @throws {GatewayError} 400 naming a missing or mistyped input.
 */
export function mergePrompt(body: ChatCompletionRequest, version: PromptVersion, inputs: Record<string, unknown>): ChatCompletionRequest {
  const { stream: _stream, stream_options: streamOptions, ...template } = version.body as Partial<ChatCompletionRequest>;
  const promptMessages = Array.isArray(template.messages) ? template.messages.map((m) => substituteMessage(m, inputs)) : [];
  const merged: ChatCompletionRequest = { ...(template as ChatCompletionRequest), ...body, messages: [...promptMessages, ...(body.messages ?? [])] };
  if (body.stream === true && streamOptions !== undefined && body.stream_options === undefined) merged.stream_options = streamOptions;
  if (typeof body.model !== 'string' && typeof template.model === 'string') merged.model = template.model;
  return merged;
}
