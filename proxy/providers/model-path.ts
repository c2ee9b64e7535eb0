/**
 * A model name placed in a provider's URL path as one segment (Bedrock's model id, `/model/{modelId}/converse`;
 * Azure's deployment, `/openai/deployments/{deployment}/chat/completions`). encodeURIComponent leaves `.` and `..`
 * as they are, and URL parsing removes such dot segments (RFC 3986 §5.2.4, WHATWG URL's path state), so `..` would
 * address `POST /converse` and `.` `/model/converse`: another operation of the provider, signed with the gateway's
 * credentials. Such a name, and an empty one, is refused before anything is built.
 */
import { badRequest } from '../errors.ts';

/**
 * `name` URL-encoded as one path segment (encodeURIComponent: `/`, `?`, `#`, `%` and the rest escaped).
 * @param provider the transport's name, for the message (`bedrock`, `azure`).
 * @param name the model id or deployment name as it goes in the path.
 * @param model the client's `model` (after its `<provider>/` prefix) it came from, named in the message when it
 *   differs from `name` (Azure's `providers.azure.deployments` maps one to the other).
 * @throws {GatewayError} 400 `invalid_model`, `param` `model` (rendered in the caller's dialect), when `name` is empty,
 *   `.` or `..`.
 */
export function modelPathSegment(provider: string, name: string, model: string = name): string {
  if (name !== '' && name !== '.' && name !== '..') return encodeURIComponent(name);
  const what = name === model ? `model ${JSON.stringify(model)}` : `model ${JSON.stringify(model)} (deployment ${JSON.stringify(name)})`;
  throw badRequest(`${provider} ${what} is not a valid model name: it goes in the request's URL path, where an empty name, "." or ".." would address another path`, 'model', 'invalid_model');
}
