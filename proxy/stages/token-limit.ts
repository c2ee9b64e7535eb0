/**
 * Stage token-limit: the handler named by `Svc-Token-Limit-Exception-Handler` (truncate,
 * middle-out, fallback; ../tokenlimit/) for endpoint kinds with messages. Without the header it
 * does nothing. A kind whose body is not a chat body (Messages) is seen as chat
 * (`EndpointKind.tokenLimits.chatView`) by the handlers it offers, and truncate's cuts are written
 * back into its own body (`fromChatView`); a handler it does not offer is a 400.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { isProviderName } from '../../shared/providers.ts';
import { badRequest } from '../errors.ts';
import { header } from '../pipeline/headers.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { applyTokenLimit, assertFits, parseTokenLimitHandler, tightestTarget, TOKEN_LIMIT_HEADER, type Target } from '../tokenlimit/index.ts';

/**
 * Applies the handler: `ctx.tokenLimit` says what it did, and `ctx.body` becomes the rewritten
 * copy when it changed the body or chose a model (for a kind seen through a chat view: the kind's
 * own body, with the cut texts or the chosen model).
 * @throws {GatewayError} 400 `invalid_token_limit_handler` for an unknown handler name (for every
 *   kind), 400 `unsupported_token_limit_handler` for a handler the kind does not offer, 400
 *   `missing_provider` when a model needs its `<provider>/` prefix, 400 `context_length_exceeded`
 *   when truncate or middle-out cannot fit the body (`ctx.tokenLimit` is set first, for the log).
 */
export function tokenLimit(ctx: RequestContext): void {
  const handler = parseTokenLimitHandler(header(ctx.req, 'svc-token-limit-exception-handler') ?? undefined);
  const support = ctx.kind.tokenLimits;
  if (!handler || support === null) return;
  if (!support.handlers.includes(handler)) {
    throw badRequest(
      `the ${handler} token-limit handler is not available on ${ctx.kind.name}; ${TOKEN_LIMIT_HEADER} may name: ${support.handlers.join(', ')}`,
      TOKEN_LIMIT_HEADER,
      'unsupported_token_limit_handler',
    );
  }
  const view = support.chatView ? support.chatView(ctx.body!) : null;
  const chat = view ?? ctx.body!;
  const result = applyTokenLimit(handler, chat, { resolve: (m: string) => resolveTarget(ctx, m, chat) });
  ctx.tokenLimit = result;
  assertFits(result);
  let body = result.body;
  if (view !== null) {
    // The handler read (and maybe cut) the chat view: the kind's own body, with any cuts written back.
    // (ctx.body holds every kind's body under the chat type, as the translators' calls do.)
    body = handler !== 'fallback' && result.changed && support.fromChatView ? (support.fromChatView(ctx.body!, view, result.body) as ChatCompletionRequest) : ctx.body!;
  }
  ctx.body = body;
  if (result.changed || handler === 'fallback') {
    // On a router the entry goes back as written: its `<provider>/` prefix pins the provider in
    // choose-provider, a bare name is balanced and mapped there, as without the header (the bare
    // model the handler measured, e.g. a mapping's, would be balanced to any member).
    const model = ctx.router ? result.entry : `${result.provider}/${result.model}`;
    ctx.body = { ...body, model };
  }
}

/**
 * The provider and model a model name means, for the limits: `<provider>/<model>` on /ai (or a
 * bare name the kind knows the provider of: Messages' `claude-…`). On a router a `<provider>/`
 * prefix pins that provider (as choose-provider does); a bare name may go to any member of the
 * kind's pool, each sent the model the router maps it to (model-mappings), and the handlers run
 * once before that choice (retries re-enter after them), so the limits are those of the member
 * and model with the smallest input allowance for `body` (`tightestTarget`): what fits it fits
 * whichever the router picks. A pool without members gives provider '' (limits unknown).
 * @throws {GatewayError} 400 `missing_provider` for a bare name on /ai.
 */
export function resolveTarget(ctx: RequestContext, model: string, body: ChatCompletionRequest): Target {
  const slash = model.indexOf('/');
  const prefix = slash > 0 ? model.slice(0, slash) : '';
  if (ctx.router) {
    if (prefix && isProviderName(prefix)) return { provider: prefix, model: model.slice(slash + 1) };
    return tightestTarget(body, ctx.router.targets(ctx.kind.name, model)) ?? { provider: '', model };
  }
  if (!prefix) {
    const provider = ctx.kind.providerOfBareModel?.(model) ?? null;
    if (provider !== null) return { provider, model };
    throw badRequest(`model ${JSON.stringify(model)} has no provider prefix; write it as "<provider>/<model>", e.g. "openai/gpt-4o-mini"`, 'model', 'missing_provider');
  }
  return { provider: prefix, model: model.slice(slash + 1) };
}
