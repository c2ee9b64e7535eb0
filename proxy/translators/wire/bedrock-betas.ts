/**
 * Which Anthropic betas reach Bedrock. InvokeModel takes betas in the body's `anthropic_beta` array and
 * refuses the whole request (400 ValidationException, "invalid beta flag") when one is not among those
 * Bedrock supports. Claude Code sends betas Bedrock does not know (`claude-code-20250219`,
 * `per-turn-control-2026-07-01`, …) on every request, so a gateway that passes them on breaks every
 * Claude Code session routed to Bedrock. The gateway sends only the betas Bedrock documents (or the ones
 * `providers.bedrock.anthropic-betas` lists), renames the one Bedrock knows by another name, and records
 * every other as removed (the log record's `removedMembers`, the `Svc-Removed-Members` header).
 * Sources: AWS, "Anthropic Claude Messages API" request parameters (`anthropic_beta`),
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html;
 * Claude Code's own Bedrock client sends `tool-search-tool-2025-10-19` where it sends Anthropic
 * `advanced-tool-use-2025-11-20` (anthropics/claude-code#30926).
 */

/** The betas Bedrock's InvokeModel documents for Anthropic's models (the default of `providers.bedrock.anthropic-betas`). */
export const BEDROCK_ANTHROPIC_BETAS: readonly string[] = Object.freeze([
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'dev-full-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
]);

/** Anthropic's name of a beta → Bedrock's name of the same feature. */
const BEDROCK_BETA_NAMES: ReadonlyMap<string, string> = new Map([['advanced-tool-use-2025-11-20', 'tool-search-tool-2025-10-19']]);

/**
 * Adds `name` (renamed to Bedrock's name where it has another) to `out` when `allowed` holds it; false
 * when it does not. The lists are a dozen short names, so `includes` needs no Set beside them.
 */
function take(name: string, allowed: readonly string[], out: string[]): boolean {
  const sent = BEDROCK_BETA_NAMES.get(name) ?? name;
  if (!allowed.includes(sent)) return false;
  if (!out.includes(sent)) out.push(sent);
  return true;
}

/**
 * The betas to send to Bedrock: `fromHeaders` (the client's `anthropic-beta` values) then `fromBody` (the
 * client's own `anthropic_beta` member), each renamed to Bedrock's name where it has another, kept when
 * `allowed` holds it, in order, without repeats.
 * @param allowed the betas Bedrock takes ({@link BEDROCK_ANTHROPIC_BETAS} unless configured).
 * @param removed when given, receives `anthropic-beta: <name>` for a header value and `anthropic_beta[i]`
 *   for a body entry that is not sent (an entry that is not a string included), or `anthropic_beta` for a
 *   body member that is not an array.
 * @returns the names to send; empty when none is left.
 */
export function bedrockBetas(fromHeaders: readonly string[], fromBody: unknown, allowed: readonly string[], removed: string[] | undefined): string[] {
  const out: string[] = [];
  for (const name of fromHeaders) if (!take(name, allowed, out)) removed?.push(`anthropic-beta: ${name}`);
  if (Array.isArray(fromBody)) {
    for (let i = 0; i < fromBody.length; i++) {
      const name: unknown = fromBody[i];
      if (typeof name !== 'string' || !take(name, allowed, out)) removed?.push(`anthropic_beta[${i}]`);
    }
  } else if (fromBody !== undefined) {
    removed?.push('anthropic_beta');
  }
  return out;
}
