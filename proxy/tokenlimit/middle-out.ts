/**
 * `middle-out`: keep the beginning and the end of the conversation, remove from the middle.
 *  1. Whole messages, nearest to the middle first: never the first system (or developer) message,
 *     never the last user message; an assistant message with `tool_calls` (or a legacy
 *     `function_call`) goes together with the `tool` (`function`) results answering it.
 *  2. If the remaining messages (the first system and the last user message) are still over, the
 *     middle of the longest remaining text is cut (head and tail kept at word boundaries,
 *     "… [truncated] …" between), then of the next longest, re-estimating until the body fits;
 *     no text goes below 32 tokens (head and tail), as in truncate: cut to the marker, those two
 *     would reach the model as an empty conversation. When even that minimum does not fit
 *     (images, tools alone exceed the allowance), the smallest body reached is returned, over the
 *     limit; the stage answers it with a 400 (index.ts `assertFits`) instead of forwarding it.
 */
import type { ChatCompletionRequest, ChatMessage } from '../../shared/chat.ts';
import { analyzeWithSpec, countTokens, newExactBudget, type ChatAnalysis, type EstimateSpec, type ExactBudget } from '../../shared/token-estimate.ts';
import { cutMiddle, MIDDLE_MARKER, protectedIndices, replaceSlots, textSlots, type Rewrite, type SlotEdit } from './slots.ts';

/** Tokens a text keeps (head + tail) before the next longest text is cut further. */
const MIN_KEEP = 32;
const MAX_ROUNDS = 8;

/** A set of messages removed together. */
export interface MessageGroup {
  indices: number[];
}

function toolCallIds(m: ChatMessage): Set<string> {
  const ids = new Set<string>();
  if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) if (c && typeof c.id === 'string') ids.add(c.id);
  return ids;
}

/**
 * Removable groups of `messages`, in conversation order: each assistant message with tool calls
 * together with the later `tool` messages answering them (by `tool_call_id`) — or, for a legacy
 * `function_call`, the `function` messages directly after it — and every other message alone.
 * The first system message and the last user message are in no group.
 */
export function removableGroups(messages: readonly ChatMessage[]): MessageGroup[] {
  const { firstSystem, lastUser } = protectedIndices(messages);
  const taken = new Set<number>([firstSystem, lastUser]);
  const groups: MessageGroup[] = [];
  for (let i = 0; i < messages.length; i++) {
    if (taken.has(i)) continue;
    const m = messages[i];
    const indices = [i];
    taken.add(i);
    if (m && m.role === 'assistant') {
      const ids = toolCallIds(m);
      if (ids.size > 0) {
        for (let j = i + 1; j < messages.length; j++) {
          const r = messages[j];
          if (!taken.has(j) && r?.role === 'tool' && typeof r.tool_call_id === 'string' && ids.has(r.tool_call_id)) {
            indices.push(j);
            taken.add(j);
          }
        }
      } else if (m.function_call) {
        for (let j = i + 1; j < messages.length && messages[j]?.role === 'function' && !taken.has(j); j++) {
          indices.push(j);
          taken.add(j);
        }
      }
    }
    groups.push({ indices });
  }
  return groups;
}

/** Groups ordered by distance of their first message from the middle of the conversation (nearest first). */
function middleFirst(groups: MessageGroup[], count: number): MessageGroup[] {
  const center = (count - 1) / 2;
  return groups
    .map((g, order) => ({ g, order, d: Math.abs(g.indices[0]! - center) }))
    .sort((a, b) => a.d - b.d || a.order - b.order)
    .map((x) => x.g);
}

function without(body: ChatCompletionRequest, removed: ReadonlySet<number>): ChatCompletionRequest {
  return { ...body, messages: body.messages.filter((_, i) => !removed.has(i)) };
}

/**
 * Runs `middle-out` on `body` (already estimated as `before`, over `allowed` input tokens). Each
 * candidate fits when its estimate ≤ `allowed`, decided on a full count when the sample cannot
 * tell and `budget` allows (see estimate.ts analyzeWithSpec), so no more is removed than needed.
 */
export function middleOut(body: ChatCompletionRequest, spec: EstimateSpec, allowed: number, before: ChatAnalysis, budget: ExactBudget = newExactBudget()): Rewrite {
  const targetRaw = allowed / spec.factor;
  const estimate = (b: ChatCompletionRequest): ChatAnalysis => analyzeWithSpec(b, spec, { allowance: allowed, budget });

  // 1. Whole middle messages (groups), nearest to the middle first.
  const order = middleFirst(removableGroups(body.messages), body.messages.length);
  const removed = new Set<number>();
  let raw = before.raw;
  let current: Rewrite = { body, analysis: before };
  let next = 0;
  for (let round = 0; next < order.length; round++) {
    // Remove by the itemized counts (they add up), then verify with one estimate; a sampled
    // estimate may shift a little, so later rounds aim lower (2% more per round), and after
    // MAX_ROUNDS all remaining groups go at once (bounded number of estimates).
    const aim = round >= MAX_ROUNDS ? -Infinity : targetRaw * (1 - 0.02 * round);
    do {
      for (const i of order[next]!.indices) {
        removed.add(i);
        raw -= before.messageTokens[i] ?? 0;
      }
      next++;
    } while (next < order.length && raw > aim);
    const candidate = without(body, removed);
    const analysis = estimate(candidate);
    current = { body: candidate, analysis };
    if (analysis.tokens <= allowed) return current;
    raw = analysis.raw;
  }

  // 2. The middle of the longest remaining texts.
  const base = current.body;
  const markerTokens = countTokens(MIDDLE_MARKER, spec.encoding);
  const slots = textSlots(base.messages)
    .map((slot) => ({ slot, tokens: current.analysis.slotTokens.get(slot.key) ?? 0 }))
    .sort((a, b) => b.tokens - a.tokens);
  let excess = current.analysis.raw - targetRaw;
  let best = current;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Longest first, each down to MIN_KEEP at most (the module comment says why not further).
    const targets = slots.map((s) => s.tokens);
    let remaining = excess;
    const floor = MIN_KEEP + markerTokens;
    for (let i = 0; i < slots.length && remaining > 0; i++) {
      const take = Math.min(remaining, targets[i]! - floor);
      if (take <= 0) continue;
      targets[i]! -= take;
      remaining -= take;
    }
    const edits: SlotEdit[] = [];
    for (let i = 0; i < slots.length; i++) {
      const { slot, tokens } = slots[i]!;
      if (targets[i]! >= tokens - 1e-9 || tokens <= 0) continue;
      const keepTokens = Math.max(0, targets[i]! - markerTokens);
      edits.push({ slot, text: cutMiddle(slot.text, (slot.text.length * keepTokens) / tokens) });
    }
    const candidate = replaceSlots(base, edits);
    const analysis = estimate(candidate);
    if (analysis.tokens < best.analysis.tokens) best = { body: candidate, analysis };
    if (analysis.tokens <= allowed) return { body: candidate, analysis };
    if (remaining > 1e-6) break; // every text is down to MIN_KEEP
    excess += analysis.raw - targetRaw + Math.max(1, 0.002 * targetRaw);
  }
  return best;
}
