/**
 * Stage resolve-prompt: a request naming a managed prompt (`prompt_id`) gets the prompt version's
 * body merged in (../prompts.ts; the version is cached from admin, so only a cold lookup waits on
 * the control plane). Requests without one pass synchronously.
 */
import { badRequest } from '../errors.ts';
import { lookUpVersion, mergePrompt, namedPrompt } from '../prompts.ts';
import type { RequestContext } from '../pipeline/context.ts';

/** Admin's prompt ids are UUIDs (its request log stores them in a uuid column). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Nothing for a request without `prompt_id` (or a kind without prompts); else a Promise that sets
 * `ctx.prompt` and the merged `ctx.body`, checked by the endpoint kind.
 * @throws {GatewayError} (as the Promise's rejection) 400 without a control plane or for bad
 *   inputs, 404 for an unknown prompt, version or environment (naming that member), 503/504 when
 *   admin cannot answer.
 */
export function resolvePrompt(ctx: RequestContext): Promise<void> | void {
  if (ctx.body!.prompt_id === undefined || !ctx.kind.prompts) return;
  return applyManagedPrompt(ctx);
}

async function applyManagedPrompt(ctx: RequestContext): Promise<void> {
  const controlPlane = ctx.gw.controlPlane;
  if (!controlPlane) throw badRequest('managed prompts need svc.features auth or observability', 'prompt_id');
  const prompt = namedPrompt(ctx.body!);
  // Linked before the lookup so that the record of a failed resolution names the prompt (and, once
  // found, the version) and a team can find the errors a version caused. An id that is no UUID names
  // no prompt of admin's, and its log column could not hold it.
  if (UUID.test(prompt.promptId)) ctx.prompt = prompt;
  const version = await lookUpVersion(prompt, controlPlane);
  prompt.versionId = version.versionId;
  prompt.version = version.version;
  ctx.prompt = prompt;
  prompt.body = mergePrompt(prompt.originalBody, version, prompt.inputs);
  ctx.body = prompt.body;
  ctx.kind.validate(ctx.body);
  ctx.requestModel = ctx.body.model;
}
