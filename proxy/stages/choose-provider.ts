/**
 * Stage choose-provider: on /ai and /v1 the provider is the model's `<provider>/` prefix (or, for a
 * kind that knows its provider's model names, the provider of a bare name: Messages' `claude-…` →
 * anthropic); on a router the client may pin one the same way, else the router's load-balance
 * strategy chooses among the members that serve the endpoint kind (latency, weighted,
 * model-mappings; ../router.ts). Router retries start again here.
 */
import { isProviderName } from '../../shared/providers.ts';
import { badRequest, providerKeyMissing } from '../errors.ts';
import { assertProviderConfigured } from '../providers/not-configured.ts';
import { clientCredential } from '../pipeline/headers.ts';
import { bindingFor, hasProvider } from '../providers/index.ts';
import type { RequestContext } from '../pipeline/context.ts';

/**
 * Sets `ctx.provider`, `ctx.model` (the bare model to send), `ctx.binding`, `ctx.clientCredential`
 * (the client's own provider credential when it sent `Svc-Auth`), and `ctx.pinned` when the client
 * named a router member. Reads the model of `ctx.body` (the client's, or a prompt's or token-limit
 * handler's rewrite), which translate never changes, so a retry chooses from the same model as the
 * first attempt. A provider without a binding at a kind that answers itself (count_tokens) leaves
 * `ctx.binding` null for the next stage.
 * @throws {GatewayError} 400 `missing_provider`, `unknown_provider`, `provider_not_in_router` or
 *   `unsupported_endpoint` (a pinned provider, or every member of the router, does not offer the
 *   endpoint kind); 401 `missing_provider_credential` for `Svc-Auth` without a credential
 *   to forward; 503 `provider_key_missing` when the chosen provider has no credentials and the
 *   client brought none (a router chooses one only when all its members lack them).
 */
export function chooseProvider(ctx: RequestContext): void {
  const model = ctx.body!.model;
  const slash = model.indexOf('/');
  const prefix = slash > 0 ? model.slice(0, slash) : '';
  const router = ctx.router;
  if (!router) {
    if (!prefix) {
      const provider = ctx.kind.providerOfBareModel?.(model) ?? null;
      if (provider === null) throw badRequest(`model ${JSON.stringify(model)} has no provider prefix; write it as "<provider>/<model>", e.g. "openai/gpt-4o-mini"`, 'model', 'missing_provider');
      ctx.provider = provider;
      ctx.model = model;
    } else {
      if (!isProviderName(prefix) || !hasProvider(prefix)) throw badRequest(`unknown provider ${JSON.stringify(prefix)} in model ${JSON.stringify(model)}`, 'model', 'unknown_provider');
      ctx.provider = prefix;
      ctx.model = model.slice(slash + 1);
    }
  } else {
    const pool = ctx.kind.loadBalance;
    const members = router.members(pool);
    if (prefix && isProviderName(prefix)) {
      if (!members.includes(prefix)) throw badRequest(`provider ${JSON.stringify(prefix)} is not part of router ${JSON.stringify(ctx.routerName)} (providers: ${members.join(', ')})`, 'model', 'provider_not_in_router');
      ctx.provider = prefix;
      ctx.model = model.slice(slash + 1);
      ctx.pinned = true;
    } else {
      const choice = router.choose(ctx.kind.name, model, ctx.tried);
      if (choice === null) throw badRequest(`router ${JSON.stringify(ctx.routerName)} has no provider that offers ${ctx.kind.name} (its providers: ${members.join(', ')})`, null, 'unsupported_endpoint');
      ctx.provider = choice.provider;
      ctx.model = choice.model;
    }
  }
  const credential = clientCredential(ctx.req);
  ctx.clientCredential = credential;
  const binding = bindingFor(ctx.provider, ctx.kind.name);
  if (binding === undefined) {
    if (ctx.kind.localCount !== null) {
      ctx.binding = null;
      return;
    }
    throw badRequest(`provider ${ctx.provider} does not offer ${ctx.kind.name}`, 'model', 'unsupported_endpoint');
  }
  if (credential === null) {
    const missing = ctx.gw.keyMissing.get(ctx.provider);
    // A provider lacking a setting too is one this gateway does not offer (400): say that first, since a key
    // alone would not make it work.
    if (missing !== undefined) assertProviderConfigured(ctx.gw.config.providers[ctx.provider], process.env);
    if (missing !== undefined) throw providerKeyMissing(ctx.provider, missing);
  }
  ctx.binding = binding;
}
