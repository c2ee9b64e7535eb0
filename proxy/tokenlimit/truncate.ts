/**
 * `truncate`: make an over-limit chat body fit by
 *  1. normalizing every text (whitespace runs → one space, trimmed; no space before `,.;:!?%)]}`
 *     or after `([{`), then, if still over,
 *  2. shortening texts proportionally to their length (longer texts lose more), cutting at a word
 *     boundary and appending "… [truncated]" — texts outside the first system message and the last
 *     user message first (down to 32 tokens each), then those two, then all down to the marker.
 * Each plan is checked by re-estimating; an overshoot (token density differs along a text) is added
 * to the next plan. When even marker-only texts do not fit (images, tools, tool calls or names
 * alone exceed the allowance), the smallest body reached is returned, over the limit.
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import { analyzeWithSpec, countTokens, type ChatAnalysis, type EstimateSpec } from './estimate.ts';
import { cutEnd, normalizeText, protectedIndices, replaceSlots, textSlots, TRUNCATED_MARKER, type Rewrite, type TextSlot } from './slots.ts';

/** Tokens a text keeps (besides the marker) before protected texts are touched. */
const MIN_KEEP = 32;
/** Re-estimations at most. */
const MAX_ROUNDS = 8;

interface Sized extends TextSlot {
  tokens: number;
  protected: boolean;
}

/**
 * Token targets per slot removing `excess` raw tokens: stages (unprotected, floor MIN_KEEP) →
 * (protected, floor MIN_KEEP) → (unprotected, marker only) → (protected, marker only); within a
 * stage each text gives the same fraction of what it has above the floor.
 * @returns targets for the slots to cut, and whether the excess could be covered.
 */
export function planProportionalCuts(slots: readonly Sized[], excess: number, markerTokens: number): { targets: Map<string, number>; covered: boolean } {
  const target = new Map<string, number>(slots.map((s) => [s.key, s.tokens]));
  let remaining = excess;
  const stages: Array<[boolean, number]> = [
    [false, MIN_KEEP + markerTokens],
    [true, MIN_KEEP + markerTokens],
    [false, markerTokens],
    [true, markerTokens],
  ];
  for (const [prot, floor] of stages) {
    if (remaining <= 0) break;
    const cands = slots.filter((s) => s.protected === prot && target.get(s.key)! > floor);
    let capacity = 0;
    for (const s of cands) capacity += target.get(s.key)! - floor;
    if (capacity <= 0) continue;
    const f = Math.min(1, remaining / capacity);
    for (const s of cands) {
      const t = target.get(s.key)!;
      const cut = f * (t - floor);
      target.set(s.key, t - cut);
      remaining -= cut;
    }
  }
  const targets = new Map<string, number>();
  for (const s of slots) {
    const t = target.get(s.key)!;
    if (t < s.tokens - 1e-9) targets.set(s.key, t);
  }
  return { targets, covered: remaining <= 1e-9 };
}

/** Runs `truncate` on `body` (already estimated as `before`, over `allowed`). */
export function truncate(body: ChatCompletionRequest, spec: EstimateSpec, allowed: number, before: ChatAnalysis): Rewrite {
  // 1. Normalize whitespace and punctuation spacing.
  const normalized = new Map<string, string>();
  for (const s of textSlots(body.messages)) {
    const n = normalizeText(s.text);
    if (n !== s.text) normalized.set(s.key, n);
  }
  const base = replaceSlots(body, normalized);
  let analysis = normalized.size > 0 ? analyzeWithSpec(base, spec) : before;
  if (analysis.tokens <= allowed) return { body: base, analysis };

  // 2. Proportional cuts, re-estimated until the body fits.
  const { firstSystem, lastUser } = protectedIndices(base.messages);
  const sized: Sized[] = textSlots(base.messages).map((s) => ({
    ...s,
    tokens: analysis.slotTokens.get(s.key) ?? 0,
    protected: s.message === firstSystem || s.message === lastUser,
  }));
  const markerTokens = countTokens(` ${TRUNCATED_MARKER}`, spec.encoding);
  const targetRaw = allowed / spec.factor;
  let excess = analysis.raw - targetRaw;
  let best: Rewrite = { body: base, analysis };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { targets, covered } = planProportionalCuts(sized, excess, markerTokens);
    const replacements = new Map<string, string>();
    for (const s of sized) {
      const t = targets.get(s.key);
      if (t === undefined || s.tokens <= 0) continue;
      const keepTokens = Math.max(0, t - markerTokens);
      replacements.set(s.key, cutEnd(s.text, (s.text.length * keepTokens) / s.tokens));
    }
    const candidate = replaceSlots(base, replacements);
    const a = analyzeWithSpec(candidate, spec);
    if (a.tokens < best.analysis.tokens) best = { body: candidate, analysis: a };
    if (a.tokens <= allowed) return { body: candidate, analysis: a };
    if (!covered) break;
    const over = a.raw - targetRaw;
    excess += over + Math.max(1, 0.02 * excess);
  }
  return best;
}
