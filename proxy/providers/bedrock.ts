/**
 * The AWS Bedrock transport (bedrock-runtime): chat completions in the `bedrock-converse` wire format
 * (`/model/{modelId}/converse`, `/converse-stream`), embeddings in `bedrock-embeddings` (`/model/{modelId}/invoke`),
 * Anthropic Messages to Anthropic's models in `bedrock-invoke` (`/invoke`, `/invoke-with-response-stream`),
 * every request signed with SigV4 (or sent with a Bedrock API key as a bearer token); error bodies mapped to the
 * neutral error by exception name.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html.
 */
import type { EndpointName } from '../endpoints/types.ts';
import { bedrockRegion, missingProviderSetting } from '../../shared/provider-settings.ts';
import { badRequest, providerKeyMissing } from '../errors.ts';
import { fallbackErrorMessage } from '../translators/shared/provider-errors.ts';
import { isRecord, parseJson } from '../translators/shared/values.ts';
import type { ProviderError, Translator } from '../translators/types.ts';
import { bedrockErrorType, exceptionName } from '../translators/wire/bedrock.ts';
import { awsCredentialsFromEnv, signBedrockRequest, type AwsEnv } from './aws-sigv4.ts';
import { modelPathSegment } from './model-path.ts';
import { providerNotConfigured } from './not-configured.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from './types.ts';

/** What to set for Bedrock's credentials: SigV4 keys, or a Bedrock API key (bearer token). */
export const BEDROCK_CREDENTIALS_HINT = 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK)';

/**
 * Maps a non-2xx Bedrock body (`{"message": "..."}`, sometimes `{"Message": ...}` or with `__type`) to the neutral
 * error: `code` = the exception name from the `x-amzn-ErrorType` header (when the proxy passes response headers) or
 * the body's `__type`, else null; `type` per `BEDROCK_ERROR_TYPES`, else by status.
 */
export function mapBedrockError(
  status: number,
  body: Buffer,
  headers: Record<string, string | string[] | undefined> = {},
): ProviderError {
  const parsed = parseJson(body);
  const headerValue = Object.entries(headers).find(([key]) => key.toLowerCase() === 'x-amzn-errortype')?.[1];
  const name = exceptionName(Array.isArray(headerValue) ? headerValue[0] : headerValue) ?? (isRecord(parsed) ? exceptionName(parsed.__type) : null);
  let message: string | undefined;
  if (isRecord(parsed)) {
    const m = parsed.message ?? parsed.Message;
    if (typeof m === 'string' && m) message = m;
  }
  return {
    message: message ?? fallbackErrorMessage('bedrock', status, body),
    type: bedrockErrorType(name, status),
    param: null,
    code: name,
  };
}

/** Options of {@link createBedrockTransport}. */
export interface BedrockTransportOptions {
  /**
   * Where AWS settings are read on each request: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`
   * (SigV4), `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock API key, used when no access key is set), `AWS_REGION` /
   * `AWS_DEFAULT_REGION` (when `providers.bedrock.region` is unset). Default `process.env`.
   */
  env?: AwsEnv;
  /** The signing clock (tests pin it). Default `() => new Date()`. */
  now?: () => Date;
}

/**
 * True for a Bedrock model id of one of Anthropic's models (`anthropic.claude-…`, also behind a cross-region
 * inference profile such as `us.anthropic.claude-…` or an ARN naming one): these take Anthropic's Messages body on
 * InvokeModel.
 */
export function isBedrockAnthropicModel(modelId: string): boolean {
  return modelId.includes('anthropic.claude');
}

/** The bedrock-runtime action (URL path segment) of a request: converse, invoke, or their streaming forms. */
function actionOf(endpoint: EndpointName, stream: boolean): string {
  if (endpoint === 'embeddings') return 'invoke';
  if (endpoint === 'messages') return stream ? 'invoke-with-response-stream' : 'invoke';
  return stream ? 'converse-stream' : 'converse';
}

/**
 * Builds a Bedrock transport. Chat and Responses: `POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/converse`
 * (`/converse-stream` when streaming, answered in `application/vnd.amazon.eventstream`); embeddings:
 * `POST .../model/{modelId}/invoke`; Messages (Anthropic's models only, {@link isBedrockAnthropicModel}):
 * `POST .../model/{modelId}/invoke` (`/invoke-with-response-stream`, an event stream) with Anthropic's own body;
 * the model id URL-encoded, the body from the translator, signed with SigV4 (a bearer token when only
 * `AWS_BEARER_TOKEN_BEDROCK` is set, or the client's own credential as a Bedrock API key when it sent `Svc-Auth`:
 * its `Authorization` as sent, or its `x-api-key` as `Authorization: Bearer <key>`). A non-empty
 * `providers.bedrock.base-url` replaces the regional host. Region: `providers.bedrock.region`, else `AWS_REGION`,
 * else `AWS_DEFAULT_REGION`.
 * `buildRequest` throws GatewayError 400 `provider_not_configured` when the region is missing (./not-configured.ts), 503
 * `provider_key_missing` when the credentials are, 400 `unsupported_model` for a Messages request to a model
 * that is not Anthropic's (no translator from Messages to the other models' formats yet), and 400 `invalid_model` for
 * a model id that is empty, `.` or `..` (./model-path.ts: it would leave `/model/{modelId}/`), all before translating
 * the body; it rejects when the signer cannot be loaded.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html.
 */
export function createBedrockTransport(options: BedrockTransportOptions = {}): ProviderTransport {
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  return {
    name: 'bedrock',
    wireFormats: { chat: 'bedrock-converse', embeddings: 'bedrock-embeddings', messages: 'bedrock-invoke', responses: 'bedrock-converse' },

    async buildRequest(call: ProviderCall, endpoint: EndpointName, translator: Translator): Promise<UpstreamRequest> {
      const { config } = call;
      const region = bedrockRegion(config.region, env);
      if (region === undefined) throw providerNotConfigured('bedrock', missingProviderSetting(config, env)!);
      const client = call.clientCredential ?? null;
      const credentials = client === null ? awsCredentialsFromEnv(env) : null;
      const bearer = client !== null ? (client.authorization ?? `Bearer ${client.apiKey!}`) : env.AWS_BEARER_TOKEN_BEDROCK ? `Bearer ${env.AWS_BEARER_TOKEN_BEDROCK}` : null;
      if (!credentials && !bearer) {
        throw providerKeyMissing('bedrock', BEDROCK_CREDENTIALS_HINT);
      }
      if (endpoint === 'messages' && !isBedrockAnthropicModel(call.body.model)) {
        throw badRequest(
          `bedrock model ${JSON.stringify(call.body.model)} cannot answer the Messages API: only Anthropic's models (ids containing "anthropic.claude") take a Messages body on Bedrock`,
          'model',
          'unsupported_model',
        );
      }
      const modelId = modelPathSegment('bedrock', call.body.model);
      const base = config.baseUrl ? config.baseUrl.replace(/\/+$/, '') : `https://bedrock-runtime.${region}.amazonaws.com`;
      const action = actionOf(endpoint, call.stream);
      const body = translator.translateRequest(call);
      const url = new URL(`${base}/model/${modelId}/${action}`);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: action === 'converse-stream' || action === 'invoke-with-response-stream' ? 'application/vnd.amazon.eventstream' : 'application/json',
        // The translators read the bytes, so they must arrive uncompressed.
        'accept-encoding': 'identity',
      };
      if (credentials) {
        return { url, method: 'POST', headers: await signBedrockRequest(url, body, headers, credentials, region, now()), body };
      }
      return { url, method: 'POST', headers: { ...headers, authorization: bearer! }, body };
    },

    mapError: mapBedrockError,
  };
}

/**
 * The Bedrock transport, reading AWS credentials and region from `process.env` on each request
 * (see {@link createBedrockTransport}).
 */
export const bedrock: ProviderTransport = createBedrockTransport();
