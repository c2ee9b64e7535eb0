/**
 * AWS credentials from the environment and SigV4 request signing for the Bedrock transport. The @smithy signer
 * and hash modules are imported on the first signed request, not when this module is: a gateway that never
 * calls Bedrock never loads them.
 * Source: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html.
 */
import { loadOnce } from '../../shared/lazy.ts';

/** AWS credentials for SigV4 (from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** An environment to read AWS settings from (`process.env` or a test object). */
export type AwsEnv = Record<string, string | undefined>;

/**
 * Reads SigV4 credentials from an environment: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (both required)
 * and the optional `AWS_SESSION_TOKEN`. Returns null when either required variable is unset or empty.
 */
export function awsCredentialsFromEnv(env: AwsEnv = process.env): AwsCredentials | null {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return null;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** Imports `@smithy/signature-v4` and `@smithy/hash-node` once (on the first signed request). */
const loadSigner = loadOnce(() =>
  Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]).then(([sigv4, hash]) => ({ SignatureV4: sigv4.SignatureV4, Hash: hash.Hash })),
);

/**
 * Signs a request for the `bedrock` service with SigV4 and returns the headers to send: the given headers plus
 * `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (with a session token) and `authorization`
 * (`AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/bedrock/aws4_request, SignedHeaders=..., Signature=...`).
 * The URL path is signed as sent (already percent-encoded), which SigV4 encodes once more, as the AWS SDKs do.
 * Rejects when the signer modules cannot be loaded.
 */
export async function signBedrockRequest(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  credentials: AwsCredentials,
  region: string,
  signingDate: Date = new Date(),
): Promise<Record<string, string>> {
  const { SignatureV4, Hash } = await loadSigner();
  const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      headers: { ...headers, host: url.host },
      body,
    },
    { signingDate },
  );
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(signed.headers)) if (typeof value === 'string') result[key] = value;
  return result;
}
