/**
 * Provider reasoning state carried through a Messages client in a thinking block's `signature`.
 *
 * A Messages client keeps every thinking block of an assistant turn and sends it back unchanged with its
 * `signature` (Anthropic requires that during tool use, so Claude Code and the SDK preserve it). The translator
 * therefore writes Gemini's thought signatures into the signature of a thinking block it emits, keyed by the
 * `tool_use` id, in the carrier form of ../shared/carried-reasoning.ts, and puts them back where Gemini wants them
 * when the block returns. A signature in this form is not one Anthropic accepts, so a thinking block made by the
 * translator cannot be replayed to Anthropic itself. The functions are the shared module's, re-exported under this
 * translator's name.
 */
export { carryMessageSignature, carryToolCallSignature, decodeCarried, encodeCarried, geminiThoughtSignature, isEmptyCarried, type CarriedReasoning } from '../shared/carried-reasoning.ts';
