/**
 * Provider reasoning state carried through a client that keeps opaque reasoning data and sends it back unchanged:
 * a Messages thinking block's `signature`, or a Responses `reasoning` item's `encrypted_content`.
 *
 * Gemini's OpenAI-compatible API returns opaque thought signatures (`extra_content.google.thought_signature` on each
 * tool call, and on the message) that Gemini 3 requires back on the next request of a tool-use turn, or it answers
 * 400. Clients of the other dialects preserve their own opaque reasoning members (Anthropic requires thinking
 * signatures back during tool use; Codex asks for `reasoning.encrypted_content` and replays those items), so a
 * translator writes the signatures into such a member as
 * `gateway-reasoning:<base64url of JSON {"google":{"message"?: sig, "tool_calls"?: {<tool call id>: sig}}}>`, and puts
 * them back where Gemini wants them when the member returns. The `:` never occurs in Anthropic's signatures or
 * OpenAI's encrypted content (both base64 alphabets), so the forms cannot be confused; a carrier in this form is not one
 * Anthropic or OpenAI accept, so it cannot be replayed to them.
 * Source: https://ai.google.dev/gemini-api/docs/thought-signatures ("OpenAI compatibility").
 */
import type { ChatMessage, ChatToolCall } from '../../../shared/chat.ts';
import { isRecord } from './values.ts';

const PREFIX = 'gateway-reasoning:';

/** Reasoning state of one assistant turn that must travel back to the provider. */
export interface CarriedReasoning {
  /** Gemini's thought signatures: of the message, and of each tool call by its id as the client sees it. */
  google?: { message?: string; tool_calls?: Record<string, string> };
}

/** True when `carried` holds nothing. */
export function isEmptyCarried(carried: CarriedReasoning): boolean {
  const g = carried.google;
  return !g || (g.message === undefined && (!g.tool_calls || Object.keys(g.tool_calls).length === 0));
}

/** Adds Gemini's message-level thought signature. */
export function carryMessageSignature(carried: CarriedReasoning, signature: string): void {
  (carried.google ??= {}).message = signature;
}

/** Adds Gemini's thought signature of the tool call the client knows as `toolCallId`. */
export function carryToolCallSignature(carried: CarriedReasoning, toolCallId: string, signature: string): void {
  const calls = ((carried.google ??= {}).tool_calls ??= {});
  // Defined, not assigned: a call id "__proto__" is a key like any other, not Object.prototype's setter.
  Object.defineProperty(calls, toolCallId, { value: signature, enumerable: true, writable: true, configurable: true });
}

/** Adds everything `from` carries to `into` (later signatures of the same call win). */
export function mergeCarried(into: CarriedReasoning, from: CarriedReasoning): void {
  if (!from.google) return;
  const g = (into.google ??= {});
  if (from.google.message !== undefined) g.message = from.google.message;
  if (from.google.tool_calls) g.tool_calls = { ...g.tool_calls, ...from.google.tool_calls };
}

/** The carrier string of `carried` (`gateway-reasoning:…`); the empty string when it holds nothing. */
export function encodeCarried(carried: CarriedReasoning): string {
  if (isEmptyCarried(carried)) return '';
  return PREFIX + Buffer.from(JSON.stringify(carried), 'utf8').toString('base64url');
}

/**
 * The reasoning state in a carrier string when a translator wrote it; null for any other value (Anthropic's own
 * signatures, OpenAI's encrypted content, empty, or a damaged one: those are not the gateway's to read).
 */
export function decodeCarried(carrier: unknown): CarriedReasoning | null {
  if (typeof carrier !== 'string' || !carrier.startsWith(PREFIX)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(carrier.slice(PREFIX.length), 'base64url').toString('utf8'));
    if (!isRecord(parsed)) return null;
    const carried: CarriedReasoning = {};
    const google = parsed.google;
    if (isRecord(google)) {
      if (typeof google.message === 'string') carryMessageSignature(carried, google.message);
      if (isRecord(google.tool_calls)) {
        for (const [id, sig] of Object.entries(google.tool_calls)) if (typeof sig === 'string') carryToolCallSignature(carried, id, sig);
      }
    }
    return carried;
  } catch {
    return null;
  }
}

/**
 * Gemini's thought signature in an OpenAI-compatible object (a message, a stream delta or a tool call):
 * `extra_content.google.thought_signature`, or the bare `thought_signature` Gemini 2.5 also sets on messages.
 */
export function geminiThoughtSignature(value: Record<string, unknown>): string | undefined {
  const extra = value.extra_content;
  const google = isRecord(extra) ? extra.google : undefined;
  const sig = isRecord(google) ? google.thought_signature : value.thought_signature;
  return typeof sig === 'string' && sig !== '' ? sig : undefined;
}

/**
 * Puts Gemini's thought signatures `carried` back on the chat assistant `message` (`extra_content.google.thought_signature`)
 * and on each of its tool calls whose id (as sent to the provider) they were read with.
 */
export function restoreThoughtSignatures(message: ChatMessage, carried: CarriedReasoning): void {
  const g = carried.google;
  if (!g) return;
  if (g.message !== undefined) message.extra_content = { google: { thought_signature: g.message } };
  for (const call of message.tool_calls ?? []) {
    // Own keys only: a call id "constructor" or "toString" has no signature, whatever Object.prototype holds.
    const sig = g.tool_calls !== undefined && Object.hasOwn(g.tool_calls, call.id) ? g.tool_calls[call.id] : undefined;
    if (sig !== undefined) (call as ChatToolCall & { extra_content?: unknown }).extra_content = { google: { thought_signature: sig } };
  }
}
