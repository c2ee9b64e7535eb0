/**
 * OpenAI embeddings (https://platform.openai.com/docs/api-reference/embeddings/create) as an
 * endpoint kind: `POST /ai/embeddings`, `/v1/embeddings`, `/router/<name>/embeddings`; answered as
 * one JSON body with `usage`; no token-limit handlers (there are no messages to shorten).
 */
import { badRequest, openAIErrorShape } from '../errors.ts';
import { OPENAI_ERROR_BODY } from './answer-completion.ts';
import { ENDPOINT_DIALECTS } from './dialects.ts';
import { validateOpenAICommon, wrongType } from './members.ts';
import { openAISse } from './openai-sse.ts';
import type { EndpointKind, Json } from './types.ts';

/**
 * An embeddings body: the common members, then `input` (required): a string, an array of strings,
 * or token arrays (integers). `prompt_id` is refused, as on Messages and Responses: managed prompts
 * hold chat messages and sampling members, which an embeddings provider has no use for.
 * @throws {GatewayError} 400 naming the member.
 */
export function validateEmbeddingsBody(b: Json): void {
  // First, as on Messages and Responses: a body naming a prompt may have left the model to it.
  if (b.prompt_id !== undefined) throw badRequest('managed prompts ("prompt_id") are served on chat completions, not on the embeddings API', 'prompt_id', 'unsupported_member');
  validateOpenAICommon(b);
  const input = b.input;
  if (input === undefined) throw badRequest('missing required member "input"', 'input', 'missing_input');
  const ok =
    typeof input === 'string' ||
    (Array.isArray(input) && input.every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isInteger(x)) || (Array.isArray(x) && x.every((n) => typeof n === 'number' && Number.isInteger(n)))));
  if (!ok) throw wrongType('input', 'a string, an array of strings, or token arrays');
}

/** OpenAI embeddings. */
export const embeddings: EndpointKind = {
  name: 'embeddings',
  dialect: ENDPOINT_DIALECTS.embeddings,
  paths: ['/ai/embeddings', '/v1/embeddings'],
  routerTail: '/embeddings',
  routerLabel: 'router:embeddings',
  loadBalance: 'embeddings',
  validate: validateEmbeddingsBody,
  errorBody: openAIErrorShape,
  // Never asked for, but an OpenAI-compatible server's stream would be framed as OpenAI's.
  framing: openAISse,
  reading: {
    usageInBody: (body) => body.usage || null,
    usageInChunk: (chunk) => chunk.usage || null,
    mergeUsage: null,
    foldChunk: null,
  },
  tokenLimits: null,
  // Never streamed; were it, it would end as chat's does, with framing.doneData.
  completion: { finalEvents: new Set(), errorBody: OPENAI_ERROR_BODY },
  // Prompts hold chat messages; validateEmbeddingsBody refuses prompt_id.
  prompts: false,
  providerOfBareModel: null,
  forwardsClientHeaders: false,
  localCount: null,
  logged: true,
};
