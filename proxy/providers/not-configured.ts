/**
 * The answer to a request addressed directly (`<provider>/<model>`) to a provider the gateway cannot reach for
 * want of a setting (../../shared/provider-settings.ts: Azure's base URL, Bedrock's region): 400
 * `provider_not_configured`, naming the provider and the setting, in the client's dialect (the endpoint's error
 * shape renders it). A router never gets here: config validation refuses such a member at start.
 *
 * Why 400 and not a 5xx: the provider is one this gateway does not offer (no router counts on it, and no
 * request, retried or not, will reach it until the operator configures it), like a provider it does not know
 * (400 `unknown_provider`). A 5xx would be retried by the OpenAI and Anthropic SDKs to no end (they retry
 * 500 and 503, the Anthropic SDK 503 `overloaded_error` most of all) and count as the gateway's own failures
 * in its error rate. A provider without credentials stays 503 `provider_key_missing` (../errors.ts): the
 * gateway offers it, a client may reach it with its own credential (`Svc-Auth`), and the gap is the
 * deployment's.
 */
import type { ProviderConfig } from '../../shared/config.ts';
import { missingProviderSetting } from '../../shared/provider-settings.ts';
import { GatewayError } from '../errors.ts';

/** 400 `provider_not_configured` for `provider`, which needs `missing` (the key(s) to set), with `param` `model`. */
export function providerNotConfigured(provider: string, missing: string): GatewayError {
  return new GatewayError(400, `provider ${provider} is not configured on this gateway: it needs ${missing}`, 'invalid_request_error', 'provider_not_configured', 'model');
}

/**
 * Refuses a request to a provider that lacks a required setting; returns without allocating otherwise (it runs
 * on every request, before the transport builds anything).
 * @param config the provider's effective config.
 * @param env where Bedrock's region variables are read (the transport's environment).
 * @throws {GatewayError} 400 `provider_not_configured` ({@link providerNotConfigured}).
 */
export function assertProviderConfigured(config: ProviderConfig, env: Readonly<Record<string, string | undefined>>): void {
  const missing = missingProviderSetting(config, env);
  if (missing !== null) throw providerNotConfigured(config.name, missing);
}
