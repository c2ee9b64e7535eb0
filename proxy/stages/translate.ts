/**
 * Stage translate: the provider's own request (URL, headers with its credentials, body) from the
 * client's body, through the chosen provider's binding (`binding.buildRequest`). When the gateway changed
 * nothing but the model, the body is the client's own bytes with the provider's model spliced in
 * (the passthrough fast path: no serialization). Asynchronous only for a signing provider (Bedrock
 * SigV4), when the pipeline suspends.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import type { Json } from '../endpoints/types.ts';
import { spliceModel } from '../json-scan.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { forwardableHeaders } from '../pipeline/headers.ts';
import type { ProviderCall, UpstreamRequest } from '../providers/types.ts';
import { withoutMadeReasoning } from './minted-reasoning.ts';

/**
 * Sets `ctx.call` and `ctx.upstream`. The provider's model goes into a copy of the body:
 * `ctx.body` keeps the model the provider was chosen from, for a retry's choice. When the model sent
 * is the one the client wrote (a bare `claude-…` to Anthropic), the client's bytes are the body as
 * they are. The call carries the client's headers for kinds that forward some (Messages), the
 * client's own credential (`Svc-Auth`), and, when the provider's format differs, the list a
 * translator reports removed members in (logged, and answered in `Svc-Removed-Members`). Reasoning
 * state the gateway made is kept from OpenAI and Anthropic themselves (./minted-reasoning.ts): when
 * some was removed, the body is serialized again and the removals are listed on a passthrough too.
 * @throws {GatewayError} from the provider: 400 when the body cannot be expressed in its format,
 *   500 `provider_not_configured`, 503 `provider_key_missing` (as a rejection when asynchronous).
 */
export function translate(ctx: RequestContext): Promise<void> | void {
  const unchanged = ctx.body === ctx.clientBody;
  const body = { ...ctx.body! };
  body.model = ctx.model!;
  if (ctx.prompt) stripPromptMembers(body);
  const binding = ctx.binding!;
  // Only `model` differs from what the client sent: its bytes with the model spliced in are the body
  // (the bytes themselves when the model is the one they hold: no override, and sent as written).
  let rawBody: Buffer | undefined;
  if (unchanged && ctx.modelStart >= 0) {
    const asWritten = ctx.model === ctx.clientBody!.model && ctx.req.headers['svc-model-override'] === undefined;
    rawBody = asWritten ? ctx.rawBody! : spliceModel(ctx.rawBody!, ctx.modelStart, ctx.modelEnd, ctx.model!);
  }
  let removed: string[] | undefined = binding.passthrough ? undefined : [];
  const dropped = withoutMadeReasoning(ctx, body as unknown as Json);
  if (dropped !== null) {
    rawBody = undefined;
    removed = dropped;
  }
  const call: ProviderCall = {
    config: ctx.gw.config.providers[ctx.provider!],
    body,
    stream: body.stream === true,
    requestId: ctx.id,
    rawBody,
    provider: ctx.provider!,
    // Removals are logged and answered in Svc-Removed-Members: collected for every translated request.
    removed,
    clientHeaders: ctx.kind.forwardsClientHeaders ? forwardableHeaders(ctx.req) : null,
    clientCredential: ctx.clientCredential,
    // Set when a mapped stream starts (../upstream/mapped.ts); present from here so the call keeps one shape.
    redactor: null,
  };
  ctx.call = call;
  const pending = binding.buildRequest(call);
  if (pending instanceof Promise) return pending.then((upstream) => setUpstream(ctx, upstream));
  setUpstream(ctx, pending);
}

/** Keeps the provider's request; the body is sent in one piece, so its length is said rather than chunked. */
function setUpstream(ctx: RequestContext, upstream: UpstreamRequest): void {
  if (upstream.headers['content-length'] === undefined) upstream.headers['content-length'] = String(upstream.body.length);
  ctx.upstream = upstream;
}

/** Removes the gateway's prompt members before the body goes to a provider. */
function stripPromptMembers(body: ChatCompletionRequest): void {
  delete body.prompt_id;
  delete body.version_id;
  delete body.environment;
  delete body.inputs;
}
