/**
 * Benchmark of the token estimator (shared/token-estimate.ts) with both tokenizer libraries.
 * Run: node --import tsx bench/estimate.ts   (prints a table; writes bench/results/estimate.json)
 *
 * Contents at 10 kB, 100 kB and 1 MB: prose, markdown (README files of the installed packages,
 * sorted), CJK (common Han characters with a comma or full stop every ~15), and pathological text
 * (no spaces, all spaces, one repeated character, random letters, random unicode); plus
 * structure-heavy bodies (10,000 content parts, arrays nested 10,000 deep, an image part with a
 * 1 MB data URL).
 *  1. library: gpt-tokenizer vs js-tiktoken on identical inputs (whole prose / markdown texts, and
 *     32-character chunks of every content at 100 kB): time (ms, one cold run) and whether the
 *     counts are the same.
 *  2. estimator, per library: `estimateChatTokens` on a chat body (system + user message holding the
 *     text) as the proxy runs it — chunked, sampled beyond the budget — median and max of 7 cold
 *     runs (chunk cache and merge cache cleared), ms; `exact`: a full chunked count without
 *     sampling (median of 3 runs, 1 run at 1 MB), ms, and the estimate's deviation from it (err%,
 *     includes the +3% margin on the extrapolated part). The two libraries chunk long pieces
 *     differently (forced cuts every 256 vs 32 characters), so their exact counts differ there;
 *     `boundary`: a decision at an allowance equal to the exact count, as the handlers make it
 *     (`analyzeWithSpec` with `allowance`: counted in full within the request's budget), cold, ms,
 *     and how it was decided ("full" count, or "sampled" when over the budget).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { prose, rng } from '../test/support/text.ts';
import {
  analyzeWithSpec,
  clearEstimatorCaches,
  countTextTokens,
  estimateChatTokens,
  estimateSpec,
  setTokenizerBackend,
  type TokenizerBackendName,
} from '../shared/token-estimate.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SIZES = [10_000, 100_000, 1_000_000];
const BACKENDS: TokenizerBackendName[] = ['gpt-tokenizer', 'js-tiktoken'];

/** First `bytes` UTF-8 bytes (about) of `text`, without splitting a surrogate pair. */
function takeBytes(text: string, bytes: number): string {
  let lo = 0;
  let hi = Math.min(text.length, bytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(text.slice(0, mid)) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  const c = text.charCodeAt(lo - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? lo - 1 : lo);
}

/** ASCII prose of `bytes` bytes (numbers up to 100,000). */
function englishProse(bytes: number): string {
  return takeBytes(prose(bytes, 1, 100_000), bytes);
}

/** README/markdown files of installed packages, in sorted path order, up to `bytes`. */
function markdown(bytes: number): string | null {
  const files: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 3) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (name.toLowerCase().endsWith('.md')) files.push(p);
      else if (!name.includes('.') || name.startsWith('@')) {
        try {
          if (statSync(p).isDirectory()) walk(p, depth + 1);
        } catch {
          /* ignore */
        }
      }
    }
  };
  walk(join(root, 'node_modules'), 0);
  let text = '';
  for (const f of files) {
    if (Buffer.byteLength(text) >= bytes) break;
    text += readFileSync(f, 'utf8') + '\n\n';
  }
  return Buffer.byteLength(text) >= bytes ? takeBytes(text, bytes) : null;
}

function randomLetters(bytes: number): string {
  const r = rng(3);
  let s = '';
  for (let i = 0; i < bytes; i++) s += String.fromCharCode(97 + Math.floor(r() * 26));
  return s;
}

function randomUnicode(bytes: number): string {
  const r = rng(7);
  const parts: string[] = [];
  let b = 0;
  while (b < bytes) {
    const cp = r() < 0.05 ? 0x1f300 + Math.floor(r() * 0x300) : 0x20 + Math.floor(r() * 0xffd0);
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    parts.push(c);
    b += Buffer.byteLength(c);
  }
  return takeBytes(parts.join(''), bytes);
}

/** Chinese-like text: common Han characters (3 bytes each), a comma or full stop every ~15. */
function cjk(bytes: number): string {
  const han = '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身';
  const r = rng(4);
  const parts: string[] = [];
  for (let b = 0; b < bytes; b += 3) {
    const x = r();
    parts.push(x < 0.05 ? '，' : x < 0.07 ? '。' : han[Math.floor(r() * han.length)]!);
  }
  return takeBytes(parts.join(''), bytes);
}

const TEXTS: Record<string, (bytes: number) => string | null> = {
  prose: englishProse,
  markdown,
  cjk,
  'no spaces': (n) => takeBytes('abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(n / 36)), n),
  'all spaces': (n) => ' '.repeat(n),
  'one char': (n) => 'a'.repeat(n),
  'random letters': randomLetters,
  'random unicode': randomUnicode,
};

function chatBody(text: string): ChatCompletionRequest {
  return { model: 'gpt-4o', messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: text }] };
}

function structureBodies(): Record<string, ChatCompletionRequest> {
  const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', text: `part number ${i} of the content ` }));
  let nested: unknown = [{ type: 'text', text: 'deep' }];
  for (let i = 0; i < 10_000; i++) nested = [nested, { type: 'text', text: 'x' }];
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'iVBORw0KGgo'.repeat(90_000)}` } };
  return {
    '10,000 content parts': { model: 'gpt-4o', messages: [{ role: 'user', content: parts }] },
    'arrays nested 10,000 deep': { model: 'gpt-4o', messages: [{ role: 'user', content: nested as never }] },
    'image parts (1 MB data URL)': { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image as never] }] },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time<T>(f: () => T): [T, number] {
  const t = performance.now();
  const v = f();
  return [v, performance.now() - t];
}

interface Row {
  backend: TokenizerBackendName;
  content: string;
  bytes: number;
  estimateMs: number;
  estimateMaxMs: number;
  estimateTokens: number;
  exactMs: number | null;
  exactTokens: number | null;
  errorPct: number | null;
  boundaryMs: number | null;
  boundaryDecision: 'full' | 'sampled' | null;
}

const rows: Row[] = [];
const loads: Record<string, number> = {};

// Library load times (fresh require, both encodings).
const req = createRequire(import.meta.url);
const [gt, gtMs] = time(() => ({ o: req('gpt-tokenizer/encoding/o200k_base'), c: req('gpt-tokenizer/encoding/cl100k_base') }));
loads['gpt-tokenizer'] = gtMs;
const [jt, jtMs] = time(() => {
  const { Tiktoken } = req('js-tiktoken/lite');
  const o = req('js-tiktoken/ranks/o200k_base');
  const c = req('js-tiktoken/ranks/cl100k_base');
  return { o: new Tiktoken(o.default ?? o), c: new Tiktoken(c.default ?? c) };
});
loads['js-tiktoken'] = jtMs;
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const libCount = {
  'gpt-tokenizer': (t: string): number => gt.o.countTokens(t, NO_SPECIAL) as number,
  'js-tiktoken': (t: string): number => jt.o.encode(t, [], []).length as number,
};
const texts = new Map<string, string>();
for (const [name, make] of Object.entries(TEXTS)) {
  for (const bytes of SIZES) {
    const t = make(bytes);
    if (t !== null) texts.set(`${name}@${bytes}`, t);
  }
}

// Library comparison on identical inputs: whole texts (prose, markdown) and 32-character chunks of
// every content at 100 kB (short enough for js-tiktoken's merge on no-space runs).
const comparison: Array<{ input: string; bytes: number; tokens: Record<string, number>; ms: Record<string, number> }> = [];
for (const [key, text] of texts) {
  const [content, b] = key.split('@') as [string, string];
  const bytes = Number(b);
  const inputs: Array<[string, string[]]> = [];
  if (content === 'prose' || content === 'markdown') inputs.push([`${content} (whole text)`, [text]]);
  if (bytes === 100_000) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; ) {
      let e = Math.min(text.length, i + 32);
      const c = text.charCodeAt(e - 1);
      if (e < text.length && c >= 0xd800 && c <= 0xdbff) e--;
      chunks.push(text.slice(i, e));
      i = e;
    }
    inputs.push([`${content} (32-char chunks)`, chunks]);
  }
  for (const [input, parts] of inputs) {
    const tokens: Record<string, number> = {};
    const ms: Record<string, number> = {};
    for (const lib of BACKENDS) {
      gt.o.clearMergeCache();
      const [n, t] = time(() => parts.reduce((a, p) => a + libCount[lib](p), 0));
      tokens[lib] = n;
      ms[lib] = t;
    }
    comparison.push({ input, bytes, tokens, ms });
    console.log(
      `library ${input.padEnd(32)} ${String(bytes).padStart(8)} B  gpt-tokenizer ${ms['gpt-tokenizer']!.toFixed(1).padStart(7)} ms  js-tiktoken ${ms['js-tiktoken']!.toFixed(1).padStart(7)} ms  ${tokens['gpt-tokenizer'] === tokens['js-tiktoken'] ? 'same count' : 'DIFFERENT'} (${tokens['gpt-tokenizer']})`,
    );
  }
}
const identical = comparison.every((c) => c.tokens['gpt-tokenizer'] === c.tokens['js-tiktoken']);
console.log('');

for (const backend of BACKENDS) {
  setTokenizerBackend(backend);
  estimateChatTokens(chatBody('warm up'), 'openai', 'gpt-4o'); // JIT + lazy encodings
  for (const [key, text] of texts) {
    const [content, b] = key.split('@') as [string, string];
    const bytes = Number(b);
    const bodyOf = chatBody(text);
    const runs: number[] = [];
    let tokens = 0;
    for (let i = 0; i < 7; i++) {
      clearEstimatorCaches();
      const [n, ms] = time(() => estimateChatTokens(bodyOf, 'openai', 'gpt-4o'));
      tokens = n;
      runs.push(ms);
    }
    const exactRuns: number[] = [];
    let exact = 0;
    for (let i = 0; i < (bytes >= 1_000_000 ? 1 : 3); i++) {
      clearEstimatorCaches();
      const [n, ms] = time(() => countTextTokens(text, 'o200k_base') + countTextTokens('You are a helpful assistant.', 'o200k_base') + 3 + 1 + 3 + 1 + 3);
      exact = n;
      exactRuns.push(ms);
    }
    const boundaryRuns: number[] = [];
    let decision: 'full' | 'sampled' = 'sampled';
    for (let i = 0; i < (bytes >= 1_000_000 ? 1 : 3); i++) {
      clearEstimatorCaches();
      const [a, ms] = time(() => analyzeWithSpec(bodyOf, estimateSpec('openai', 'gpt-4o'), { allowance: exact }));
      decision = a.sampled ? 'sampled' : 'full';
      boundaryRuns.push(ms);
    }
    rows.push({
      backend,
      content,
      bytes,
      estimateMs: median(runs),
      estimateMaxMs: Math.max(...runs),
      estimateTokens: tokens,
      exactMs: median(exactRuns),
      exactTokens: exact,
      errorPct: ((tokens - exact) / exact) * 100,
      boundaryMs: median(boundaryRuns),
      boundaryDecision: decision,
    });
    const r = rows[rows.length - 1]!;
    console.log(
      `${backend.padEnd(13)} ${content.padEnd(15)} ${String(bytes).padStart(8)} B  estimate ${r.estimateMs.toFixed(1).padStart(7)} ms (max ${r.estimateMaxMs.toFixed(1).padStart(6)})  ${String(tokens).padStart(7)} tok | exact ${r.exactMs!.toFixed(0).padStart(6)} ms ${String(exact).padStart(7)} tok | err ${r.errorPct!.toFixed(2).padStart(5)}% | boundary ${r.boundaryMs!.toFixed(0).padStart(5)} ms ${decision}`,
    );
  }
  for (const [name, b] of Object.entries(structureBodies())) {
    const runs: number[] = [];
    let tokens = 0;
    for (let i = 0; i < 7; i++) {
      clearEstimatorCaches();
      const [n, ms] = time(() => estimateChatTokens(b, 'openai', 'gpt-4o'));
      tokens = n;
      runs.push(ms);
    }
    let bytes = 0;
    try {
      bytes = Buffer.byteLength(JSON.stringify(b));
    } catch {
      bytes = -1; // too deep for JSON.stringify (the estimator walks it iteratively)
    }
    rows.push({ backend, content: name, bytes, estimateMs: median(runs), estimateMaxMs: Math.max(...runs), estimateTokens: tokens, exactMs: null, exactTokens: null, errorPct: null, boundaryMs: null, boundaryDecision: null });
    console.log(`${backend.padEnd(13)} ${name.padEnd(28)} ${String(bytes).padStart(8)} B  estimate ${median(runs).toFixed(1).padStart(7)} ms (max ${Math.max(...runs).toFixed(1)})  ${tokens} tok`);
  }
}

console.log(`\nlibrary counts identical on every input: ${identical}`);
console.log(`library load (both encodings): ${Object.entries(loads).map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ')}`);

const out = join(root, 'bench', 'results', 'estimate.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, units: 'ms, tokens, bytes', identicalCounts: identical, loadMs: loads, libraryComparison: comparison, estimator: rows }, null, 2),
);
console.log(`wrote ${out}`);
