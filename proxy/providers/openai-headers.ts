/**
 * The client request headers a Responses client sends for OpenAI itself, which the native Responses
 * transports (OpenAI, Azure OpenAI) send on as they came: Codex's `x-codex-*` (beta features, window
 * and turn metadata), `openai-*` (`OpenAI-Beta`), the openai SDKs' `x-stainless-*`, and Codex's
 * `originator`, `session_id`/`session-id`, `thread-id` and `x-client-request-id`, which OpenAI reads
 * to route a session to its prompt cache. `OpenAI-Organization` and `OpenAI-Project` choose whose
 * account a request is billed to: they are sent only with the client's own credential (`Svc-Auth`),
 * never with the gateway's key, so a client cannot bill another organization or project the gateway's
 * key belongs to.
 * Sources: OpenAI API reference, "Authentication" (organization and project headers); Codex's
 * requests as captured in test/fixtures/clients/codex-0.169.0.request-headers.json.
 */

/** Name prefixes (lower-case) of the client headers sent on. */
const PREFIXES = ['x-codex-', 'openai-', 'x-stainless-'] as const;
/** Whole names (lower-case) of the client headers sent on. */
const NAMES: ReadonlySet<string> = new Set(['originator', 'session_id', 'session-id', 'thread-id', 'x-client-request-id']);
/** Headers that pick the account billed: sent only with the client's own credential. */
const ACCOUNT_HEADERS: ReadonlySet<string> = new Set(['openai-organization', 'openai-project']);

/** True when the lower-case `key` is one the client's own request to OpenAI would carry (see the module comment). */
function forwarded(key: string): boolean {
  return NAMES.has(key) || PREFIXES.some((p) => key.length > p.length && key.startsWith(p));
}

/**
 * Copies the headers named in the module comment from `raw` (`req.rawHeaders` pairs) into `headers`
 * under lower-case names, values as sent (a header sent more than once joined with `, `); the
 * account headers only when `ownCredential` (the client brought its provider credential). Nothing
 * when `raw` is null. A header the transport already set (credentials, content type) is not replaced.
 */
export function copyOpenAIHeaders(raw: readonly string[] | null, headers: Record<string, string>, ownCredential: boolean): void {
  if (raw === null) return;
  const copied: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i]!.toLowerCase();
    if (!forwarded(key) || (!ownCredential && ACCOUNT_HEADERS.has(key))) continue;
    const previous = headers[key];
    if (previous !== undefined && !copied.includes(key)) continue;
    headers[key] = previous === undefined ? raw[i + 1]! : `${previous}, ${raw[i + 1]!}`;
    copied.push(key);
  }
}
