/**
 * The endpoint kinds the gateway serves, and routing by path: one Map lookup for `/ai/…` and
 * `/v1/…`, and for `/router/<name>/<tail>` one lookup of the tail. Adding a kind: its module, and
 * one entry in {@link ENDPOINT_KINDS}.
 */
import { chatCompletions } from './chat-completions.ts';
import { countTokens } from './count-tokens.ts';
import { embeddings } from './embeddings.ts';
import { inputTokens } from './input-tokens.ts';
import { messages } from './messages.ts';
import { responses } from './responses.ts';
import { storedResponses } from './stored-response.ts';
import type { EndpointKind } from './types.ts';

export type { EndpointKind, EndpointName } from './types.ts';

/**
 * Every endpoint kind routed by exact path and router tail, in no particular order (paths and tails
 * must not collide). Stored responses (`…/responses/{id}`) are matched by prefix in route.ts.
 */
export const ENDPOINT_KINDS: readonly EndpointKind[] = [chatCompletions, embeddings, messages, countTokens, responses, inputTokens];

/**
 * The kind served at each `/ai` and `/v1` path. Its keys are also the metric's known `route`
 * labels (route.ts sets the label to the path found here; any other path is `unmatched`).
 */
export const KIND_BY_PATH: ReadonlyMap<string, EndpointKind> = new Map(ENDPOINT_KINDS.flatMap((k) => k.paths.map((p) => [p, k] as const)));

/** The kind served at each router tail (`/chat/completions` of `/router/<name>/chat/completions`). */
export const KIND_BY_ROUTER_TAIL: ReadonlyMap<string, EndpointKind> = new Map(ENDPOINT_KINDS.map((k) => [k.routerTail, k] as const));

/** Chat completions: the kind a request has before routing names one (its error shape answers a 404). */
export const DEFAULT_KIND: EndpointKind = chatCompletions;

/** Anthropic Messages: the kind whose error shape answers an unknown path an Anthropic client called (route.ts). */
export const MESSAGES_KIND: EndpointKind = messages;

/** OpenAI Responses: the kind whose `previous_response_id` the response store serves (stages/responses-history.ts). */
export const RESPONSES_KIND: EndpointKind = responses;

/** The Responses API's input token count: its `previous_response_id` is served as on Responses. */
export const INPUT_TOKENS_KIND: EndpointKind = inputTokens;

/** Stored responses (`GET`/`DELETE …/responses/{id}`, `…/input_items`, `…/cancel`), matched by prefix. */
export const STORED_RESPONSE_KIND: EndpointKind = storedResponses;
export { storedResponsePath, storedResponseTarget, type StoredResponseTarget } from './stored-response.ts';
