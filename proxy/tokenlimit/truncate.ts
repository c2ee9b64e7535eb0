/**
 * `truncate`: make an over-limit chat body fit by
 *  1. normalizing every text (whitespace runs → one space, trimmed; no space before `,.;:!?%)]}`
 *     or after `([{`), then, if still over,
 *  2. shortening texts proportionally to their length (longer texts lose more), cutting at a word
 *     boundary and appending "… [truncated]" — texts outside the first system message and the last
 *     user message first (down to 32 tokens each), then those two (down to 32 tokens each), then the
 *     others down to the marker.
 * Each plan is checked by re-estimating; an overshoot (token density differs along a text) is added
 * to the next plan. The first system message and the last user message never go below their first
 * 32 tokens: a body cut to the marker everywhere would reach the model as an empty conversation and
 * be answered as if it were one. When even that minimum does not fit (many messages, images, tools,
 * tool calls or names alone exceed the allowance), the smallest body reached is returned, over the
 * limit; the stage answers it with a 400 (index.ts `assertFits`) instead of forwarding it.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { analyzeWithSpec, countTokens, newExactBudget, type ChatAnalysis, type EstimateSpec, type ExactBudget } from '../../shared/token-estimate.ts';
import { cutEnd, normalizeText, protectedIndices, replaceSlots, textSlots, TRUNCATED_MARKER, type Rewrite, type SlotEdit } from './slots.ts';

/** Tokens a text keeps (besides the marker) before protected texts are touched. */
const MIN_KEEP = 32;
/** Re-estimations at most. */
const MAX_ROUNDS = 8;

/**
 * Token targets removing `excess` raw tokens from texts of `tokens` tokens: stages (unprotected,
 * floor MIN_KEEP) → (protected, floor MIN_KEEP) → (unprotected, marker only); a protected text
 * never goes below MIN_KEEP (see the module comment). Within a stage each text gives the same
 * fraction of what it has above the floor, so longer texts lose more. Floors include the marker's
 * tokens.
 * @returns the target of each text (= its tokens when not cut) and whether `excess` was covered.
 */
export function planProportionalCuts(tokens: readonly number[], isProtected: readonly boolean[], excess: number, markerTokens: number): { targets: number[]; covered: boolean } {
  const targets = tokens.slice();
  let remaining = excess;
  const stages: Array<[boolean, number]> = [
    [false, MIN_KEEP + markerTokens],
    [true, MIN_KEEP + markerTokens],
    [false, markerTokens],
  ];
  for (const [prot, floor] of stages) {
    if (remaining <= 0) break;
    let capacity = 0;
    for (let i = 0; i < targets.length; i++) if (isProtected[i] === prot && targets[i]! > floor) capacity += targets[i]! - floor;
    if (capacity <= 0) continue;
    const f = Math.min(1, remaining / capacity);
    for (let i = 0; i < targets.length; i++) {
      if (isProtected[i] !== prot || targets[i]! <= floor) continue;
      const cut = f * (targets[i]! - floor);
      targets[i]! -= cut;
      remaining -= cut;
    }
  }
  return { targets, covered: remaining <= 1e-6 };
}

/**
 * Runs `truncate` on `body` (already estimated as `before`, over `allowed` input tokens). Each
 * candidate fits when its estimate ≤ `allowed`, decided on a full count when the sample cannot
 * tell and `budget` allows (see estimate.ts analyzeWithSpec), so the cut is no deeper than needed.
 */
export function truncate(body: ChatCompletionRequest, spec: EstimateSpec, allowed: number, before: ChatAnalysis, budget: ExactBudget = newExactBudget()): Rewrite {
  const estimate = (b: ChatCompletionRequest): ChatAnalysis => analyzeWithSpec(b, spec, { allowance: allowed, budget });
  // 1. Normalize whitespace and punctuation spacing.
  const normalized: SlotEdit[] = [];
  for (const slot of textSlots(body.messages)) {
    const text = normalizeText(slot.text);
    if (text !== slot.text) normalized.push({ slot, text });
  }
  const base = replaceSlots(body, normalized);
  let analysis = normalized.length > 0 ? estimate(base) : before;
  if (analysis.tokens <= allowed) return { body: base, analysis };

  // 2. Proportional cuts, re-estimated until the body fits.
  const { firstSystem, lastUser } = protectedIndices(base.messages);
  const slots = textSlots(base.messages);
  const tokens = slots.map((s) => analysis.slotTokens.get(s.key) ?? 0);
  const isProtected = slots.map((s) => s.message === firstSystem || s.message === lastUser);
  const markerTokens = countTokens(` ${TRUNCATED_MARKER}`, spec.encoding);
  const targetRaw = allowed / spec.factor;
  let excess = analysis.raw - targetRaw;
  let best: Rewrite = { body: base, analysis };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { targets, covered } = planProportionalCuts(tokens, isProtected, excess, markerTokens);
    const edits: SlotEdit[] = [];
    for (let i = 0; i < slots.length; i++) {
      if (targets[i]! >= tokens[i]! - 1e-9 || tokens[i]! <= 0) continue;
      const keepTokens = Math.max(0, targets[i]! - markerTokens);
      const text = slots[i]!.text;
      edits.push({ slot: slots[i]!, text: cutEnd(text, (text.length * keepTokens) / tokens[i]!) });
    }
    const candidate = replaceSlots(base, edits);
    analysis = estimate(candidate);
    if (analysis.tokens < best.analysis.tokens) best = { body: candidate, analysis };
    if (analysis.tokens <= allowed) return { body: candidate, analysis };
    if (!covered) break; // every text is down to its floor
    excess += analysis.raw - targetRaw + Math.max(1, 0.002 * targetRaw);
  }
  return best;
}
