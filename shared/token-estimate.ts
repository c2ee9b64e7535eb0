/**
 * Pre-flight token estimation of a chat-completions request, in bounded time.
 *
 * Counting follows OpenAI's cookbook "How to count tokens with tiktoken"
 * (https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb):
 * every message costs 3 tokens plus the tokens of its role and content, a `name` costs its tokens
 * plus 1, every reply is primed with 3 tokens, and function definitions cost the cookbook's
 * formatting overheads (`num_tokens_for_tools`: func_init 7 (o200k) / 10 (cl100k), prop_init 3,
 * prop_key 3, enum_init -3, enum_item 3, func_end 12). With these rules the counts equal the
 * `prompt_tokens` the OpenAI API reported for the cookbook's examples (129 / 124 tokens for the
 * example conversation on gpt-3.5-turbo, gpt-4 / gpt-4o, gpt-4o-mini; 105 / 101 with the weather
 * tool) — see test/tokenlimit.test.ts.
 *
 * Encodings: o200k_base for the gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and o-series families,
 * cl100k_base for gpt-4 (incl. gpt-4-turbo) and gpt-3.5; any other model is counted with
 * o200k_base and multiplied by `tokenEstimateFactor(provider)` (shared/models.ts).
 *
 * Tokenizer: gpt-tokenizer when it can be loaded (same counts as js-tiktoken on every input
 * measured, 4-5x faster on prose and code, see bench/estimate.ts), else js-tiktoken. Both are
 * loaded once, lazily, on first use or by {@link warmUpEstimator}; never per request.
 *
 * Bounded time (≤ 50 ms for 1 MB of any content on a 2-core machine, see bench/estimate.ts, plus a
 * full count at the allowance, below):
 * - text is counted in chunks of at most 256 characters (32 with js-tiktoken), cut at the last
 *   place in the window that is certainly a boundary between two pieces of the pre-tokenizer (a
 *   space after a non-space, punctuation after a letter, a digit after a non-digit…, see
 *   isPieceBoundary; such cuts do not change the count), or, inside one piece longer than the
 *   window (a run of letters, spaces, digits or punctuation without a break: "aaaa…", random
 *   letters), forcibly — so BPE, quadratic in the length of a piece, never sees a long piece
 *   (forced cuts add ~1 token each; only they make a full count differ from the tokenizer's);
 * - chunk counts are memoized (bounded LRU), so re-estimating a rewritten body or a conversation's
 *   repeated history is cheap;
 * - even chunked, BPE costs up to ~1 µs per byte (~2 µs per token) on adversarial text (random
 *   letters), so chunks are counted in an evenly spread, scrambled order until a token budget is
 *   spent (10,000 tokens; 4,000 with js-tiktoken — about 20 ms at worst); bodies with more are
 *   extrapolated from that sample by bytes, per text and per stratum (short texts such as roles
 *   apart), with a 3% upward margin on the extrapolated part. Sampling error before the margin,
 *   measured on 36 markdown / JavaScript texts and mixed conversations of 60 kB–1 MB: −2.9% to
 *   +3.6% (mean +0.2%), taken as ±5% for the estimate's range (`low`…`high`). The same body
 *   always gets the same estimate;
 * - a decision at the allowance: the sample decides whether a body fits its allowance only when
 *   the allowance lies outside the estimate's range. Inside it (within ~5% of the allowance) an
 *   OpenAI model's body is counted in full, so every decision at the boundary is the one OpenAI's
 *   count gives — up to a budget per request of 256,000 tokens counted in full (two full counts at
 *   a 128k context window; 20,000 with js-tiktoken): ~20–50 ms for 118k tokens of English prose
 *   or code, ~0.2 s for CJK text, the costliest per token, and ≤ ~0.75 s for the whole budget
 *   (bench/estimate.ts, "boundary" column). Bodies beyond the budget (e.g. near the 1M
 *   allowance of gpt-4.1) are decided by the sample and its margin.
 *
 * Every text's token count is at most its UTF-8 byte length (a token is at least one byte), so
 * {@link ChatAnalysis.bound} = text bytes + fixed overheads bounds the estimate from above and lets
 * callers skip counting when the bound fits.
 */
import { createRequire } from 'node:module';
import type { ChatCompletionRequest } from './chat.ts';
import { tokenEstimateFactor } from './models.ts';

/** Cookbook URL for the counting rules. */
export const COUNTING_SOURCE = 'https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb';

/** The tiktoken encodings the estimator counts with (o200k_base: GPT-4o and later; cl100k_base: GPT-4, GPT-3.5). */
export type EncodingName = 'o200k_base' | 'cl100k_base';
/** The npm tokenizer packages the estimator can count with. */
export type TokenizerBackendName = 'gpt-tokenizer' | 'js-tiktoken';

/** How a model's input is estimated. */
export interface EstimateSpec {
  encoding: EncodingName;
  /** Multiplier applied to the count (1 for OpenAI-family models). */
  factor: number;
  /** True when the model is an OpenAI model counted with its own encoding (factor 1). */
  openaiFamily: boolean;
}

/** Injectable lookups; defaults are the shared model table's. */
export interface EstimateOptions {
  /** Provider → multiplier on an o200k_base count (default `tokenEstimateFactor` from shared/models.ts). */
  factor?: (provider: string) => number;
}

// ---------------------------------------------------------------------------------------------
// Cookbook constants
// ---------------------------------------------------------------------------------------------

/** Tokens per message (`<|start|>{role}<|message|>{content}<|end|>`). */
const TOKENS_PER_MESSAGE = 3;
/** Extra tokens when a message carries a `name`. */
const TOKENS_PER_NAME = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
const REPLY_PRIMING = 3;
/** Function-definition overheads from the cookbook's `num_tokens_for_tools`. */
const TOOL_OVERHEAD: Record<EncodingName, { funcInit: number; propInit: number; propKey: number; enumInit: number; enumItem: number; funcEnd: number }> = {
  o200k_base: { funcInit: 7, propInit: 3, propKey: 3, enumInit: -3, enumItem: 3, funcEnd: 12 },
  cl100k_base: { funcInit: 10, propInit: 3, propKey: 3, enumInit: -3, enumItem: 3, funcEnd: 12 },
};
/** Approximation (not in the cookbook): tokens framing one assistant tool call besides its name and arguments. */
const TOKENS_PER_TOOL_CALL = 3;
/**
 * Images: OpenAI's documented image cost — `detail: low` 85 tokens; otherwise 85 + 170 per 512 px
 * tile, taken as a 1024x1024 image (4 tiles, 765 tokens) since the size is not known up front.
 */
const IMAGE_LOW_TOKENS = 85;
const IMAGE_TOKENS = 765;
/** Audio input: ~10 tokens per second, taken as 1 token per 1,600 bytes of encoded audio (128 kbit/s). */
const AUDIO_BYTES_PER_TOKEN = 1600;
/** A `file` part (e.g. a PDF) of unknown content: a flat approximation. */
const FILE_TOKENS = 1000;
/** Any other `data:` URL met in an unknown part: counted like an image. */
const DATA_URL_TOKENS = IMAGE_TOKENS;
/** Upward margin on the extrapolated (not counted) part of a sampled estimate. */
const SAMPLED_MARGIN = 1.03;
/**
 * Relative error assumed of the extrapolated part of a sampled estimate (before the margin), for
 * its range ({@link ChatAnalysis.low} … {@link ChatAnalysis.high}): the error measured on 36
 * markdown / JavaScript texts and mixed conversations of 60 kB–1 MB was −2.9% to +3.6%, and
 * bench/estimate.ts's pathological texts stay within it; rounded up to 5%.
 */
const SAMPLING_ERROR = 0.05;

// ---------------------------------------------------------------------------------------------
// Model → encoding
// ---------------------------------------------------------------------------------------------

const O200K_FAMILY = /^(?:gpt-4o|chatgpt-4o|gpt-4\.[1-9]|gpt-[5-9]|gpt-oss|gpt-realtime|gpt-audio|codex-|computer-use|o[1-9]\d*(?:-|$))/;
const CL100K_FAMILY = /^(?:gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada)/;

/**
 * The encoding and factor used for `provider`/`model`. The model's family is read from its last
 * path segment, lower-cased (`openai/gpt-4o` on openrouter, `accounts/fireworks/models/gpt-oss-120b`
 * count as OpenAI models with factor 1 on any provider).
 */
export function estimateSpec(provider: string, model: string, opts: EstimateOptions = {}): EstimateSpec {
  const bare = (model.split('/').pop() ?? model).trim().toLowerCase();
  if (O200K_FAMILY.test(bare)) return { encoding: 'o200k_base', factor: 1, openaiFamily: true };
  if (CL100K_FAMILY.test(bare)) return { encoding: 'cl100k_base', factor: 1, openaiFamily: true };
  const f = (opts.factor ?? tokenEstimateFactor)(provider);
  return { encoding: 'o200k_base', factor: Number.isFinite(f) && f > 0 ? f : 1, openaiFamily: false };
}

// ---------------------------------------------------------------------------------------------
// Tokenizer backends (lazy singletons)
// ---------------------------------------------------------------------------------------------

interface Backend {
  name: TokenizerBackendName;
  /** Longest chunk handed to the tokenizer, in UTF-16 code units. */
  chunkChars: number;
  /**
   * Tokens counted per estimate, at most (plus one chunk): bodies with more are sampled. Sized so
   * the costliest text per token (random letters, ~2 µs/token with gpt-tokenizer, ~5 with
   * js-tiktoken) stays near 20 ms on an idle machine.
   */
  budgetTokens: number;
  /**
   * Tokens a request may count in full to make decisions at its allowance exact (see
   * {@link ExactBudget}). gpt-tokenizer: 256,000 — two full counts at a 128k context window (the
   * check, and the verification of a rewrite such as truncate's whitespace normalization, which
   * changes most chunks). Cost per token counted, cold, on the 2-core VM of bench/README.md:
   * English prose or code ~0.2 µs, random letters ~1.4–1.7 µs, CJK text ~1.8 µs (~2.9 µs without
   * punctuation): ≤ ~50 ms for English, ≤ ~0.75 s at worst. js-tiktoken (a fallback only): ~2 µs
   * for prose, ~13–21 µs for CJK, so 20,000 (≤ ~0.4 s).
   */
  exactBudgetTokens: number;
  count(text: string, encoding: EncodingName): number;
  clearCaches(): void;
}

const requireCjs = createRequire(import.meta.url);

type GptTokenizerModule = typeof import('gpt-tokenizer/encoding/o200k_base');
interface JsTiktoken {
  encode(text: string, allowedSpecial?: string[] | 'all', disallowedSpecial?: string[] | 'all'): number[];
}

function gptTokenizerBackend(): Backend {
  const mods: Partial<Record<EncodingName, GptTokenizerModule>> = {};
  // Special-token text ("<|endoftext|>") in user content is ordinary text, as the API treats it.
  const options = { disallowedSpecial: new Set<string>() };
  const load = (encoding: EncodingName): GptTokenizerModule => {
    let mod = mods[encoding];
    if (!mod) {
      mod = requireCjs(`gpt-tokenizer/encoding/${encoding}`) as GptTokenizerModule;
      mod.setMergeCacheSize(20_000); // bounded memory: ~20k pieces per encoding
      mods[encoding] = mod;
    }
    return mod;
  };
  load('o200k_base'); // fail here (→ fallback) when the package is absent
  return {
    name: 'gpt-tokenizer',
    chunkChars: 256,
    budgetTokens: 10_000,
    exactBudgetTokens: 256_000,
    count: (text, encoding) => load(encoding).countTokens(text, options),
    clearCaches: () => {
      for (const mod of Object.values(mods)) mod?.clearMergeCache();
    },
  };
}

function jsTiktokenBackend(): Backend {
  const encoders: Partial<Record<EncodingName, JsTiktoken>> = {};
  const load = (encoding: EncodingName): JsTiktoken => {
    let enc = encoders[encoding];
    if (!enc) {
      const { Tiktoken } = requireCjs('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => JsTiktoken };
      const ranks = requireCjs(`js-tiktoken/ranks/${encoding}`) as { default?: unknown };
      enc = new Tiktoken(ranks.default ?? ranks);
      encoders[encoding] = enc;
    }
    return enc;
  };
  load('o200k_base');
  return {
    name: 'js-tiktoken',
    // js-tiktoken's merge is cubic-ish in a piece's bytes (1,000 'a' take ~100 ms): keep chunks short.
    chunkChars: 32,
    budgetTokens: 4_000,
    exactBudgetTokens: 20_000,
    count: (text, encoding) => load(encoding).encode(text, [], []).length,
    clearCaches: () => {},
  };
}

let backend: Backend | null = null;
let preferred: TokenizerBackendName | null = null;

function getBackend(): Backend {
  if (backend) return backend;
  if (preferred !== 'js-tiktoken') {
    try {
      backend = gptTokenizerBackend();
      return backend;
    } catch (err) {
      if (preferred === 'gpt-tokenizer') throw err;
    }
  }
  backend = jsTiktokenBackend();
  return backend;
}

/**
 * Loads the tokenizer and both encodings now (≈0.3 s with gpt-tokenizer, ≈0.9 s with js-tiktoken)
 * so the first request does not pay for it. The proxy calls this at start; idempotent.
 */
export function warmUpEstimator(): void {
  const b = getBackend();
  b.count('warm up', 'o200k_base');
  b.count('warm up', 'cl100k_base');
}

/** Name of the tokenizer in use (loads it when not loaded yet). */
export function tokenizerBackendName(): TokenizerBackendName {
  return getBackend().name;
}

/**
 * Selects the tokenizer library (for benchmarks and tests; the default prefers gpt-tokenizer and
 * falls back to js-tiktoken). Clears the chunk cache. Throws when `name` cannot be loaded.
 */
export function setTokenizerBackend(name: TokenizerBackendName): void {
  preferred = name;
  backend = null;
  clearChunkCaches();
  getBackend();
}

/** Empties the chunk-count cache and the tokenizer's own merge cache (benchmarks: cold runs). */
export function clearEstimatorCaches(): void {
  clearChunkCaches();
  backend?.clearCaches();
}

function clearChunkCaches(): void {
  chunkCaches.o200k_base.clear();
  chunkCaches.cl100k_base.clear();
}

// ---------------------------------------------------------------------------------------------
// Chunked, memoized counting
// ---------------------------------------------------------------------------------------------

/** Chunk counts kept per encoding (≤ 8,192 chunks of ≤ 256 chars each: a few MB at most). */
const CHUNK_CACHE_MAX = 8192;
/** chunk text → tokens, per encoding. Insertion order doubles as LRU order. */
const chunkCaches: Record<EncodingName, Map<string, number>> = { o200k_base: new Map(), cl100k_base: new Map() };

function countChunk(b: Backend, chunk: string, encoding: EncodingName): number {
  const cache = chunkCaches[encoding];
  const hit = cache.get(chunk);
  if (hit !== undefined) {
    cache.delete(chunk);
    cache.set(chunk, hit);
    return hit;
  }
  const n = b.count(chunk, encoding);
  if (cache.size >= CHUNK_CACHE_MAX) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(chunk, n);
  return n;
}

function isSpace(c: number): boolean {
  // JavaScript's \s (what the pre-tokenizer patterns match as whitespace), plus U+0085 to be safe.
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x85 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Character classes of the pre-tokenizer patterns that decide where a piece may end. */
const OTHER = 0; // punctuation, symbols, controls: [^\s\p{L}\p{N}] minus marks
const LETTER = 1; // \p{L}
const DIGIT = 2; // \p{N}
const MARK = 3; // \p{M}: a letter in o200k's patterns, punctuation in cl100k's
const SPACE = 4; // see isSpace

const UNKNOWN = 0xff;
/** Class of each BMP code point, filled in on first sight (64 KB; a few regex tests per new character). */
const bmpClasses = new Uint8Array(0x10000).fill(UNKNOWN);
const IS_LETTER = /\p{L}/u;
const IS_DIGIT = /\p{N}/u;
const IS_MARK = /\p{M}/u;

function classOf(cp: number): number {
  const known = cp < 0x10000 ? bmpClasses[cp]! : UNKNOWN;
  if (known !== UNKNOWN) return known;
  const ch = String.fromCodePoint(cp);
  const cls = cp < 0x10000 && isSpace(cp) ? SPACE : IS_LETTER.test(ch) ? LETTER : IS_DIGIT.test(ch) ? DIGIT : IS_MARK.test(ch) ? MARK : OTHER;
  if (cp < 0x10000) bmpClasses[cp] = cls;
  return cls;
}

/**
 * True when `p` (0 < p < text.length) is certainly a boundary between two pieces of the
 * pre-tokenizer of both o200k_base and cl100k_base, for every text around it — so counting
 * text[..p) and text[p..) apart gives the count of the whole (BPE never merges across pieces).
 * The patterns (tiktoken's openai_public.py, as gpt-tokenizer and js-tiktoken use them) have no
 * look-behind; no piece spans such a `p`, and the piece ending at p−1 ends in a non-space, so no
 * end-of-text or `(?!\S)` look-ahead differs. With b = the character before p and c = at p:
 *  - c is whitespace other than CR/LF (in every definition: not U+0085, U+FEFF) and b is not
 *    whitespace — only a punctuation piece takes trailing CR/LF ("."+"\n");
 *  - c is CR or LF and b a letter or digit;
 *  - c is a digit (\p{N}) and b neither whitespace nor a digit (digit pieces hold only digits,
 *    grouped in threes from the start of their run, so a cut inside a run is not safe);
 *  - c is neither whitespace, letter, digit, mark (a letter in o200k) nor an apostrophe (which
 *    may start a contraction suffix "'s"), and b is a letter or digit (punctuation may begin the
 *    next letter piece, but no piece runs from a letter or digit into punctuation).
 * Never inside a surrogate pair.
 */
function isPieceBoundary(text: string, p: number): boolean {
  const c0 = text.charCodeAt(p);
  if ((c0 >= 0xdc00 && c0 <= 0xdfff) || c0 === 39) return false;
  const b0 = text.charCodeAt(p - 1);
  const pair = b0 >= 0xdc00 && b0 <= 0xdfff && p >= 2 ? text.codePointAt(p - 2)! : b0;
  const b = classOf(pair >= 0x10000 ? pair : b0); // a lone surrogate is OTHER (UTF-8 encodes it as U+FFFD)
  if (b === SPACE) return false;
  if (c0 === 10 || c0 === 13) return b === LETTER || b === DIGIT;
  const c = classOf(c0 >= 0xd800 && c0 <= 0xdbff ? text.codePointAt(p)! : c0);
  if (c === SPACE) return c0 !== 0x85 && c0 !== 0xfeff;
  if (c === DIGIT) return b !== DIGIT;
  return c === OTHER && (b === LETTER || b === DIGIT);
}

/**
 * End (exclusive) of the chunk of `text` starting at `start`, at most `max` code units long: the
 * last piece boundary in the window ({@link isPieceBoundary}), else — inside one piece longer than
 * `max` (a run of letters, spaces, digits or punctuation without a break) — a forced cut, never
 * inside a surrogate pair. Only forced cuts change a count (by about one token each).
 */
function chunkEnd(text: string, start: number, max: number): number {
  const limit = start + max;
  if (limit >= text.length) return text.length;
  // Scan at most `max` characters back (lastIndexOf would scan to the string's start: quadratic).
  for (let j = limit; j > start; j--) {
    if (isPieceBoundary(text, j)) return j;
  }
  const c = text.charCodeAt(limit - 1);
  return c >= 0xd800 && c <= 0xdbff ? limit - 1 : limit;
}

/**
 * Token count of `text` in `encoding` (no message overheads), counted in bounded chunks cut at
 * pre-tokenizer piece boundaries: equal to the tokenizer's count of the whole text, except that a
 * single piece longer than the chunk size (256 characters of letters, spaces, digits or
 * punctuation without a break, e.g. "aaaa…") is cut, which changes the count by about one token
 * per cut. Cost is linear in the text's length; no sampling (use {@link analyzeChat} for bodies).
 */
export function countTextTokens(text: string, encoding: EncodingName = 'o200k_base'): number {
  const b = getBackend();
  let n = 0;
  for (let i = 0; i < text.length; ) {
    const end = chunkEnd(text, i, b.chunkChars);
    n += countChunk(b, text.slice(i, end), encoding);
    i = end;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Body walk
// ---------------------------------------------------------------------------------------------

/** Owner of a segment or fixed cost: a message index, or -1 for request-level items (tools, priming). */
type Owner = number;

interface Collected {
  texts: string[];
  owners: Owner[];
  /** Content slot key (`${message}:${part}`, part -1 = string content) of each text, or null. */
  slots: Array<string | null>;
  /** Fixed tokens per owner (index message+1; 0 = request level). */
  fixed: number[];
}

type Json = unknown;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function base64Bytes(s: string): number {
  const comma = s.startsWith('data:') ? s.indexOf(',') + 1 : 0;
  return Math.floor(((s.length - comma) * 3) / 4);
}

/** Records one text to tokenize; empty texts are left out (they cost nothing). */
function addText(c: Collected, s: string, owner: Owner, slot: string | null = null): void {
  if (s.length === 0) return;
  c.texts.push(s);
  c.owners.push(owner);
  c.slots.push(slot);
}

function addFixed(c: Collected, n: number, owner: Owner): void {
  c.fixed[owner + 1] += n;
}

/** Strings of an arbitrary JSON value (keys and string leaves), iteratively; data: URLs at a flat cost. */
function collectGeneric(c: Collected, value: Json, owner: Owner): void {
  const stack: Json[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.startsWith('data:') && v.length > 256) addFixed(c, DATA_URL_TOKENS, owner);
      else addText(c, v, owner);
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      addText(c, String(v), owner);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (isRecord(v)) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        addText(c, keys[i]!, owner);
        stack.push(v[keys[i]!]);
      }
    }
  }
}

/** One content value: string, part, or (non-standard) nested arrays of parts — iteratively. */
function collectContent(c: Collected, value: Json, owner: Owner): void {
  if (typeof value === 'string') {
    addText(c, value, owner, `${owner}:-1`);
    return;
  }
  if (!Array.isArray(value)) {
    if (value != null) collectGeneric(c, value, owner);
    return;
  }
  // Top-level parts keep their index as slot; parts in nested arrays are counted but not slots.
  const stack: Array<{ v: Json; slot: string | null }> = [];
  for (let i = value.length - 1; i >= 0; i--) stack.push({ v: value[i], slot: `${owner}:${i}` });
  while (stack.length > 0) {
    const { v, slot } = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], slot: null });
    } else if (typeof v === 'string') {
      addText(c, v, owner);
    } else if (isRecord(v)) {
      collectPart(c, v, owner, slot);
    }
  }
}

/** One content part: text (a slot only when `type: 'text'`), image, audio or file at its flat cost, else its strings. */
function collectPart(c: Collected, p: Record<string, unknown>, owner: Owner, slot: string | null): void {
  const type = p.type;
  if ((type === 'text' || type === undefined || type === 'input_text') && typeof p.text === 'string') {
    addText(c, p.text, owner, type === 'text' ? slot : null);
  } else if (type === 'image_url' || type === 'input_image') {
    const img = p.image_url;
    const detail = isRecord(img) ? img.detail : p.detail;
    addFixed(c, detail === 'low' ? IMAGE_LOW_TOKENS : IMAGE_TOKENS, owner);
  } else if (type === 'input_audio') {
    const audio = p.input_audio;
    const data = isRecord(audio) && typeof audio.data === 'string' ? audio.data : '';
    addFixed(c, Math.max(1, Math.ceil(base64Bytes(data) / AUDIO_BYTES_PER_TOKEN)), owner);
  } else if (type === 'file') {
    addFixed(c, FILE_TOKENS, owner);
    const file = p.file;
    if (isRecord(file) && typeof file.filename === 'string') addText(c, file.filename, owner);
  } else {
    collectGeneric(c, p, owner);
  }
}

/** One assistant tool call (or legacy `function_call`): framing tokens, name and arguments (a non-string arguments value by its strings). */
function collectToolCall(c: Collected, fn: Json, owner: Owner): void {
  addFixed(c, TOKENS_PER_TOOL_CALL, owner);
  if (!isRecord(fn)) return;
  if (typeof fn.name === 'string') addText(c, fn.name, owner);
  if (typeof fn.arguments === 'string') addText(c, fn.arguments, owner);
  else if (fn.arguments != null) collectGeneric(c, fn.arguments, owner);
}

/** Message `i`: its overhead, role, content, name and tool calls, in the order the estimate has always walked them. */
function collectMessage(c: Collected, m: unknown, i: number): void {
  addFixed(c, TOKENS_PER_MESSAGE, i);
  if (!isRecord(m)) return;
  if (typeof m.role === 'string') addText(c, m.role, i);
  collectContent(c, m.content, i);
  if (typeof m.name === 'string') {
    addText(c, m.name, i);
    addFixed(c, TOKENS_PER_NAME, i);
  }
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) collectToolCall(c, isRecord(call) ? (call.function ?? call.custom ?? call) : call, i);
  }
  if (isRecord(m.function_call)) collectToolCall(c, m.function_call, i);
}

/**
 * One function's parameters as the cookbook's `num_tokens_for_tools` counts them (flat
 * properties, enums), plus the strings of whatever else a property's schema holds.
 */
function collectParameters(c: Collected, fn: Record<string, unknown>, o: (typeof TOOL_OVERHEAD)[EncodingName]): void {
  const params = isRecord(fn.parameters) ? fn.parameters : null;
  const props = params && isRecord(params.properties) ? params.properties : null;
  const keys = props ? Object.keys(props) : [];
  if (!props || keys.length === 0) return;
  addFixed(c, o.propInit, -1);
  for (const key of keys) {
    addFixed(c, o.propKey, -1);
    const prop = props[key];
    const p = isRecord(prop) ? prop : {};
    const type = typeof p.type === 'string' ? p.type : p.type === undefined ? '' : JSON.stringify(p.type);
    if (Array.isArray(p.enum)) {
      addFixed(c, o.enumInit, -1);
      for (const item of p.enum) {
        addFixed(c, o.enumItem, -1);
        addText(c, typeof item === 'string' ? item : String(item), -1);
      }
    }
    const pdesc = typeof p.description === 'string' ? p.description.replace(/\.$/, '') : '';
    addText(c, `${key}:${type}:${pdesc}`, -1);
    // Beyond the cookbook's flat schema (nested objects, arrays, anyOf...): count their strings.
    for (const k of Object.keys(p)) {
      if (k !== 'type' && k !== 'description' && k !== 'enum') {
        addText(c, k, -1);
        collectGeneric(c, p[k], -1);
      }
    }
  }
}

/** Function definitions (cookbook num_tokens_for_tools); legacy `functions` the same way. */
function collectTools(c: Collected, body: ChatCompletionRequest, encoding: EncodingName): void {
  const defs: Json[] = [];
  if (Array.isArray(body.tools)) defs.push(...body.tools);
  if (Array.isArray(body.functions)) for (const f of body.functions) defs.push({ type: 'function', function: f });
  const o = TOOL_OVERHEAD[encoding];
  let functions = 0;
  for (const tool of defs) {
    const fn = isRecord(tool) && tool.type === 'function' ? tool.function : undefined;
    if (!isRecord(fn)) {
      collectGeneric(c, tool, -1);
      continue;
    }
    functions++;
    addFixed(c, o.funcInit, -1);
    const desc = typeof fn.description === 'string' ? fn.description.replace(/\.$/, '') : '';
    addText(c, `${typeof fn.name === 'string' ? fn.name : ''}:${desc}`, -1);
    collectParameters(c, fn, o);
  }
  if (functions > 0) addFixed(c, o.funcEnd, -1);
}

/**
 * The texts of `body` to tokenize, in body order (the sample's chunk order depends on it), with
 * the fixed costs of everything that is not text. Module-level helpers that take the accumulator,
 * rather than closures over it, so a walk allocates no functions.
 */
function collect(body: ChatCompletionRequest, encoding: EncodingName): Collected {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const c: Collected = { texts: [], owners: [], slots: [], fixed: new Array<number>(messages.length + 1).fill(0) };
  for (let i = 0; i < messages.length; i++) collectMessage(c, messages[i], i);
  addFixed(c, REPLY_PRIMING, -1);
  collectTools(c, body, encoding);
  const rf = body.response_format;
  if (isRecord(rf) && rf.type === 'json_schema' && rf.json_schema != null) collectGeneric(c, rf.json_schema, -1);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Analysis
// ---------------------------------------------------------------------------------------------

/** Token estimate of a request body, itemized. Token figures before the factor are "raw". */
export interface ChatAnalysis {
  /** Estimated input tokens: ceil(raw × factor). */
  tokens: number;
  /** Estimate before the factor (may be fractional when sampled). */
  raw: number;
  /** Upper bound of `tokens` from UTF-8 byte lengths: ceil((text bytes + fixed) × factor). */
  bound: number;
  /** True when sampled and extrapolated (see module doc); false when every chunk was counted. */
  sampled: boolean;
  /**
   * True when the count is the tokenizer's own (times the factor): every chunk counted and every
   * cut at a pre-tokenizer piece boundary. False when sampled, or when a piece longer than a chunk
   * (e.g. 300 letters without a break) had to be cut (about one token per such cut).
   */
  exact: boolean;
  /**
   * Range of the count implied by the sample: ceil((fixed + counted + extrapolated × (1 ∓ 5%)) ×
   * factor), see SAMPLING_ERROR; both equal `tokens` when not sampled. `low ≤ tokens ≤ high`.
   */
  low: number;
  high: number;
  spec: EstimateSpec;
  /** Raw tokens of request-level items: reply priming, tool definitions, response_format schema. */
  requestTokens: number;
  /** Raw tokens per message (overheads, role, name, content, tool calls), same order as body.messages. */
  messageTokens: number[];
  /** Raw tokens of each editable text: key `${message}:${part}` (part -1 = string content). */
  slotTokens: Map<string, number>;
}

/**
 * The k-th chunk index to sample, a bijection of [0, 2^bits): the bit-reversed (van der Corput)
 * sequence — its first 2^j values hit each of the 2^j equal blocks of the index range once, so
 * every prefix is spread evenly over the body — with Owen's nested scrambling (each bit flipped by
 * a fixed hash of the bits above it), so the position inside each block is pseudo-random and no
 * regular structure of the body (e.g. alternating short role and long content texts) lines up
 * with the sample. Deterministic.
 */
function sampleIndex(k: number, bits: number): number {
  let v = 0;
  for (let i = 0; i < bits; i++) v = (v << 1) | ((k >>> i) & 1); // bit reversal
  let out = 0;
  for (let d = bits - 1; d >= 0; d--) {
    const prefix = v >>> (d + 1); // the unscrambled bits above d (with a leading 1 to tell lengths apart)
    let h = Math.imul((prefix | (1 << (bits - d - 1))) ^ Math.imul(d + 1, 0x9e3779b1), 0x85ebca77);
    h ^= h >>> 15;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 13;
    out |= (((v >>> d) & 1) ^ ((h >>> 16) & 1)) << d;
  }
  return out >>> 0;
}

/** Texts up to this many bytes (roles, names, short messages) form their own sampling stratum. */
const SHORT_TEXT_BYTES = 32;

/** Per-text token estimates of {@link estimateTexts} and {@link countTextsInFull}. */
export interface TextEstimate {
  /** Tokens of each text (no overheads), fractional when sampled (with the 3% margin). */
  tokens: number[];
  /** True when extrapolated from a sample. */
  sampled: boolean;
  /** Chunk cuts inside a pre-tokenizer piece (each may change a count by about one token). */
  forcedCuts: number;
  /** Sum of the texts' tokens at the low and high end of the sampling error (both = the sum when not sampled). */
  low: number;
  high: number;
}

/** Chunks of `texts` in body order: owner text, [start, end), and the number of forced cuts. */
function chunkTable(texts: readonly string[], max: number): { owner: number[]; starts: number[]; ends: number[]; forcedCuts: number } {
  const owner: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let forcedCuts = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    for (let s = 0; s < t.length; ) {
      const e = chunkEnd(t, s, max);
      if (e < t.length && !isPieceBoundary(t, e)) forcedCuts++;
      owner.push(i);
      starts.push(s);
      ends.push(e);
      s = e;
    }
  }
  return { owner, starts, ends, forcedCuts };
}

/**
 * Estimated tokens of each of `texts` (no overheads) in `encoding`, in bounded time. The texts are
 * cut into chunks (see {@link chunkEnd}); chunks are counted in a scrambled van der Corput order
 * ({@link sampleIndex}) until the backend's token budget is spent. When every chunk got counted
 * the result is the count; otherwise each text's uncounted bytes are extrapolated at its counted
 * tokens-per-byte ratio, shrunk towards the ratio of its stratum (short texts ≤ 32 bytes, or long
 * ones) when the text has few samples, times a 3% margin (`low`/`high`: times 1 ∓ SAMPLING_ERROR
 * instead). Deterministic; each estimate ≤ the text's byte length; fractional when sampled.
 */
export function estimateTexts(texts: readonly string[], encoding: EncodingName, bytes?: readonly number[]): TextEstimate {
  const n = texts.length;
  const b = getBackend();
  const { owner, starts, ends, forcedCuts } = chunkTable(texts, b.chunkChars);
  const chunks = owner.length;
  const tokens = new Array<number>(n).fill(0);
  const countedBytes = new Array<number>(n).fill(0);
  let spent = 0;
  let counted = 0;
  const bits = Math.ceil(Math.log2(Math.max(1, chunks)));
  for (let k = 0; k < 2 ** bits && spent < b.budgetTokens; k++) {
    const c = sampleIndex(k, bits);
    if (c >= chunks) continue;
    const i = owner[c]!;
    const chunk = texts[i]!.slice(starts[c]!, ends[c]!);
    const t = countChunk(b, chunk, encoding);
    tokens[i] += t;
    countedBytes[i] += Buffer.byteLength(chunk, 'utf8');
    spent += t;
    counted++;
  }
  if (counted === chunks) return { tokens, sampled: false, forcedCuts, low: spent, high: spent };

  const byteLen = bytes ?? texts.map((t) => Buffer.byteLength(t, 'utf8'));
  // Tokens and bytes counted per stratum: [short, long].
  const st = [0, 0];
  const sb = [0, 0];
  for (let i = 0; i < n; i++) {
    const s = byteLen[i]! <= SHORT_TEXT_BYTES ? 0 : 1;
    st[s]! += tokens[i]!;
    sb[s]! += countedBytes[i]!;
  }
  const overall = sb[0]! + sb[1]! > 0 ? (st[0]! + st[1]!) / (sb[0]! + sb[1]!) : 0.25;
  const stratumRatio = [sb[0]! > 0 ? st[0]! / sb[0]! : overall, sb[1]! > 0 ? st[1]! / sb[1]! : overall];
  const prior = 2 * b.chunkChars; // bytes of pseudo-evidence at the stratum's ratio (shrinks sparse per-text ratios)
  let low = 0;
  let high = 0;
  for (let i = 0; i < n; i++) {
    const rest = byteLen[i]! - countedBytes[i]!;
    if (rest > 0) {
      const g = stratumRatio[byteLen[i]! <= SHORT_TEXT_BYTES ? 0 : 1]!;
      const extrapolated = (rest * (tokens[i]! + prior * g)) / (countedBytes[i]! + prior);
      low += Math.min(byteLen[i]!, tokens[i]! + extrapolated * (1 - SAMPLING_ERROR));
      high += Math.min(byteLen[i]!, tokens[i]! + extrapolated * (1 + SAMPLING_ERROR));
      tokens[i] = Math.min(byteLen[i]!, tokens[i]! + extrapolated * SAMPLED_MARGIN);
    } else {
      low += tokens[i]!;
      high += tokens[i]!;
    }
  }
  return { tokens, sampled: true, forcedCuts, low, high };
}

/**
 * What a request may still spend on full counts (decisions at the allowance, see
 * {@link analyzeWithSpec}): `tokens` of chunks not yet counted in full by this request, at most.
 * Chunks a full count of the request already counted (`seen`, per encoding) are free, so a
 * rewrite verified after the check costs only its new chunks. Deterministic: what a request may
 * count depends on its own bodies only, never on what other requests left in the caches.
 */
export interface ExactBudget {
  /** Tokens (raw, before any factor) still to spend; below 0 once a count ran out. */
  tokens: number;
  /** Chunk texts counted in full by the request so far, per encoding. */
  seen: Record<EncodingName, Set<string>>;
}

/**
 * A fresh full-count budget for one request: `tokens` (default the tokenizer's: 256,000 with
 * gpt-tokenizer, 20,000 with js-tiktoken — see Backend.exactBudgetTokens for the cost per token).
 */
export function newExactBudget(tokens: number = getBackend().exactBudgetTokens): ExactBudget {
  return { tokens, seen: { o200k_base: new Set(), cl100k_base: new Set() } };
}

/**
 * Counts every chunk of `texts` (no sampling), charging chunks new to the request to `budget`.
 * Refuses up front (nothing counted) when the expected cost — `expected` raw tokens (the sampled
 * estimate's high end) times the share of text in chunks new to the request — exceeds the budget,
 * so a body beyond the budget costs its sample only; stops when the budget runs out on the way
 * (the chunks counted up to then stay charged: the work was done).
 * @returns the counts, or null when refused or stopped.
 */
export function countTextsInFull(texts: readonly string[], encoding: EncodingName, budget: ExactBudget, expected = 0): TextEstimate | null {
  const b = getBackend();
  const seen = budget.seen[encoding];
  const chunks: string[] = [];
  const owners: number[] = [];
  let forcedCuts = 0;
  let length = 0; // UTF-16 code units: only their share matters
  let newLength = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!;
    for (let s = 0; s < t.length; ) {
      const e = chunkEnd(t, s, b.chunkChars);
      if (e < t.length && !isPieceBoundary(t, e)) forcedCuts++;
      const chunk = t.slice(s, e);
      chunks.push(chunk);
      owners.push(i);
      length += chunk.length;
      if (!seen.has(chunk)) newLength += chunk.length;
      s = e;
    }
  }
  if (length > 0 && (expected * newLength) / length > budget.tokens) return null;
  const tokens = new Array<number>(texts.length).fill(0);
  let total = 0;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c]!;
    const k = countChunk(b, chunk, encoding);
    if (!seen.has(chunk)) {
      budget.tokens -= k;
      if (budget.tokens < 0) return null;
      seen.add(chunk);
    }
    tokens[owners[c]!] += k;
    total += k;
  }
  return { tokens, sampled: false, forcedCuts, low: total, high: total };
}

/**
 * Tokens of one text in `encoding` (default o200k_base), no message overheads. Bounded time for
 * any input (sampled beyond the backend's budget, see {@link estimateTexts}); exact below it.
 */
export function countTokens(text: string, encoding: EncodingName = 'o200k_base'): number {
  if (!text) return 0;
  return Math.ceil(estimateTexts([text], encoding).tokens[0]! - 1e-9);
}

/** Options of {@link analyzeWithSpec}. Token figures are after the factor. */
export interface AnalyzeOptions {
  /** Return null, without tokenizing anything, when the UTF-8 byte bound is ≤ this (the body surely fits). */
  skipIfBoundWithin?: number;
  /**
   * The allowance the caller will compare `tokens` with (fits: `tokens ≤ allowance`). When a
   * sampled estimate's range {@link ChatAnalysis.low}…{@link ChatAnalysis.high} contains it — the
   * sample cannot tell — an OpenAI model's body is counted in full, so the decision is the one
   * OpenAI's count gives (see {@link ChatAnalysis.exact} for the one exception); if `budget`
   * allows (else the sampled estimate, with its margin, decides).
   * Other models are counted with o200k_base × a factor, an approximation either way: not counted
   * in full.
   */
  allowance?: number;
  /** The request's full-count budget (default: a fresh {@link newExactBudget}). */
  budget?: ExactBudget;
}

/**
 * Estimates `body`'s input tokens for `spec` and itemizes them. Bounded time: sampled beyond the
 * tokenizer's budget (see module doc), plus, when `opts.allowance` lies within the sampled range,
 * a full count of at most the budget's tokens. Never throws on malformed shapes.
 * @returns null only with `opts.skipIfBoundWithin`, when the byte bound is within it.
 */
export function analyzeWithSpec(body: ChatCompletionRequest, spec: EstimateSpec, opts?: AnalyzeOptions & { skipIfBoundWithin?: undefined }): ChatAnalysis;
export function analyzeWithSpec(body: ChatCompletionRequest, spec: EstimateSpec, opts: AnalyzeOptions): ChatAnalysis | null;
export function analyzeWithSpec(body: ChatCompletionRequest, spec: EstimateSpec, opts: AnalyzeOptions = {}): ChatAnalysis | null {
  const c = collect(body, spec.encoding);
  const n = c.texts.length;
  const bytes = new Array<number>(n);
  let totalBytes = 0;
  for (let i = 0; i < n; i++) {
    bytes[i] = Buffer.byteLength(c.texts[i]!, 'utf8');
    totalBytes += bytes[i]!;
  }
  let fixedTotal = 0;
  for (const f of c.fixed) fixedTotal += f;
  const toTokens = (raw: number): number => Math.ceil(raw * spec.factor - 1e-9);
  const bound = toTokens(totalBytes + fixedTotal);
  if (opts.skipIfBoundWithin !== undefined && bound <= opts.skipIfBoundWithin) return null;

  let est = estimateTexts(c.texts, spec.encoding, bytes);
  // Outside its error range the sample decides alone; inside, only a full count can tell. A
  // factor's approximation (other models) is not made any truer by counting: OpenAI models only.
  const { allowance } = opts;
  const sampleCannotTell = allowance !== undefined && toTokens(fixedTotal + est.low) <= allowance && allowance < toTokens(fixedTotal + est.high);
  if (est.sampled && spec.openaiFamily && sampleCannotTell) {
    est = countTextsInFull(c.texts, spec.encoding, opts.budget ?? newExactBudget(), est.high) ?? est;
  }

  const messageTokens = c.fixed.slice(1);
  let requestTokens = c.fixed[0]!;
  const slotTokens = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const t = est.tokens[i]!;
    const owner = c.owners[i]!;
    if (owner < 0) requestTokens += t;
    else messageTokens[owner]! += t;
    const slot = c.slots[i];
    if (slot) slotTokens.set(slot, (slotTokens.get(slot) ?? 0) + t);
  }
  let raw = requestTokens;
  for (const m of messageTokens) raw += m;
  const tokens = toTokens(raw);
  return {
    tokens,
    raw,
    bound,
    sampled: est.sampled,
    exact: !est.sampled && est.forcedCuts === 0,
    low: est.sampled ? Math.min(tokens, toTokens(fixedTotal + est.low)) : tokens,
    high: est.sampled ? Math.max(tokens, toTokens(fixedTotal + est.high)) : tokens,
    spec,
    requestTokens,
    messageTokens,
    slotTokens,
  };
}

/** {@link analyzeWithSpec} for `provider`/`model` (encoding and factor from {@link estimateSpec}). */
export function analyzeChat(body: ChatCompletionRequest, provider: string, model: string, opts: EstimateOptions = {}): ChatAnalysis {
  return analyzeWithSpec(body, estimateSpec(provider, model, opts));
}

/**
 * Estimated input (prompt) tokens of a chat-completions body sent to `provider`/`model`, counted as
 * OpenAI's cookbook does (see module doc and {@link COUNTING_SOURCE}). Exact for OpenAI models on
 * bodies of up to the tokenizer's budget (10,000 text tokens with gpt-tokenizer), sampled beyond
 * (with the 3% margin; for a decision against an allowance use {@link analyzeWithSpec} with
 * `allowance`); o200k_base × `tokenEstimateFactor(provider)` for other models.
 *
 * Bounded time: ≤ 50 ms for a 1 MB body of any content (bench/estimate.ts). Never throws on
 * malformed shapes (unknown members are walked iteratively or ignored).
 */
export function estimateChatTokens(body: ChatCompletionRequest, provider: string, model: string, opts: EstimateOptions = {}): number {
  return analyzeChat(body, provider, model, opts).tokens;
}
