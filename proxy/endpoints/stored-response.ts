/**
 * The Responses API's stored responses (OpenAI API reference, "Responses" → "Get a model response",
 * "Delete a model response", "Cancel a response", "List input items":
 * https://platform.openai.com/docs/api-reference/responses/get) as an endpoint kind:
 * `GET`/`DELETE …/responses/{id}`, `GET …/responses/{id}/input_items`, `POST …/responses/{id}/cancel`
 * under `/v1`, `/ai` and `/router/<name>`. A response the gateway made itself (a translated provider's)
 * is answered from the gateway's response store; any other goes to the provider that made it
 * (../stages/stored-response.ts says which). No body is read, nothing is logged (a metadata call,
 * counted in the metrics and the access log).
 */
import { openAIErrorShape } from '../errors.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { responsesReading } from './responses-reading.ts';
import { responsesSse } from './responses-sse.ts';
import type { EndpointKind } from './types.ts';

/** What a stored-response path asks for: the response, its input items, or its cancellation. */
export type StoredResponseAction = 'response' | 'input_items' | 'cancel';

/** A stored-response path, parsed. */
export interface StoredResponseTarget {
  /** The response id as written in the path (`resp_…`). */
  id: string;
  action: StoredResponseAction;
  /** The metric's `route` label: the path with `{id}` for the id. */
  label: string;
}

/** A response id: OpenAI's are `resp_` and hex; the gateway's own follow the same alphabet. */
const ID = /^[A-Za-z0-9_-]{1,200}$/;
const RESPONSES = '/responses/';

/**
 * The target of a path tail that starts `/responses/` (the path after `/v1`, `/ai` or
 * `/router/<name>`), or null when it names no stored response (`/responses/input_tokens` is the
 * token count's; an id outside `[A-Za-z0-9_-]`; an unknown action).
 * @param base what came before the tail, for the label (`/v1`, `/ai`, or `router`).
 */
export function storedResponseTarget(tail: string, base: string): StoredResponseTarget | null {
  if (!tail.startsWith(RESPONSES)) return null;
  const rest = tail.slice(RESPONSES.length);
  const slash = rest.indexOf('/');
  const id = slash < 0 ? rest : rest.slice(0, slash);
  if (!ID.test(id) || id === 'input_tokens') return null;
  const sub = slash < 0 ? '' : rest.slice(slash + 1);
  const action: StoredResponseAction | null = sub === '' ? 'response' : sub === 'input_items' ? 'input_items' : sub === 'cancel' ? 'cancel' : null;
  if (action === null) return null;
  const suffix = action === 'response' ? '' : `/${action}`;
  return { id, action, label: base === 'router' ? `router:responses/{id}${suffix}` : `${base}/responses/{id}${suffix}` };
}

/**
 * The target of a whole `/v1/…` or `/ai/…` path, or null. (Router paths are split by route.ts,
 * which looks their tail up with {@link storedResponseTarget}.)
 */
export function storedResponsePath(path: string): StoredResponseTarget | null {
  if (path.startsWith('/v1/')) return storedResponseTarget(path.slice(3), '/v1');
  if (path.startsWith('/ai/')) return storedResponseTarget(path.slice(3), '/ai');
  return null;
}

/** The HTTP methods each action answers. */
export const STORED_RESPONSE_METHODS: Readonly<Record<StoredResponseAction, readonly string[]>> = {
  response: ['GET', 'DELETE'],
  input_items: ['GET'],
  cancel: ['POST'],
};

/** Stored responses. Its paths are matched by {@link storedResponsePath}, not by exact path. */
export const storedResponses: EndpointKind = {
  name: 'stored_response',
  dialect: ENDPOINT_DIALECTS.stored_response,
  paths: [],
  routerTail: '/responses/{id}',
  routerLabel: 'router:responses/{id}',
  loadBalance: 'chat',
  // No body is read (see ../stages/stored-response.ts).
  validate: () => {},
  errorBody: openAIErrorShape,
  // A background response is retrieved as a stream with `?stream=true`.
  framing: responsesSse,
  reading: responsesReading,
  tokenLimits: null,
  // Retrievals of a stored response are not cached.
  completion: null,
  prompts: false,
  providerOfBareModel: null,
  forwardsClientHeaders: true,
  localCount: null,
  logged: false,
};
