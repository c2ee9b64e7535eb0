/**
 * A Messages body seen as a chat-completions body, for the token-limit handlers: the estimate reads
 * every text where it counts chat text (`fallback`), and `truncate`'s cuts to the view's texts are
 * written back to the Messages blocks they came from ({@link applyChatViewEdits}). Nothing here is
 * sent to a provider (the translators map requests).
 *
 * What maps to what: `system` (a string, or text blocks) → a system message (string, or one text
 * part per block); a message's string content → string content; its `text` blocks → text parts;
 * `thinking` blocks → `input_text` parts (counted as text, never cut: Anthropic checks their
 * signature); `image` → an `image_url` part and `document` → a `file` part (the estimator's flat
 * costs; a plain-text document's text is counted, not cut); `tool_use` → an assistant tool call with
 * its input as JSON arguments; `tool_result` → a `tool` message (its string content, or one text
 * part per text block); `redacted_thinking` and other block types → their members' strings, as the
 * estimator counts unknown parts; `tools` → function tools with `input_schema` as `parameters`.
 * `model`, `max_tokens` are kept (the allowance reads `max_tokens`).
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool } from '../../shared/chat.ts';
import type { Json } from './types.ts';

/**
 * Where a view text came from: message `m` of `messages` (-1: `system`), its block `b` (-1: the
 * string content), and inside a `tool_result` block the content block `sub` (-1: its string content;
 * null: not inside a tool result).
 */
interface Origin {
  m: number;
  b: number;
  sub: number | null;
}

/** The origin of each editable view text, keyed `${view message}:${part}` (part -1: string content), per view. */
const ORIGINS = new WeakMap<ChatCompletionRequest, Map<string, Origin>>();

/** The text of a string or of text blocks (joined by a blank line), for what is counted but never cut. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const b of content as Json[]) if (b && typeof b.text === 'string') texts.push(b.text);
  return texts.join('\n\n');
}

/** One block as a chat content part (null: it becomes a tool call or a tool message instead). */
function partOf(block: Json): ChatContentPart | null {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block.text ?? '') };
    case 'thinking':
      return { type: 'input_text', text: String(block.thinking ?? '') };
    case 'image': {
      const src = (block.source ?? {}) as Json;
      return { type: 'image_url', image_url: { url: src.type === 'url' ? String(src.url) : `data:${src.media_type};base64,` } };
    }
    case 'document': {
      const src = (block.source ?? {}) as Json;
      if (src.type === 'text' && typeof src.data === 'string') return { type: 'input_text', text: src.data };
      if (src.type === 'content') return { type: 'input_text', text: textOf(src.content) };
      return { type: 'file', file: { filename: typeof block.title === 'string' ? block.title : 'document' } };
    }
    case 'tool_use':
    case 'tool_result':
      return null;
    default:
      return block as ChatContentPart;
  }
}

/** Builds the view while noting where each editable text came from. */
class ViewBuilder {
  readonly messages: ChatMessage[] = [];
  readonly origins = new Map<string, Origin>();

  /**
   * A view message whose content mirrors `content` (a string, or blocks mapped by {@link partOf}) of
   * message `m` (-1: `system`), or of its `tool_result` block `toolBlock`.
   */
  push(role: string, content: unknown, m: number, toolBlock: number | null, extra: Partial<ChatMessage> = {}): void {
    const at = this.messages.length;
    if (typeof content === 'string') {
      this.origins.set(`${at}:-1`, toolBlock === null ? { m, b: -1, sub: null } : { m, b: toolBlock, sub: -1 });
      this.messages.push({ role, content, ...extra });
      return;
    }
    const parts: ChatContentPart[] = [];
    const blocks = Array.isArray(content) ? (content as Json[]) : [];
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i];
      if (!block || typeof block !== 'object') continue;
      const part = partOf(block);
      if (!part) continue;
      if (part.type === 'text') this.origins.set(`${at}:${parts.length}`, toolBlock === null ? { m, b: i, sub: null } : { m, b: toolBlock, sub: i });
      parts.push(part);
    }
    this.messages.push({ role, content: parts, ...extra });
  }

  /** One Messages turn: its tool results as `tool` messages, then its other blocks with its tool calls. */
  turn(msg: Json, m: number): void {
    const role = msg.role === 'assistant' ? 'assistant' : msg.role === 'system' ? 'system' : 'user';
    if (typeof msg.content === 'string') return this.push(role, msg.content, m, null);
    const blocks = Array.isArray(msg.content) ? (msg.content as Json[]) : [];
    const calls: NonNullable<ChatMessage['tool_calls']> = [];
    let others = false;
    for (let b = 0; b < blocks.length; b++) {
      const block = blocks[b];
      if (!block || typeof block !== 'object') continue;
      if (block.type === 'tool_result') this.push('tool', block.content ?? '', m, b, { tool_call_id: String(block.tool_use_id ?? '') });
      else if (block.type === 'tool_use') calls.push({ id: String(block.id ?? ''), type: 'function', function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) } });
      else others = true;
    }
    if (!others && calls.length === 0) return;
    // Tool blocks map to no part (partOf), so the other blocks keep their indices.
    this.push(role, blocks, m, null, calls.length > 0 ? { tool_calls: calls } : {});
  }
}

/**
 * The chat view of a Messages (or count_tokens) body (see the module comment). Never throws on a
 * body the Messages kind's validation accepted.
 */
export function messagesChatView(body: Json): ChatCompletionRequest {
  const builder = new ViewBuilder();
  if (typeof body.system === 'string' ? body.system.length > 0 : Array.isArray(body.system) && body.system.length > 0) builder.push('system', body.system, -1, null);
  if (Array.isArray(body.messages)) (body.messages as Json[]).forEach((m, i) => m && typeof m === 'object' && builder.turn(m, i));
  const view: ChatCompletionRequest = { model: body.model, messages: builder.messages };
  if (typeof body.max_tokens === 'number') view.max_tokens = body.max_tokens;
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    view.tools = (body.tools as Json[]).map(
      (t): ChatTool => ({ type: 'function', function: { name: String(t.name ?? t.type ?? ''), description: typeof t.description === 'string' ? t.description : undefined, parameters: t.input_schema ?? {} } }),
    );
  }
  ORIGINS.set(view, builder.origins);
  return view;
}

/** The texts of a view message's content by part (-1: string content). */
function textsOf(message: ChatMessage | undefined): Map<number, string> {
  const out = new Map<number, string>();
  const c = message?.content;
  if (typeof c === 'string') out.set(-1, c);
  else if (Array.isArray(c)) c.forEach((p, i) => p && p.type === 'text' && typeof p.text === 'string' && out.set(i, p.text));
  return out;
}

/**
 * `body` with the texts a token-limit handler changed in `rewritten` (a rewrite of `view`, made by
 * {@link messagesChatView} from `body`) written back to the Messages blocks they came from. The
 * messages and system blocks it changes are copied; `body` is not mutated.
 * @throws {Error} when `view` was not made by {@link messagesChatView}.
 */
export function applyChatViewEdits(body: Json, view: ChatCompletionRequest, rewritten: ChatCompletionRequest): Json {
  const origins = ORIGINS.get(view);
  if (!origins) throw new Error('not a Messages chat view');
  const out: Json = { ...body, messages: Array.isArray(body.messages) ? body.messages.slice() : body.messages };
  const copied = new Set<number>();
  for (let v = 0; v < view.messages.length; v++) {
    const before = textsOf(view.messages[v]);
    for (const [part, text] of textsOf(rewritten.messages[v])) {
      if (before.get(part) === text) continue;
      const origin = origins.get(`${v}:${part}`);
      if (origin) writeBack(out, origin, text, copied);
    }
  }
  return out;
}

/** Writes `text` where `origin` points in `out` (a shallow copy of the body), copying what it changes once. */
function writeBack(out: Json, origin: Origin, text: string, copied: Set<number>): void {
  if (!copied.has(origin.m)) {
    if (origin.m < 0) out.system = structuredClone(out.system);
    else out.messages[origin.m] = structuredClone(out.messages[origin.m]);
    copied.add(origin.m);
  }
  if (origin.m < 0) {
    if (origin.b < 0) out.system = text;
    else out.system[origin.b].text = text;
    return;
  }
  const msg = out.messages[origin.m] as Json;
  if (origin.b < 0) {
    msg.content = text;
    return;
  }
  const block = msg.content[origin.b] as Json;
  if (origin.sub === null) block.text = text;
  else if (origin.sub < 0) block.content = text;
  else block.content[origin.sub].text = text;
}
