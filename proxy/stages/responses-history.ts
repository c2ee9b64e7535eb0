/**
 * Stages responses-history (before token-limit, so its estimate is of the whole conversation) and
 * previous-response-provider (after choose-provider): a Responses request continuing a conversation
 * (`previous_response_id`) gets the conversation the provider needs. What the gateway's response
 * store (../response-store/) knows of the id decides:
 * - a response the gateway made (a translated provider answered it): the request's `input` becomes
 *   that response's input items, then its output items, then the request's own input, and
 *   `previous_response_id` is removed — whatever provider answers now (a translated one needs the
 *   whole conversation; OpenAI itself never saw that id). The previous `instructions` are not
 *   carried over, as OpenAI does not carry them. The gateway's own reasoning items among them are
 *   left out by the translate stage when OpenAI itself answers (./minted-reasoning.ts);
 * - a response another organization's key made or relayed: 404, as for an unknown id (an
 *   organization never continues another's conversation, even through the gateway's provider key);
 * - a response a provider keeps (OpenAI, Azure): sent on as it is to a provider that speaks the
 *   Responses API; a translated provider cannot read it: 404;
 * - an unknown id: sent on as it is to OpenAI or Azure (which may know it: made before the gateway
 *   kept an index, or evicted from it); 404 for a translated provider.
 * The 404 is OpenAI's: `{"error": {"message": "Previous response with id '…' not found.", "type":
 * "invalid_request_error", "param": "previous_response_id", "code": "previous_response_not_found"}}`.
 * A token count (`…/responses/input_tokens`) is served the same way, so the count is of the whole
 * conversation. Before that, each `item_reference` in the request's `input` that names an output
 * item of a response the gateway made for this organization is replaced by the item itself
 * (../response-store/item-references.ts). Requests with neither, and other kinds, pass at once.
 * Source: OpenAI API reference, "Responses" → "Create a model response" (`previous_response_id`,
 * `instructions`), and the guide "Conversation state".
 */
import { INPUT_TOKENS_KIND, RESPONSES_KIND } from '../endpoints/index.ts';
import type { Json } from '../endpoints/types.ts';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { referencedResponses, replaceReferences } from '../response-store/item-references.ts';
import { inputItemsOf } from '../response-store/items.ts';
import { ownEntry, type StoredEntry } from '../response-store/index.ts';
import { storeUnavailable } from './stored-response.ts';

/** OpenAI's 404 for a `previous_response_id` it does not know (`why` appended when the gateway knows more). */
function previousNotFound(id: string, why = ''): GatewayError {
  return new GatewayError(404, `Previous response with id '${id}' not found.${why}`, 'invalid_request_error', 'previous_response_not_found', 'previous_response_id');
}

/**
 * Nothing for a request without `previous_response_id` or a gateway-made item reference; else the
 * store's entries decide (see the module comment), synchronously with the in-memory store and as a
 * Promise with Redis.
 * @throws {GatewayError} 404 `previous_response_not_found`; 503 `response_store_unavailable` (as a
 *   rejection) when Redis cannot be read.
 */
export function responsesHistory(ctx: RequestContext): void | Promise<void> {
  if (ctx.kind !== RESPONSES_KIND && ctx.kind !== INPUT_TOKENS_KIND) return;
  const body = ctx.body as Json;
  const previous = typeof body.previous_response_id === 'string' && body.previous_response_id !== '' ? body.previous_response_id : null;
  const referenced = referencedResponses(body.input);
  if (previous === null && referenced === null) return;
  const ids = previous === null ? referenced! : [previous, ...(referenced ?? [])];
  const store = ctx.gw.responseStore;
  const found = ids.map((id) => store.get(id));
  if (found.some((entry) => entry instanceof Promise)) {
    return Promise.all(found).then(
      (entries) => applyHistory(ctx, ids, entries, previous),
      (err: unknown) => {
        throw storeUnavailable(err);
      },
    );
  }
  applyHistory(ctx, ids, found as Array<StoredEntry | null>, previous);
}

/** Puts referenced items in their place, then continues from `previous` (`entries[i]` is `ids[i]`'s). */
function applyHistory(ctx: RequestContext, ids: string[], entries: Array<StoredEntry | null>, previous: string | null): void {
  const body = ctx.body as Json;
  if (Array.isArray(body.input) && ids.length > (previous === null ? 0 : 1)) {
    const byId = new Map(ids.map((id, i) => [id, entries[i]!] as const));
    ctx.body = { ...body, input: replaceReferences(body.input, byId, ctx.key?.organizationId ?? '') } as unknown as RequestContext['body'];
  }
  if (previous !== null) continueFrom(ctx, previous, entries[0]!);
}

/** Applies what the store knows of `id` to the request (see the module comment). */
function continueFrom(ctx: RequestContext, id: string, entry: StoredEntry | null): void {
  const own = ownEntry(entry, ctx.key?.organizationId ?? '');
  if (entry !== null && own === null) throw previousNotFound(id);
  if (own?.kind === 'made') {
    const body = { ...(ctx.body as Json) };
    body.input = [...own.input, ...((own.response.output ?? []) as Json[]), ...inputItemsOf(body.input)];
    delete body.previous_response_id;
    ctx.body = body as RequestContext['body'];
    return;
  }
  // Left for the provider: only one that keeps responses can read it (previousResponseProvider).
  ctx.previousKeptBy = own?.kind === 'relayed' ? own.provider : '';
}

/**
 * Stage previous-response-provider: a `previous_response_id` left in the body goes on only to a
 * provider that keeps responses (a passthrough binding: OpenAI, Azure); for a translated one it is
 * OpenAI's 404, naming the provider that keeps it when the store knows. No binding: an input_tokens
 * count the gateway estimates itself, from the chat body (as translated).
 * @throws {GatewayError} 404 `previous_response_not_found`.
 */
export function previousResponseProvider(ctx: RequestContext): void {
  const keptBy = ctx.previousKeptBy;
  if (keptBy === null || (ctx.binding?.passthrough ?? false)) return;
  const id = String((ctx.body as Json).previous_response_id);
  if (keptBy !== '') throw previousNotFound(id, ` It is kept by ${keptBy}: continue the conversation with a ${keptBy} model.`);
  throw previousNotFound(id);
}
