/**
 * The settings a provider cannot be reached without, other than its credentials: Azure has no default host
 * (`providers.azure.base-url`, the resource's endpoint), Bedrock signs and addresses every request with a region
 * (`providers.bedrock.region`, else `AWS_REGION`, else `AWS_DEFAULT_REGION`, as proxy/providers/bedrock.ts reads
 * them), and every other provider needs a base URL, which shared/providers.ts gives it by default. One rule for
 * the two places that ask: config validation refuses a router member that lacks one (./config.ts), and a
 * provider's transport refuses a request addressed to one directly (proxy/providers/not-configured.ts).
 * Credentials are not settings here: a client may bring its own (`Svc-Auth`), and a provider without them is
 * answered 503 `provider_key_missing` (proxy/errors.ts).
 */
import type { ProviderName } from './providers.ts';

/** What of a provider's effective config the rule reads (a subset of `ProviderConfig`). */
export interface ProviderSettings {
  name: ProviderName;
  /** The base URL, `''` when none (Azure's default). */
  baseUrl: string;
  /** `providers.<name>.region`; null or `''` when unset. */
  region: string | null;
}

/** The environment variables Bedrock takes its region from when `providers.bedrock.region` is unset, in order. */
export const BEDROCK_REGION_ENV = ['AWS_REGION', 'AWS_DEFAULT_REGION'] as const;

const BEDROCK_NEEDS = `a region: providers.bedrock.region, or ${BEDROCK_REGION_ENV.join(' or ')} in the environment`;
const AZURE_NEEDS = "providers.azure.base-url (the resource's endpoint, e.g. https://<resource>.openai.azure.com)";

/**
 * The region Bedrock is addressed and signed with: `providers.bedrock.region`, else `AWS_REGION`, else
 * `AWS_DEFAULT_REGION` from `env`; undefined when none is set or all are empty.
 */
export function bedrockRegion(region: string | null, env: Readonly<Record<string, string | undefined>>): string | undefined {
  return region || env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;
}

/**
 * What the provider still needs before any request can reach it, as text naming the key(s) to set (e.g.
 * `providers.azure.base-url (…)`), or null when nothing is missing. Allocates nothing when nothing is missing
 * (the proxy asks on every request).
 * @param settings the provider's effective config (its base URL with the default applied).
 * @param env where Bedrock's region variables are read (the process environment at start and per request).
 */
export function missingProviderSetting(settings: ProviderSettings, env: Readonly<Record<string, string | undefined>>): string | null {
  if (settings.name === 'bedrock') return bedrockRegion(settings.region, env) === undefined ? BEDROCK_NEEDS : null;
  if (settings.baseUrl) return null;
  return settings.name === 'azure' ? AZURE_NEEDS : `providers.${settings.name}.base-url`;
}
