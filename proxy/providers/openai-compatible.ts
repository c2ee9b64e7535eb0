/**
 * Providers that speak OpenAI's chat-completions format natively: openai, groq, mistral, deepseek,
 * xai, together, fireworks, openrouter, ollama and gemini (Google's OpenAI-compatible endpoint).
 * The request goes to `{baseUrl}/chat/completions` (or `/embeddings`) with `Authorization: Bearer
 * <provider key>`; the response is streamed back untouched.
 * Sources: each provider's OpenAI-compatibility documentation (base URLs in shared/providers.ts).
 */
import type { ProviderName } from '../../shared/providers.ts';
import type { Endpoint, ProviderAdapter, ProviderCall, UpstreamRequest } from './types.ts';

const PATHS: Record<Endpoint, string> = { chat: '/chat/completions', embeddings: '/embeddings' };

/**
 * Creates the adapter of one OpenAI-compatible provider.
 * URLs are built once per provider and endpoint (the base URL is fixed at start).
 */
export function openAICompatible(name: ProviderName, endpoints: readonly Endpoint[] = ['chat', 'embeddings']): ProviderAdapter {
  const urlCache = new Map<string, URL>();
  return {
    name,
    passthrough: true,
    endpoints,
    buildRequest(call: ProviderCall, endpoint: Endpoint): UpstreamRequest {
      const base = call.config.baseUrl;
      const cacheKey = base + PATHS[endpoint];
      let url = urlCache.get(cacheKey);
      if (!url) {
        url = new URL(cacheKey);
        urlCache.set(cacheKey, url);
      }
      const body = call.rawBody ?? Buffer.from(JSON.stringify(call.body));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(body.length),
        accept: call.stream ? 'text/event-stream' : 'application/json',
        'accept-encoding': 'identity',
      };
      if (call.config.apiKey) headers.authorization = `Bearer ${call.config.apiKey}`;
      return { url, method: 'POST', headers, body };
    },
  };
}
