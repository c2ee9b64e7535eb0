/**
 * The catalogue of model providers the gateway can route to: their config names, the upper-case
 * names the request log uses (the `Provider` enum of the REST API's SvcRequest), their default base
 * URLs and the environment variable that holds each one's API key.
 *
 * The proxy's provider modules (proxy/providers/) implement the wire formats; this file only names
 * them, so admin, config validation and the price table agree on one list.
 */

/** Config names of every provider the gateway knows (`providers.<name>`, `<provider>/<model>`). */
export const PROVIDER_NAMES = [
  'openai',
  'groq',
  'mistral',
  'deepseek',
  'xai',
  'together',
  'fireworks',
  'openrouter',
  'ollama',
  'gemini',
  'anthropic',
  'bedrock',
  'azure',
] as const;

/** A provider's config name, e.g. `openai`. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Static facts about one provider. */
export interface ProviderInfo {
  /** Config name, e.g. `groq`. */
  name: ProviderName;
  /** Name in the request log (SvcRequest.provider), e.g. `GROQ`. */
  logName: string;
  /** Base URL the provider's OpenAI-style paths are appended to (no trailing slash). */
  defaultBaseUrl: string;
  /** Environment variable holding the provider's API key; null when the provider takes none. */
  keyEnv: string | null;
}

/** Facts about each provider, keyed by config name. Base URLs are the providers' documented ones. */
export const PROVIDERS: Readonly<Record<ProviderName, ProviderInfo>> = {
  openai: { name: 'openai', logName: 'OPENAI', defaultBaseUrl: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY' },
  groq: { name: 'groq', logName: 'GROQ', defaultBaseUrl: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY' },
  mistral: { name: 'mistral', logName: 'MISTRAL', defaultBaseUrl: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY' },
  deepseek: { name: 'deepseek', logName: 'DEEPSEEK', defaultBaseUrl: 'https://api.deepseek.com', keyEnv: 'DEEPSEEK_API_KEY' },
  xai: { name: 'xai', logName: 'X', defaultBaseUrl: 'https://api.x.ai/v1', keyEnv: 'XAI_API_KEY' },
  together: { name: 'together', logName: 'TOGETHER', defaultBaseUrl: 'https://api.together.xyz/v1', keyEnv: 'TOGETHER_API_KEY' },
  fireworks: {
    name: 'fireworks',
    logName: 'FIREWORKS',
    defaultBaseUrl: 'https://api.fireworks.ai/inference/v1',
    keyEnv: 'FIREWORKS_API_KEY',
  },
  openrouter: {
    name: 'openrouter',
    logName: 'OPENROUTER',
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
  },
  ollama: { name: 'ollama', logName: 'LOCAL', defaultBaseUrl: 'http://127.0.0.1:11434/v1', keyEnv: null },
  gemini: {
    name: 'gemini',
    logName: 'GOOGLE',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    keyEnv: 'GEMINI_API_KEY',
  },
  anthropic: { name: 'anthropic', logName: 'ANTHROPIC', defaultBaseUrl: 'https://api.anthropic.com/v1', keyEnv: 'ANTHROPIC_API_KEY' },
  bedrock: { name: 'bedrock', logName: 'BEDROCK', defaultBaseUrl: '', keyEnv: null },
  azure: { name: 'azure', logName: 'AZURE', defaultBaseUrl: '', keyEnv: 'AZURE_OPENAI_API_KEY' },
};

/** True when `name` is a known provider config name. */
export function isProviderName(name: string): name is ProviderName {
  return Object.prototype.hasOwnProperty.call(PROVIDERS, name);
}

/**
 * Providers the gateway sends no embeddings (their transports in proxy/providers/index.ts bind no
 * `embeddings` endpoint: the provider offers none, or none on the OpenAI path). Config validation reads it
 * here because shared/ does not load the proxy's transports; test/config.test.ts keeps the two in step.
 */
const WITHOUT_EMBEDDINGS: ReadonlySet<ProviderName> = new Set(['groq', 'deepseek', 'xai', 'openrouter', 'anthropic']);

/** True when the gateway can send `name` an embeddings request. */
export function offersEmbeddings(name: ProviderName): boolean {
  return !WITHOUT_EMBEDDINGS.has(name);
}
