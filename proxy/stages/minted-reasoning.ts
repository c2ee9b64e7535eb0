/**
 * Reasoning state the gateway made itself, kept from the first-party providers that would refuse it (part of the
 * translate stage). A translated answer gives a Responses client `reasoning` items with the gateway's ids
 * (`rs_<32 hex>_<n>`, ../translators/openai-responses-to-openai-chat/output.ts), some carrying Gemini's thought
 * signatures as `encrypted_content: "gateway-reasoning:…"`, and a Messages client `thinking` blocks whose
 * `signature` is `""` or `gateway-reasoning:…` (../translators/shared/carried-reasoning.ts). Clients send them back
 * (Codex replays its items, Claude Code its thinking blocks), and the response store rebuilds them into a
 * conversation (./responses-history.ts). When such a request goes to the provider itself, after a model switch or a
 * router's failover from a translated provider:
 * - OpenAI (Responses passthrough, OpenAI and Azure) looks every reasoning item up by id, and without `store` it
 *   keeps none: `404 Item with id 'rs_…' not found. Items are not persisted when store is set to false`, and the
 *   same on every later turn; it does not take the gateway's encrypted content either;
 * - Anthropic (Messages passthrough, and Bedrock's Claude through InvokeModel) verifies every thinking block's
 *   signature: one it did not sign is a 400.
 * So those items and blocks are removed there, each recorded in the removed members (`Svc-Removed-Members`) as the
 * client sent it: `input[3]`, `messages[1].content[0]` (`messages[1]` when nothing else was in the message: Anthropic
 * refuses an empty content and joins adjacent turns of one role), and `previous_response_id.input[k]` for an item
 * the gateway put in from a conversation it made (k its place there). When a removed block led the assistant
 * message a trailing `tool_result` answers and `thinking` is enabled, `thinking` is removed too (recorded as
 * `thinking`): Anthropic requires that message to start with a thinking block (see `losesLeadingThinking`). The provider's own items and blocks (OpenAI's
 * `rs_<hex>` ids, Anthropic's signatures, `redacted_thinking`) go as they are; translated providers get everything
 * (their translators read the gateway's items).
 *
 * Cost on the passthrough path: the binding's dialect and wire format compared; then, for a Responses or Messages
 * request to those providers, a byte search of the raw body for the gateway's marks (Responses: `gateway-reasoning:`,
 * and only when absent each `"rs_` followed by 32 characters and `_`; Messages: each `"signature"` followed by `""`
 * or `"gateway-reasoning:`), before anything is walked; a body the gateway rebuilt (another `input` or `messages`
 * array than the client's) is walked at once. Nothing is allocated unless an item is removed; only a body holding
 * such an item is copied and serialized again.
 * Sources: OpenAI API reference, "Responses" → "Create a model response" (`input` reasoning items, `store`),
 * the recorded 404 in the issue this answers; https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
 * ("Thinking encryption": the signature is verified when blocks are passed back).
 */
import type { Json } from '../endpoints/types.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { ProviderBinding } from '../providers/binding.ts';

/** The mark of a carrier the gateway wrote (../translators/shared/carried-reasoning.ts). */
const CARRIER_TEXT = 'gateway-reasoning:';
const CARRIER = Buffer.from(CARRIER_TEXT);
/** The start of a reasoning id in JSON; the gateway's has `_` 32 characters after it, OpenAI's a hex digit. */
const RS_ID = Buffer.from('"rs_');
const MADE_ID_UNDERSCORE = RS_ID.length + 32;
const SIGNATURE = Buffer.from('"signature"');
/** A reasoning item id the gateway gave (../response-store/item-references.ts has all its item ids). */
const MADE_REASONING_ID = /^rs_[0-9a-f]{32}_\d{1,6}$/;

/** Which first-party provider format `binding` sends the client's own dialect to: `responses`, `messages`, or null. */
function firstParty(binding: ProviderBinding): 'responses' | 'messages' | null {
  const wire = binding.wireFormat;
  if (binding.dialect === 'openai-responses') return wire === 'openai-responses' ? 'responses' : null;
  if (binding.dialect === 'anthropic-messages') return wire === 'anthropic-messages' || wire === 'bedrock-invoke' ? 'messages' : null;
  return null;
}

/**
 * True when `raw` may hold a reasoning item the gateway made (its carrier, or its id). The carrier is looked for
 * first: a body holding one is walked without the id scan. Both are needed: Codex sends reasoning items back
 * without their id (carrier only), and item references carry the id only; neither has a mark the other has.
 */
function mayHoldMadeItem(raw: Buffer): boolean {
  if (raw.indexOf(CARRIER) >= 0) return true;
  for (let at = raw.indexOf(RS_ID); at >= 0; at = raw.indexOf(RS_ID, at + RS_ID.length)) {
    if (raw[at + MADE_ID_UNDERSCORE] === 0x5f) return true;
  }
  return false;
}

/** True when `raw` may hold a thinking block the gateway made: a `"signature"` whose value is `""` or its carrier. */
function mayHoldMadeBlock(raw: Buffer): boolean {
  for (let at = raw.indexOf(SIGNATURE); at >= 0; at = raw.indexOf(SIGNATURE, at + SIGNATURE.length)) {
    let p = at + SIGNATURE.length;
    // JSON whitespace and the colon between the name and its value.
    while (p < raw.length && (raw[p] === 0x3a || raw[p] === 0x20 || raw[p] === 0x0a || raw[p] === 0x0d || raw[p] === 0x09)) p++;
    if (raw[p] !== 0x22) continue;
    if (raw[p + 1] === 0x22) return true;
    const end = p + 1 + CARRIER.length;
    if (end <= raw.length && raw.compare(CARRIER, 0, CARRIER.length, p + 1, end) === 0) return true;
  }
  return false;
}

/** True for a Responses input item the gateway made: a reasoning item (or a reference to one) with its id, or its carrier. */
function isMadeItem(item: unknown): boolean {
  if (item === null || typeof item !== 'object') return false;
  const it = item as Json;
  if (it.type === 'item_reference') return typeof it.id === 'string' && MADE_REASONING_ID.test(it.id);
  if (it.type !== 'reasoning') return false;
  return (typeof it.id === 'string' && MADE_REASONING_ID.test(it.id)) || (typeof it.encrypted_content === 'string' && it.encrypted_content.startsWith(CARRIER_TEXT));
}

/** True for a thinking block the gateway made: its signature empty or the gateway's carrier. */
function isMadeBlock(block: unknown): boolean {
  if (block === null || typeof block !== 'object' || (block as Json).type !== 'thinking') return false;
  const sig = (block as Json).signature;
  return sig === '' || (typeof sig === 'string' && sig.startsWith(CARRIER_TEXT));
}

/** How many of `input`'s first items responses-history put in from a `previous_response_id` (0 when it put none). */
function historyLength(body: Json, client: Json): number {
  if (typeof client.previous_response_id !== 'string' || body.previous_response_id !== undefined || !Array.isArray(body.input)) return 0;
  const own = client.input;
  return body.input.length - (Array.isArray(own) ? own.length : typeof own === 'string' ? 1 : 0);
}

/** `body.input` without the gateway's reasoning items; their paths, or null (nothing allocated) when it had none. */
function dropItems(body: Json, client: Json): string[] | null {
  const input = body.input as unknown[];
  const history = historyLength(body, client);
  let kept: unknown[] | null = null;
  let removed: string[] | null = null;
  for (let i = 0; i < input.length; i++) {
    if (!isMadeItem(input[i])) {
      kept?.push(input[i]);
      continue;
    }
    kept ??= input.slice(0, i);
    (removed ??= []).push(i < history ? `previous_response_id.input[${i}]` : `input[${i - history}]`);
  }
  if (kept !== null) body.input = kept;
  return removed;
}

/**
 * `body.messages` without the gateway's thinking blocks (a message left empty without itself), and without
 * `thinking` when Anthropic would then refuse it (see {@link losesLeadingThinking}); the removed paths, or null
 * (nothing allocated) when it had none.
 */
function dropBlocks(body: Json): string[] | null {
  const messages = body.messages as unknown[];
  let kept: unknown[] | null = null;
  let removed: string[] | null = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Json | null;
    const content = m !== null && typeof m === 'object' && Array.isArray(m.content) ? (m.content as unknown[]) : null;
    if (content === null || !content.some(isMadeBlock)) {
      kept?.push(m);
      continue;
    }
    kept ??= messages.slice(0, i);
    removed ??= [];
    const blocks = content.filter((b) => !isMadeBlock(b));
    if (blocks.length === 0) {
      removed.push(`messages[${i}]`);
      continue;
    }
    content.forEach((b, j) => isMadeBlock(b) && removed!.push(`messages[${i}].content[${j}]`));
    kept.push({ ...m, content: blocks });
  }
  if (kept === null || removed === null) return null;
  if (thinkingOn(body.thinking) && losesLeadingThinking(messages)) {
    delete body.thinking;
    removed.push('thinking');
  }
  body.messages = kept;
  return removed;
}

/** True for `thinking` that Anthropic checks the tool loop's blocks for: `{"type": "enabled" | "adaptive", …}`. */
function thinkingOn(thinking: unknown): boolean {
  if (thinking === null || typeof thinking !== 'object') return false;
  const type = (thinking as Json).type;
  return type === 'enabled' || type === 'adaptive';
}

/** True for a block Anthropic takes as the start of a thinking turn (`thinking` or `redacted_thinking`). */
function isThinkingBlock(block: unknown): boolean {
  if (block === null || typeof block !== 'object') return false;
  const type = (block as Json).type;
  return type === 'thinking' || type === 'redacted_thinking';
}

/** True for a user message holding a `tool_result` block (a step of a tool loop). */
function isToolResults(m: Json | null | undefined): boolean {
  if (m == null || m.role !== 'user' || !Array.isArray(m.content)) return false;
  return (m.content as unknown[]).some((b) => b !== null && typeof b === 'object' && (b as Json).type === 'tool_result');
}

/**
 * True when `messages` (as the client sent them) end in a tool loop (assistant messages each answered by a user's
 * `tool_result`) in which the gateway's blocks were, and whose final assistant message starts, once they are gone,
 * with something else than a thinking block. Anthropic refuses that when `thinking` is enabled ("a final assistant
 * message must start with a thinking block", 400): exactly Claude Code failing over from Gemini or DeepSeek to
 * Anthropic mid tool loop (and its next steps, whose assistant messages Anthropic wrote without thinking). Without
 * `thinking` Anthropic takes it, so `thinking` is removed for such a request (the gateway cannot sign a block); once
 * a user's own message closes the loop, `thinking` goes again. Source:
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking ("Extended thinking with tool use").
 */
function losesLeadingThinking(messages: unknown[]): boolean {
  const final = messages[messages.length - 2] as Json | null | undefined;
  if (final == null || final.role !== 'assistant' || !Array.isArray(final.content)) return false;
  const first = (final.content as unknown[]).find((b) => !isMadeBlock(b));
  if (isThinkingBlock(first)) return false;
  for (let i = messages.length - 1; i >= 1 && isToolResults(messages[i] as Json | null); i -= 2) {
    const turn = messages[i - 1] as Json | null;
    if (turn === null || typeof turn !== 'object' || turn.role !== 'assistant' || !Array.isArray(turn.content)) return false;
    if ((turn.content as unknown[]).some(isMadeBlock)) return true;
  }
  return false;
}

/**
 * Removes from `body` (the translate stage's copy of `ctx.body`, whose `input` or `messages` it replaces, never
 * edits) the reasoning items or thinking blocks the gateway made, when `ctx.binding` sends them to the first-party
 * provider (see the module comment).
 * @returns the removed members' paths as the client sent them, or null when nothing was removed (the client's bytes
 *   may then go as they are).
 */
export function withoutMadeReasoning(ctx: RequestContext, body: Json): string[] | null {
  const target = firstParty(ctx.binding!);
  if (target === null) return null;
  const client = ctx.clientBody as unknown as Json;
  const raw = ctx.rawBody;
  if (target === 'responses') {
    if (!Array.isArray(body.input)) return null;
    if (body.input === client.input && (raw === null || !mayHoldMadeItem(raw))) return null;
    return dropItems(body, client);
  }
  if (!Array.isArray(body.messages)) return null;
  if (body.messages === client.messages && (raw === null || !mayHoldMadeBlock(raw))) return null;
  return dropBlocks(body);
}
