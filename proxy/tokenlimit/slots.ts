/**
 * Editable texts of a chat body ("slots") and the cuts the token-limit strategies make to them.
 * A slot is a message's string `content` (part -1) or the `text` of a top-level `{"type":"text"}`
 * content part; its key `${message}:${part}` matches {@link ChatAnalysis.slotTokens}.
 * Bodies are never mutated: rewrites copy the messages and parts they change.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage } from '../../shared/chat.ts';
import type { ChatAnalysis } from '../../shared/token-estimate.ts';

/** Appended where the end of a text was cut (truncate). */
export const TRUNCATED_MARKER = '… [truncated]';
/** Inserted where the middle of a text was cut (middle-out). */
export const MIDDLE_MARKER = '\n… [truncated] …\n';

/** One editable text. */
export interface TextSlot {
  key: string;
  message: number;
  /** Index of the content part, or -1 for a string `content`. */
  part: number;
  text: string;
}

/** Editable texts of `messages`, in order. */
export function textSlots(messages: readonly ChatMessage[]): TextSlot[] {
  const out: TextSlot[] = [];
  for (let m = 0; m < messages.length; m++) {
    const content = messages[m]?.content;
    if (typeof content === 'string') {
      if (content.length > 0) out.push({ key: `${m}:-1`, message: m, part: -1, text: content });
    } else if (Array.isArray(content)) {
      for (let p = 0; p < content.length; p++) {
        const part = content[p];
        if (part && typeof part === 'object' && !Array.isArray(part) && part.type === 'text' && typeof part.text === 'string' && part.text.length > 0) {
          out.push({ key: `${m}:${p}`, message: m, part: p, text: part.text });
        }
      }
    }
  }
  return out;
}

/** A new text for a slot. */
export interface SlotEdit {
  slot: TextSlot;
  text: string;
}

/** A copy of `body` with the slots' new texts; untouched messages and parts are shared, not copied. */
export function replaceSlots(body: ChatCompletionRequest, edits: readonly SlotEdit[]): ChatCompletionRequest {
  if (edits.length === 0) return body;
  const messages = body.messages.slice();
  const copied = new Set<number>();
  for (const { slot, text } of edits) {
    const m = slot.message;
    const msg = messages[m]!;
    if (slot.part < 0) {
      messages[m] = copied.has(m) ? Object.assign(msg, { content: text }) : { ...msg, content: text };
    } else {
      const source = msg.content;
      if (!Array.isArray(source)) continue;
      const content = copied.has(m) ? source : source.slice();
      content[slot.part] = { ...(source[slot.part] as ChatContentPart), text };
      messages[m] = copied.has(m) ? Object.assign(msg, { content }) : { ...msg, content };
    }
    copied.add(m);
  }
  return { ...body, messages };
}

/** Whitespace runs → one space, trimmed; no space before `,.;:!?%)]}` nor after `([{`. */
export function normalizeText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/ ([,.;:!?%)\]}])/g, '$1')
    .replace(/([([{]) /g, '$1')
    .trim();
}

function isWs(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000;
}

function notInsidePair(text: string, i: number): number {
  const c = text.charCodeAt(i - 1);
  return i > 0 && c >= 0xd800 && c <= 0xdbff ? i - 1 : i;
}

/** Index ≤ `i` to cut at: a whitespace within the last 20% (≥ 32 chars) before `i`, else `i` itself. */
export function snapBack(text: string, i: number): number {
  if (i <= 0) return 0;
  if (i >= text.length) return text.length;
  const stop = Math.max(0, i - Math.max(32, Math.floor(i * 0.2)));
  for (let j = i; j > stop; j--) if (isWs(text.charCodeAt(j))) return j;
  return notInsidePair(text, i);
}

/** Index ≥ `i` to resume at: just after a whitespace within the next 20% (≥ 32 chars), else `i`. */
export function snapForward(text: string, i: number): number {
  if (i <= 0) return 0;
  if (i >= text.length) return text.length;
  const rest = text.length - i;
  const stop = Math.min(text.length, i + Math.max(32, Math.floor(rest * 0.2)));
  for (let j = i; j < stop; j++) if (isWs(text.charCodeAt(j - 1))) return j;
  return notInsidePair(text, i);
}

/** The first `keepChars` of `text` (cut back to a word boundary) followed by the truncation marker. */
export function cutEnd(text: string, keepChars: number): string {
  if (keepChars >= text.length) return text;
  const end = snapBack(text, Math.max(0, Math.floor(keepChars)));
  const head = text.slice(0, end).trimEnd();
  return head ? `${head} ${TRUNCATED_MARKER}` : TRUNCATED_MARKER;
}

/** Head and tail of `text`, `keepChars` in all (cut at word boundaries), with the middle marker between. */
export function cutMiddle(text: string, keepChars: number): string {
  if (keepChars >= text.length) return text;
  const keep = Math.max(0, Math.floor(keepChars));
  const headEnd = snapBack(text, Math.ceil(keep / 2));
  const tailStart = Math.max(headEnd, snapForward(text, text.length - Math.floor(keep / 2)));
  const head = text.slice(0, headEnd).trimEnd();
  const tail = text.slice(tailStart).trimStart();
  return `${head}${MIDDLE_MARKER}${tail}`.trim() || MIDDLE_MARKER.trim();
}

/** Index of the first system (or developer) message and of the last user message; -1 when absent. */
export function protectedIndices(messages: readonly ChatMessage[]): { firstSystem: number; lastUser: number } {
  let firstSystem = -1;
  let lastUser = -1;
  for (let i = 0; i < messages.length; i++) {
    const role = messages[i]?.role;
    if (firstSystem < 0 && (role === 'system' || role === 'developer')) firstSystem = i;
    if (role === 'user') lastUser = i;
  }
  return { firstSystem, lastUser };
}

/** What a strategy returns: the rewritten body and its estimate. */
export interface Rewrite {
  body: ChatCompletionRequest;
  analysis: ChatAnalysis;
}
