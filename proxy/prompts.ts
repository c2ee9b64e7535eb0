/**
 * Managed prompts through the gateway. A chat request may carry `prompt_id`, optionally `version_id`
 * or `environment` (default `production`), and `inputs`. The prompt version's body (fetched from
 * admin over the control plane and cached) supplies the defaults: the request's own members override
 * them, and the request's messages are appended after the prompt's. Variables written
 * `{{svc:<name>:<type>}}` (type `string`, `number` or `boolean`) in the prompt's messages are replaced
 * by `inputs[name]`.
 */
import type { ChatCompletionRequest, ChatMessage } from '../shared/chat.ts';
import type { ControlPlaneClient } from './controlplane.ts';
import { badRequest, GatewayError } from './errors.ts';

/** A request after its managed prompt was applied. */
export interface AppliedPrompt {
  /** The merged body to send. */
  body: ChatCompletionRequest;
  /** The client's body as received (for the log). */
  originalBody: ChatCompletionRequest;
  promptId: string;
  versionId: string;
  /** `major.minor`. */
  version: string;
  environment: string | null;
  inputs: Record<string, unknown>;
}

const VARIABLE = /\{\{\s*svc:([A-Za-z0-9_.-]+):(string|number|boolean)\s*\}\}/g;

/**
 * Replaces `{{svc:name:type}}` variables in `text` by `inputs`.
 * @throws {GatewayError} 400 naming the input when it is missing or not of the declared type.
 */
export function substitute(text: string, inputs: Record<string, unknown>): string {
  return text.replace(VARIABLE, (_m, name: string, type: string) => {
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
 * Resolves and applies the managed prompt a request names.
 * @throws {GatewayError} 400 for malformed prompt members or inputs; 404 for an unknown prompt,
 *   version or environment; 503/504 when admin cannot be asked.
 */
export async function applyPrompt(body: ChatCompletionRequest, controlPlane: ControlPlaneClient): Promise<AppliedPrompt> {
  const { prompt_id: promptId, version_id: versionId, environment, inputs = {} } = body as Record<string, unknown>;
  if (typeof promptId !== 'string' || promptId.length === 0) throw badRequest('"prompt_id" must be a non-empty string', 'prompt_id');
  if (versionId !== undefined && versionId !== null && typeof versionId !== 'string') throw badRequest('"version_id" must be a string', 'version_id');
  if (environment !== undefined && environment !== null && typeof environment !== 'string') throw badRequest('"environment" must be a string', 'environment');
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) throw badRequest('"inputs" must be an object', 'inputs');
  if (body.messages !== undefined && !Array.isArray(body.messages)) throw badRequest('"messages" must be an array', 'messages');

  const env = versionId ? null : ((environment as string | undefined) ?? 'production');
  const pending = controlPlane.getPrompt(promptId, (versionId as string | undefined) ?? null, env);
  const lookup = pending instanceof Promise ? await pending : pending;
  if (!lookup.ok) {
    throw new GatewayError(lookup.status, lookup.error, lookup.status === 404 ? 'invalid_request_error' : 'server_error', lookup.status === 404 ? 'prompt_not_found' : 'prompt_unavailable', 'prompt_id');
  }
  const version = lookup.version;
  const template = version.body as Partial<ChatCompletionRequest>;
  const values = inputs as Record<string, unknown>;
  const promptMessages = Array.isArray(template.messages) ? template.messages.map((m) => substituteMessage(m, values)) : [];
  const merged: ChatCompletionRequest = { ...(template as ChatCompletionRequest), ...body, messages: [...promptMessages, ...(body.messages ?? [])] };
  if (typeof body.model !== 'string' && typeof template.model === 'string') merged.model = template.model;
  return {
    body: merged,
    originalBody: body,
    promptId,
    versionId: version.versionId,
    version: version.version,
    environment: env,
    inputs: values,
  };
}
