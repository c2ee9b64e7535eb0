/**
 * Stage resolve-prompt: a request naming a managed prompt (`prompt_id`) gets the prompt version's
 * body merged in (../prompts.ts; the version is cached from admin, so only a cold lookup waits on
 * the control plane). Requests without one pass synchronously.
 */
import { badRequest } from '../errors.ts';
import { applyPrompt } from '../prompts.ts';
import type { RequestContext } from '../pipeline/context.ts';

/**
 * Nothing for a request without `prompt_id` (or a kind without prompts); else a Promise that sets
 * `ctx.prompt` and the merged `ctx.body`, checked by the endpoint kind.
 * @throws {GatewayError} (as the Promise's rejection) 400 without a control plane or for bad
 *   inputs, 404 for an unknown prompt, version or environment, 503/504 when admin cannot answer.
 */
export function resolvePrompt(ctx: RequestContext): Promise<void> | void {
  if (ctx.body!.prompt_id === undefined || !ctx.kind.prompts) return;
  return applyManagedPrompt(ctx);
}

async function applyManagedPrompt(ctx: RequestContext): Promise<void> {
  const controlPlane = ctx.gw.controlPlane;
  if (!controlPlane) throw badRequest('managed prompts need svc.features auth or observability', 'prompt_id');
  ctx.prompt = await applyPrompt(ctx.body!, controlPlane);
  ctx.body = ctx.prompt.body;
  ctx.kind.validate(ctx.body);
  ctx.requestModel = ctx.body.model;
}
