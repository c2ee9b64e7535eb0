/**
 * The response-store observer: keeps what the gateway's response store (../response-store/) needs of
 * each successful Responses answer, off the response path's work (it reads the bytes the client gets):
 * - an answer a provider keeps itself (OpenAI, Azure: a passthrough binding): which provider made the
 *   response id, so later calls on it (`GET …/responses/{id}`, `previous_response_id`) go there, and
 *   no other organization reaches it through the gateway's key;
 * - an answer the gateway made (a translated provider's): the whole response and the conversation's
 *   input items, written as soon as the final event (or the JSON body) passes, before the client has
 *   it, so its follow-up request finds it.
 * Nothing is kept for a request with `store: false` (Codex sends it; OpenAI keeps nothing then either),
 * for an error answer, or for other kinds.
 */
import type { ProviderName } from '../../shared/providers.ts';
import { RESPONSES_KIND } from '../endpoints/index.ts';
import type { Json } from '../endpoints/types.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { inputItemsOf } from '../response-store/items.ts';
import { ResponseCapture } from './response-capture.ts';
import type { ResponseObserver } from './types.ts';

/** Writes what the capture found: the relayed id's provider, or the made response with its input. */
function keep(ctx: RequestContext, capture: ResponseCapture): void {
  const org = ctx.key?.organizationId ?? '';
  const store = ctx.gw.responseStore;
  if (capture.id !== null) {
    store.put(capture.id, { kind: 'relayed', org, provider: ctx.provider as ProviderName });
    return;
  }
  const response = capture.response!;
  store.put(response.id as string, { kind: 'made', org, provider: ctx.provider!, response, input: inputItemsOf((ctx.body as Json).input) });
}

/** See the module comment. */
export const responseStoreObserver: ResponseObserver = {
  name: 'response-store',
  onResponseStart(ctx, streamed) {
    if (ctx.kind !== RESPONSES_KIND || ctx.status < 200 || ctx.status >= 300) return;
    if ((ctx.body as Json | null)?.store === false) return;
    ctx.responseCapture = new ResponseCapture(ctx.binding!.passthrough, streamed);
  },
  onChunk(ctx, chunk) {
    const capture = ctx.responseCapture;
    if (capture === null || capture.done) return;
    if (capture.push(chunk)) keep(ctx, capture);
  },
};
