/**
 * The cache key: SHA-256 over the canonical JSON (safe-stable-stringify: members sorted, so their
 * order in the client's body does not matter) of the organization, the seed, the endpoint kind, the
 * provider, the model and the body without the ignored members. The organization is part of the
 * key, so one organization never reaches another's answers.
 */
import { hash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';

/** Sorted members; a value JSON text cannot carry throws rather than being keyed loosely. */
const canonical = configure({ deterministic: true, strict: true, circularValue: Error });

/**
 * The replacer of a body holding a number too large for a double (`1e400` is legal JSON; JSON.parse
 * makes it ±Infinity): such a number becomes the string `\u0000Infinity` (or `\u0000-Infinity`),
 * and a string the client sent that starts with U+0000 gets a second one, so that within such
 * bodies the two never meet; {@link cacheKey} marks these texts apart from every other body's.
 */
function nonFiniteAsText(_key: string, value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : `\u0000${value}`;
  return typeof value === 'string' && value.startsWith('\u0000') ? `\u0000${value}` : value;
}

/** What a key is made of. */
export interface KeyParts {
  /** The caller's organization ('' with `svc.features: none`: one tenant). */
  organization: string;
  /** `Svc-Cache-Seed` ('' when absent). */
  seed: string;
  /** The endpoint kind's name (`chat`, `embeddings`, `messages`, `responses`). */
  endpoint: string;
  provider: string;
  /** The model sent to the provider. */
  model: string;
  /** The parsed request body (a JSON object). */
  body: Record<string, unknown>;
  /**
   * Body members left out of the key (`Svc-Cache-Ignore-Keys`): a top-level member's name, or a
   * dot-separated path into the body where `*` stands for every element of an array or every member
   * of an object (`input.*.id`: the `id` of each of `input`'s items; an array's elements are named
   * only by `*`); null: none.
   */
  ignore: readonly string[] | null;
}

/**
 * `value` without what `path` (from segment `at` on) names, as {@link KeyParts.ignore} says; a
 * path that names nothing leaves it as it is. Copies only the objects and arrays on the way to a
 * removed member: the parsed body is also what goes to the provider.
 */
function omit(value: unknown, path: readonly string[], at: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  const name = path[at]!;
  const last = at === path.length - 1;
  // In an array only `*` names something: every element (a path ending in it empties the array).
  if (Array.isArray(value)) return name !== '*' ? value : last ? [] : value.map((item) => omit(item, path, at + 1));
  const object = value as Record<string, unknown>;
  const names = name === '*' ? Object.keys(object) : Object.hasOwn(object, name) ? [name] : [];
  if (names.length === 0) return value;
  const out = { ...object };
  for (const n of names) {
    if (last) delete out[n];
    else out[n] = omit(object[n], path, at + 1);
  }
  return out;
}

/** The hex SHA-256 key of `parts` (64 characters). */
export function cacheKey(parts: KeyParts): string {
  let body: unknown = parts.body;
  if (parts.ignore !== null) {
    // A top-level member whose own name holds a dot is that member, as before paths existed.
    for (const name of parts.ignore) body = omit(body, Object.hasOwn(parts.body, name) ? [name] : name.split('.'), 0);
  }
  const all = [parts.organization, parts.seed, parts.endpoint, parts.provider, parts.model, body];
  let text: string;
  try {
    text = canonical(all) as string;
  } catch {
    // Only a body holding ±Infinity gets here (strict mode refuses it): keyed again, rarely, with the
    // replacer. The leading "!" sets these texts apart from the others, which all start with "[".
    text = `!${canonical(all, nonFiniteAsText) as string}`;
  }
  // The one-shot hash (Node ≥ 20.12): about a third of createHash's time on a request-sized text.
  return hash('sha256', text, 'hex');
}
