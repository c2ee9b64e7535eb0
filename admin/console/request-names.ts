/**
 * How the console names a request's provider and model: as the Dashboard and the filters name them,
 * so that what a row shows is what a filter typed from it matches.
 */
import { PROVIDERS } from '../../shared/providers.ts';
import type { SvcRequest } from './api.ts';

/** The request log's upper-case provider names (REST's `provider`) → the config's names. */
const CONFIG_NAMES: ReadonlyMap<string, string> = new Map(Object.values(PROVIDERS).map((p) => [p.logName, p.name]));

/**
 * The provider as the gateway's config names it (`openai`, `xai`), which the Dashboard shows and the
 * provider filter matches; REST sends the request log's name (`OPENAI`, `X`). Any other name (`SVC`:
 * the gateway answered without a provider) is kept as it is.
 */
export function providerName(provider: string): string {
  return CONFIG_NAMES.get(provider) ?? provider;
}

/** The model the client asked for (without its `<provider>/` prefix): what the model filter and the Dashboard's "By model" match. */
export function requestedModel(r: Pick<SvcRequest, 'request_model' | 'model'>): string {
  return r.request_model || r.model;
}

/** The model the provider answered with when it is not the one asked for (`gpt-4o-2024-08-06` for `gpt-4o`), else null. */
export function answeredModel(r: Pick<SvcRequest, 'request_model' | 'response_model' | 'model'>): string | null {
  return r.response_model && r.response_model !== requestedModel(r) ? r.response_model : null;
}
