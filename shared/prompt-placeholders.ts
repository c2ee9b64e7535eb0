/**
 * The placeholders of a managed prompt's messages: `{{svc:<name>:<type>}}`, the name ASCII letters,
 * digits, `_`, `.` and `-`, the type `string`, `number` or `boolean` (lowercase), with optional
 * whitespace just inside the braces. The proxy substitutes them (proxy/prompts.ts); admin refuses to
 * save a version holding text that starts like one (`{{svc:`, spaces allowed after the braces) but
 * is not one, so a typo is a 400 at save time instead of reaching the provider as written.
 * Names are ASCII only: they are matched byte for byte against the request's `inputs` keys, and
 * refusing look-alike Unicode names (full-width letters, NFC/NFD variants) keeps that match exact.
 */

/** A valid placeholder: group 1 the input's name, group 2 its type. Global: reset `lastIndex` or use `replace`. */
export const PLACEHOLDER = /\{\{\s*svc:([A-Za-z0-9_.-]+):(string|number|boolean)\s*\}\}/g;

/** Where something starts like a placeholder. */
const OPENING = /\{\{\s*svc:/g;
/** A valid placeholder at exactly `lastIndex`. */
const PLACEHOLDER_AT = /\{\{\s*svc:([A-Za-z0-9_.-]+):(string|number|boolean)\s*\}\}/y;
const NAME = /^[A-Za-z0-9_.-]+$/;
const TYPES = new Set(['string', 'number', 'boolean']);
/** How much of an unclosed placeholder an error quotes. */
const QUOTE_CHARS = 40;

/**
 * The first text in `text` that starts like a placeholder but is not a valid one, quoted and with
 * what is wrong (e.g. `{{svc:b:int}}: unknown type "int" (string, number or boolean)`); null when
 * every `{{svc:` opens a valid placeholder.
 */
export function placeholderProblem(text: string): string | null {
  if (!text.includes('svc:')) return null;
  OPENING.lastIndex = 0;
  for (let m = OPENING.exec(text); m !== null; m = OPENING.exec(text)) {
    PLACEHOLDER_AT.lastIndex = m.index;
    if (PLACEHOLDER_AT.test(text)) {
      OPENING.lastIndex = PLACEHOLDER_AT.lastIndex;
      continue;
    }
    const close = text.indexOf('}}', OPENING.lastIndex);
    const next = text.indexOf('{{', OPENING.lastIndex);
    if (close < 0 || (next >= 0 && next < close)) {
      return `${JSON.stringify(text.slice(m.index, m.index + QUOTE_CHARS))}: the placeholder is not closed with "}}"`;
    }
    const written = text.slice(m.index, close + 2);
    return `${JSON.stringify(written)}: ${whatIsWrong(text.slice(OPENING.lastIndex, close).trim())}`;
  }
  return null;
}

/** Why `inner` (what follows `svc:` up to the closing braces) is not `<name>:<type>`. */
function whatIsWrong(inner: string): string {
  const parts = inner.split(':');
  const usage = 'write {{svc:<name>:<type>}} with <type> string, number or boolean';
  if (parts.length === 1) return `no type; ${usage}`;
  if (parts.length > 2) return `more than a name and a type; ${usage}`;
  const [name, type] = parts as [string, string];
  if (name.length === 0) return `no input name; ${usage}`;
  if (!NAME.test(name)) return `the input name ${JSON.stringify(name)} may hold only ASCII letters, digits, "_", "." and "-"`;
  if (TYPES.has(type.toLowerCase())) return `the type ${JSON.stringify(type)} must be lowercase: "${type.toLowerCase()}"`;
  return `unknown type ${JSON.stringify(type)} (string, number or boolean)`;
}

/**
 * The first malformed placeholder in a prompt version's messages (the text the proxy substitutes:
 * a string `content`, and the `text` of each content part), as `messages[i].content: <problem>`;
 * null when there is none. Members other than `messages` are not substituted, so not checked.
 */
export function promptBodyPlaceholderProblem(body: { messages?: unknown }): string | null {
  if (!Array.isArray(body.messages)) return null;
  for (let i = 0; i < body.messages.length; i++) {
    const content = (body.messages[i] as { content?: unknown } | null)?.content;
    if (typeof content === 'string') {
      const problem = placeholderProblem(content);
      if (problem !== null) return `messages[${i}].content: ${problem}`;
    } else if (Array.isArray(content)) {
      for (let j = 0; j < content.length; j++) {
        const text = (content[j] as { text?: unknown } | null)?.text;
        const problem = typeof text === 'string' ? placeholderProblem(text) : null;
        if (problem !== null) return `messages[${i}].content[${j}].text: ${problem}`;
      }
    }
  }
  return null;
}
