/**
 * Stage stored-response: the Responses API's calls on a stored response (`GET`/`DELETE
 * …/responses/{id}`, `GET …/input_items`, `POST …/cancel`; ../endpoints/stored-response.ts), which
 * carry no body and answer the whole request here; every other kind passes at once.
 *
 * Where the response is, by the gateway's response store (../response-store/):
 * - a response the gateway made (a translated provider's) is answered from the store: the response,
 *   its deletion (`{"id", "object": "response", "deleted": true}`), or its input items (paged as
 *   OpenAI pages them); a made response is complete, so `cancel` is a 400;
 * - a response another organization's key made or relayed is a 404, as an unknown one is: an
 *   organization never reads another's responses, even through the provider with the gateway's key;
 * - a response a provider made and keeps (relayed to this organization) goes to that provider;
 * - an id of the gateway's form (`resp_<UUID v4 hex>`, ../translators/openai-responses-to-openai-chat/output.ts)
 *   that the store does not know (made with `store: false`, evicted, or deleted) is OpenAI's 404 from the
 *   gateway: no provider ever had it, so it does not go to OpenAI with the gateway's key;
 * - any other id the store does not know goes to the provider the request names in `Svc-Provider`, else on
 *   a router its first member that keeps responses (OpenAI, Azure), else `openai` (the provider keeps
 *   its own responses, and answers 404 for one it does not have). The client's query goes as sent.
 * The provider's answer passes through; there are no router retries (the response is at one provider).
 * Source: OpenAI API reference, "Responses" → "Get a model response", "Delete a model response",
 * "Cancel a response", "List input items".
 */
import { isProviderName, type ProviderName } from '../../shared/providers.ts';
import { STORED_RESPONSE_KIND, storedResponsePath, storedResponseTarget, type StoredResponseTarget } from '../endpoints/index.ts';
import { STORED_RESPONSE_METHODS } from '../endpoints/stored-response.ts';
import { badRequest, GatewayError, providerKeyMissing } from '../errors.ts';
import { answerJson } from '../pipeline/answer.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { fail } from '../pipeline/fail.ts';
import { clientCredential, forwardableHeaders, header } from '../pipeline/headers.ts';
import { SUSPEND } from '../pipeline/pipeline.ts';
import { bindingFor } from '../providers/index.ts';
import type { ProviderCall } from '../providers/types.ts';
import { itemsPage, itemsQuery } from '../response-store/items.ts';
import { ownEntry, type MadeEntry, type StoredEntry } from '../response-store/index.ts';
import { forward } from './forward.ts';

const EMPTY = Buffer.alloc(0);
/**
 * A response id the gateway gives: `resp_` and its request id (a UUID v4, ../pipeline/context.ts) without dashes,
 * so hex digit 12 is the version `4` and digit 16 the variant (`8`–`b`). The length alone could collide: OpenAI's
 * ids are 48 or 50 hex digits (recorded: test/fixtures/providers/openai/responses-*.json, e.g.
 * `resp_68c42d0fb418819dbfa579f69406b49508fbf9b1584184ff`), but Azure's documented ones of the Responses API's
 * first months are 32 (`resp_67cb32528d6881909eb2859a55e18a85`, learn.microsoft.com, Azure OpenAI "Responses
 * API"). Those and OpenAI's 48-digit ids start with a Unix time in seconds, 4 hex digits and `81`, so their digit
 * 12 is `8` (every recorded and documented one), never the gateway's `4`: such an id goes to the provider.
 */
const MINTED_ID = /^resp_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

/** 404 for a response this organization cannot see (OpenAI's message for an unknown id). */
function notFound(id: string): GatewayError {
  return new GatewayError(404, `Response with id '${id}' not found.`, 'invalid_request_error', 'response_not_found');
}

/** 503 when the response store cannot be read. */
export function storeUnavailable(err: unknown): GatewayError {
  return new GatewayError(503, `the response store is unavailable (${(err as Error).message})`, 'server_error', 'response_store_unavailable', null, { 'retry-after': '1' });
}

/** The stored-response target of the request's path (route.ts matched it). */
function targetOf(ctx: RequestContext): StoredResponseTarget {
  const p = ctx.path;
  if (ctx.routerName === null) return storedResponsePath(p)!;
  return storedResponseTarget(p.slice(p.indexOf('/', '/router/'.length)), 'router')!;
}

/** The query string of the request as sent (`?…`), or ''. */
function queryOf(ctx: RequestContext): string {
  const url = ctx.req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q);
}

/**
 * Nothing for other kinds; for a stored-response call, answers it (from the store or through the
 * provider) and returns {@link SUSPEND}: no later stage runs.
 * @throws {GatewayError} 405 for a method the action does not take (with `Allow`).
 */
export function storedResponse(ctx: RequestContext): void | typeof SUSPEND {
  if (ctx.kind !== STORED_RESPONSE_KIND) return;
  const target = targetOf(ctx);
  const methods = STORED_RESPONSE_METHODS[target.action];
  const method = ctx.req.method ?? '';
  if (!methods.includes(method)) {
    throw new GatewayError(405, `${method} is not allowed on ${target.label}; use ${methods.join(' or ')}`, 'invalid_request_error', 'method_not_allowed', null, { allow: methods.join(', ') });
  }
  const found = ctx.gw.responseStore.get(target.id);
  if (found instanceof Promise) {
    found.then(
      (entry) => serve(ctx, target, entry),
      (err: unknown) => fail(ctx, storeUnavailable(err)),
    );
  } else {
    serve(ctx, target, found);
  }
  return SUSPEND;
}

/** Answers the call once the store said what it knows of the id; errors are answered, never thrown. */
function serve(ctx: RequestContext, target: StoredResponseTarget, entry: StoredEntry | null): void {
  if (ctx.finished) return;
  try {
    const org = ctx.key?.organizationId ?? '';
    const own = ownEntry(entry, org);
    if (entry !== null && own === null) throw notFound(target.id);
    if (own?.kind === 'made') return answerFromStore(ctx, target, own);
    if (own === null && MINTED_ID.test(target.id)) throw notFound(target.id);
    sendToProvider(ctx, target, own?.kind === 'relayed' ? own.provider : chosenProvider(ctx));
  } catch (err) {
    fail(ctx, err);
  }
}

/**
 * A response the gateway made: the response, its deletion or its input items.
 * @throws {GatewayError} 400 `response_not_cancellable` for cancel, 400 for a bad input_items query.
 */
function answerFromStore(ctx: RequestContext, target: StoredResponseTarget, entry: MadeEntry): void {
  ctx.provider = isProviderName(entry.provider) ? entry.provider : null;
  switch (target.action) {
    case 'cancel':
      throw badRequest(`Response with id '${target.id}' is complete: only a response created with background=true and still in progress can be cancelled.`, null, 'response_not_cancellable');
    case 'input_items': {
      const query = itemsQuery(new URLSearchParams(queryOf(ctx)));
      if ('invalid' in query) throw badRequest(query.invalid, query.param, 'invalid_type');
      return answerJson(ctx, 200, JSON.stringify(itemsPage(entry.input, target.id, query)));
    }
    default:
      if (ctx.req.method === 'GET') return answerJson(ctx, 200, JSON.stringify(entry.response));
      return deleteMade(ctx, target.id);
  }
}

/** Deletes a made response and answers OpenAI's deletion object. */
function deleteMade(ctx: RequestContext, id: string): void {
  const deleted = `{"id":${JSON.stringify(id)},"object":"response","deleted":true}`;
  const done = ctx.gw.responseStore.delete(id);
  if (!(done instanceof Promise)) return answerJson(ctx, 200, deleted);
  done.then(
    () => answerJson(ctx, 200, deleted),
    (err: unknown) => fail(ctx, storeUnavailable(err)),
  );
}

/**
 * The provider an id the store does not know goes to: `Svc-Provider`, else a router's first member that
 * keeps responses, else `openai`.
 * @throws {GatewayError} 400 `unknown_provider` for a `Svc-Provider` the gateway cannot route to.
 */
function chosenProvider(ctx: RequestContext): ProviderName {
  const named = header(ctx.req, 'svc-provider');
  if (named !== null) {
    if (!isProviderName(named) || bindingFor(named, 'stored_response') === undefined) {
      throw badRequest(`Svc-Provider ${JSON.stringify(named)} names no provider that keeps responses (openai, azure)`, 'Svc-Provider', 'unknown_provider');
    }
    return named;
  }
  const members = ctx.router?.members(ctx.kind.loadBalance) ?? [];
  return members.find((p) => bindingFor(p, 'stored_response') !== undefined) ?? 'openai';
}

/**
 * Sends the call to `provider` as the client made it (method, id, action, query), with the gateway's
 * key or the client's own (`Svc-Auth`); its answer passes through.
 * @throws {GatewayError} 404 when the provider keeps no responses, 401/503 for credentials.
 */
function sendToProvider(ctx: RequestContext, target: StoredResponseTarget, provider: ProviderName): void {
  const binding = bindingFor(provider, 'stored_response');
  if (binding === undefined) throw notFound(target.id);
  const credential = clientCredential(ctx.req);
  if (credential === null) {
    const missing = ctx.gw.keyMissing.get(provider);
    if (missing !== undefined) throw providerKeyMissing(provider, missing);
  }
  const query = queryOf(ctx);
  const suffix = target.action === 'response' ? '' : `/${target.action}`;
  ctx.provider = provider;
  ctx.binding = binding;
  ctx.clientCredential = credential;
  // The response lives at this one provider: no router retries elsewhere.
  ctx.router = null;
  const call: ProviderCall = {
    config: ctx.gw.config.providers[provider],
    body: { model: '', messages: [] },
    stream: new URLSearchParams(query).get('stream') === 'true',
    requestId: ctx.id,
    rawBody: EMPTY,
    provider,
    clientHeaders: forwardableHeaders(ctx.req),
    clientCredential: credential,
    resource: { method: ctx.req.method as 'GET' | 'DELETE' | 'POST', path: `/${target.id}${suffix}${query}` },
  };
  ctx.call = call;
  const upstream = binding.buildRequest(call);
  if (upstream instanceof Promise) throw new Error(`provider ${provider} signs its requests: not a Responses store`);
  upstream.headers['content-length'] = '0';
  ctx.upstream = upstream;
  forward(ctx);
}
