/**
 * The Responses conversation (`instructions` and `input`) as chat-completions messages, in order.
 *
 * - `instructions` → the first message, `role: "system"`; a string `input` → one user message.
 * - `message` items (typed, or the easy `{role, content}` form): `user` → a user message (./content.ts parts);
 *   `system` → a system message; `developer` → a `developer` message where the provider takes the role (OpenAI),
 *   else a `system` message, its equivalent; consecutive system (or developer) messages of text are joined into one
 *   by a blank line, since several chat templates (Mistral's, Llama's) accept a single leading system message;
 *   `assistant` → assistant text (`output_text` and `refusal` parts). `phase` (gpt-5's commentary / final answer
 *   marker) is removed and recorded.
 * - one model turn's items — assistant `message`, `function_call`, `custom_tool_call` and `reasoning` items with
 *   nothing else between them — → one assistant message: its text, its `tool_calls` (consecutive calls merged, as
 *   chat requires them in one message), and its reasoning as the provider takes it:
 *   - the reasoning text (`content` `reasoning_text` parts, else the `summary` texts, joined by a blank line) as
 *     `reasoning_content` where the provider reads it back (DeepSeek requires it in tool-use turns; OpenRouter);
 *     elsewhere removed and recorded (Groq rejects the member);
 *   - `encrypted_content`: OpenAI's is opaque to every other provider, so it is removed and recorded; one the
 *     gateway wrote (Gemini thought signatures, ../shared/carried-reasoning.ts) goes back to Gemini as
 *     `extra_content.google.thought_signature` on the message and its tool calls;
 *   - a reasoning item nothing of which is kept is recorded whole (`input[i]`), and so is reasoning no assistant
 *     output follows.
 * - `function_call` → a tool call `{id: call_id, type: "function", function: {name, arguments}}`, the name as sent
 *   for the tool (a namespaced one as `<namespace>__<name>`, ./tool-names.ts); `custom_tool_call` → a tool call of
 *   the function the custom tool became, `arguments` `{"input": <input>}`.
 * - `function_call_output` / `custom_tool_call_output` → a `tool` message: its text, or its text parts joined by a
 *   blank line; image and file parts cannot go in a tool message, so they follow in a user message after the tool
 *   messages, after a text part `Attachments of tool result <call_id>:`, and the tool message says they follow.
 * - tool call ids go to Mistral as 9 alphanumeric characters (../shared/tool-call-ids.ts), the same in a call and its
 *   output.
 * - `item_reference` is refused (400): one that names an item the gateway made was already replaced by the item
 *   (../../stages/responses-history.ts), so what is left names an item OpenAI stored, or one the gateway no longer
 *   keeps, which only OpenAI can resolve. Items of hosted
 *   tools (`web_search_call`, `file_search_call`, `computer_call`, `code_interpreter_call`, `image_generation_call`,
 *   `local_shell_call`, `mcp_call`, …), `compaction` items and any other type are removed and recorded: the provider
 *   ran none of those tools and cannot read their results' form.
 * - an item's own `id` and `status` are bookkeeping for OpenAI's item store, never shown to the model: they are not
 *   sent and, being in every item, not listed as removed (the record would otherwise grow with every turn).
 * Sources: https://platform.openai.com/docs/api-reference/responses/create (input items),
 * https://platform.openai.com/docs/api-reference/chat/create (messages, tool calls),
 * https://ai.google.dev/gemini-api/docs/thought-signatures.
 */
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { decodeCarried, isEmptyCarried, mergeCarried, restoreThoughtSignatures, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { targetToolCallId } from '../shared/tool-call-ids.ts';
import type { RequestBuild } from './build.ts';
import { assistantText, PART_SEPARATOR, partsContent, textOnly, userPart } from './content.ts';
import type { MessageOrigin } from './message-origins.ts';
import { sentToolName } from './tool-names.ts';

/** Reasoning kept for an assistant message: texts, the paths they came from, carried signatures. */
interface ReasoningCarry {
  texts: string[];
  paths: string[];
  carried: CarriedReasoning;
}

/** The conversation being built. */
interface Conversation {
  readonly b: RequestBuild;
  readonly out: ChatMessage[];
  /** The open assistant message (one model turn), its reasoning, and the paths of the items it came from. */
  assistant: { message: ChatMessage; toolCalls: ChatToolCall[]; reasoning: ReasoningCarry; origin: MessageOrigin } | null;
  /** Reasoning kept from items no assistant output has followed yet. */
  pending: ReasoningCarry | null;
  /** Images and files of tool outputs, for the user message after the tool messages, and where each came from. */
  attachments: ChatContentPart[];
  attachmentPaths: string[];
}

/** Appends a chat message and the Responses member it came from (./message-origins.ts). */
function push(c: Conversation, message: ChatMessage, origin: MessageOrigin): void {
  c.out.push(message);
  c.b.origins.push(origin);
}

const ITEM_BOOKKEEPING = ['id', 'status'];
const MESSAGE_MEMBERS = new Set(['type', 'role', 'content', ...ITEM_BOOKKEEPING]);
const CALL_MEMBERS = new Set(['type', 'call_id', 'name', 'arguments', 'namespace', ...ITEM_BOOKKEEPING]);
const CUSTOM_CALL_MEMBERS = new Set(['type', 'call_id', 'name', 'input', 'namespace', ...ITEM_BOOKKEEPING]);
const OUTPUT_MEMBERS = new Set(['type', 'call_id', 'output', ...ITEM_BOOKKEEPING]);
const REASONING_MEMBERS = new Set(['type', 'summary', 'content', 'encrypted_content', ...ITEM_BOOKKEEPING]);

/**
 * `instructions` and `input` as chat messages (see the module comment).
 * @throws {GatewayError} 400 naming the member for a malformed conversation, a part the provider cannot take, or an
 *   `item_reference`.
 */
export function chatMessagesOf(instructions: unknown, input: unknown, b: RequestBuild): ChatMessage[] {
  const c: Conversation = { b, out: [], assistant: null, pending: null, attachments: [], attachmentPaths: [] };
  if (instructions !== undefined && instructions !== null) {
    const text = stringAt(instructions, 'instructions');
    if (text !== '') push(c, { role: 'system', content: text }, { path: 'instructions', parts: null, calls: [] });
  }
  if (typeof input === 'string') {
    push(c, { role: 'user', content: input }, { path: 'input', parts: null, calls: [] });
    return c.out;
  }
  if (input === undefined || input === null) return c.out;
  if (!Array.isArray(input)) throw badRequest('input must be a string or an array of items', 'input');
  input.forEach((raw, i) => addItem(c, objectAt(raw, `input[${i}]`), `input[${i}]`));
  closeTurn(c);
  flushAttachments(c);
  dropPending(c);
  return c.out;
}

function addItem(c: Conversation, item: Record<string, unknown>, path: string): void {
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message':
      return item.role === 'assistant' ? addAssistantText(c, item, path) : addMessage(c, item, path);
    case 'function_call':
      return addFunctionCall(c, item, path);
    case 'custom_tool_call':
      return addCustomToolCall(c, item, path);
    case 'function_call_output':
    case 'custom_tool_call_output':
      return addToolOutput(c, item, path);
    case 'reasoning':
      return addReasoning(c, item, path);
    case 'item_reference':
      throw badRequest(`${path}: an item_reference names an item this provider cannot read (one OpenAI stored, or one the gateway no longer keeps); send the item itself`, path);
    default:
      if (typeof type !== 'string') throw badRequest(`${path}.type must be a string`, `${path}.type`);
      c.b.removed.push(path);
  }
}

/** A user, system or developer message; it ends the model turn before it. */
function addMessage(c: Conversation, item: Record<string, unknown>, path: string): void {
  closeTurn(c);
  flushAttachments(c);
  dropPending(c);
  recordUnmapped(item, MESSAGE_MEMBERS, path, c.b.removed);
  const contentPath = `${path}.content`;
  switch (item.role) {
    case 'user': {
      const content = item.content;
      const origin: MessageOrigin = { path, parts: null, calls: [] };
      if (typeof content === 'string') push(c, { role: 'user', content }, origin);
      else if (Array.isArray(content)) {
        origin.parts = content.map((_, j) => `${contentPath}[${j}]`);
        push(c, { role: 'user', content: partsContent(content.map((p, j) => userPart(p, origin.parts![j]!, c.b))) }, origin);
      }
      else throw badRequest(`${contentPath} must be a string or an array of content parts`, contentPath);
      return;
    }
    case 'system':
    case 'developer': {
      const role = item.role === 'developer' && c.b.profile.developerRole ? 'developer' : 'system';
      const text = textOnly(item.content, contentPath, c.b);
      const last = c.out[c.out.length - 1];
      if (last && last.role === role && typeof last.content === 'string') last.content += PART_SEPARATOR + text;
      else push(c, { role, content: text }, { path, parts: null, calls: [] });
      return;
    }
    default:
      throw badRequest(`${path}.role must be "user", "assistant", "system" or "developer", got ${JSON.stringify(item.role)}`, `${path}.role`);
  }
}

/**
 * The open assistant message, opened (after any attachments, with any pending reasoning) when there is none; `path`
 * is the item that opens it.
 */
function openTurn(c: Conversation, path: string): NonNullable<Conversation['assistant']> {
  if (c.assistant) return c.assistant;
  flushAttachments(c);
  const origin: MessageOrigin = { path, parts: null, calls: [] };
  c.assistant = { message: { role: 'assistant', content: '' }, toolCalls: [], reasoning: c.pending ?? { texts: [], paths: [], carried: {} }, origin };
  c.pending = null;
  return c.assistant;
}

function addAssistantText(c: Conversation, item: Record<string, unknown>, path: string): void {
  recordUnmapped(item, MESSAGE_MEMBERS, path, c.b.removed);
  const text = assistantText(item.content, `${path}.content`, c.b);
  const turn = openTurn(c, path);
  turn.message.content = (turn.message.content as string) + text;
}

function addFunctionCall(c: Conversation, item: Record<string, unknown>, path: string): void {
  const callId = stringAt(item.call_id, `${path}.call_id`);
  const name = stringAt(item.name, `${path}.name`);
  const namespace = item.namespace === undefined || item.namespace === null ? undefined : stringAt(item.namespace, `${path}.namespace`);
  const args = item.arguments === undefined || item.arguments === null ? '{}' : stringAt(item.arguments, `${path}.arguments`);
  recordUnmapped(item, CALL_MEMBERS, path, c.b.removed);
  pushToolCall(c, callId, sentToolName(c.b.names, name, namespace), args, path);
}

function addCustomToolCall(c: Conversation, item: Record<string, unknown>, path: string): void {
  const callId = stringAt(item.call_id, `${path}.call_id`);
  const name = stringAt(item.name, `${path}.name`);
  const namespace = item.namespace === undefined || item.namespace === null ? undefined : stringAt(item.namespace, `${path}.namespace`);
  const input = stringAt(item.input, `${path}.input`);
  recordUnmapped(item, CUSTOM_CALL_MEMBERS, path, c.b.removed);
  pushToolCall(c, callId, sentToolName(c.b.names, name, namespace), JSON.stringify({ input }), path);
}

function pushToolCall(c: Conversation, callId: string, name: string, args: string, path: string): void {
  const turn = openTurn(c, path);
  turn.origin.calls.push(path);
  turn.toolCalls.push({ id: targetToolCallId(callId, c.b.profile.alnum9ToolIds), type: 'function', function: { name, arguments: args } });
}

/** A tool's output: a tool message; its images and files wait for the user message after the tool messages. */
function addToolOutput(c: Conversation, item: Record<string, unknown>, path: string): void {
  closeTurn(c);
  dropPending(c);
  const callId = stringAt(item.call_id, `${path}.call_id`);
  recordUnmapped(item, OUTPUT_MEMBERS, path, c.b.removed);
  const output = item.output;
  let text: string;
  if (typeof output === 'string') text = output;
  else if (Array.isArray(output)) {
    const texts: string[] = [];
    const media: ChatContentPart[] = [];
    const mediaPaths: string[] = [];
    output.forEach((raw, k) => {
      const part = userPart(raw, `${path}.output[${k}]`, c.b);
      if (part.type === 'text') texts.push(part.text as string);
      else {
        media.push(part);
        mediaPaths.push(`${path}.output[${k}]`);
      }
    });
    if (media.length) {
      texts.push(`[${media.length} attachment(s) of this tool result follow in the next user message]`);
      c.attachments.push({ type: 'text', text: `Attachments of tool result ${callId}:` }, ...media);
      c.attachmentPaths.push(path, ...mediaPaths);
    }
    text = texts.join(PART_SEPARATOR);
  } else throw badRequest(`${path}.output must be a string or an array of content parts`, `${path}.output`);
  push(c, { role: 'tool', tool_call_id: targetToolCallId(callId, c.b.profile.alnum9ToolIds), content: text }, { path, parts: null, calls: [] });
}

/** The text of a reasoning item: its `reasoning_text` content, else its summary texts, joined by a blank line. */
function reasoningItemText(item: Record<string, unknown>, path: string): { text: string; member: 'content' | 'summary' } {
  const texts = (member: 'content' | 'summary', type: string): string[] => {
    const list = item[member];
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list)) throw badRequest(`${path}.${member} must be an array`, `${path}.${member}`);
    return list.map((raw, k) => {
      const part = objectAt(raw, `${path}.${member}[${k}]`);
      if (part.type !== type) throw badRequest(`${path}.${member}[${k}].type must be "${type}"`, `${path}.${member}[${k}].type`);
      return stringAt(part.text, `${path}.${member}[${k}].text`);
    });
  };
  const content = texts('content', 'reasoning_text');
  const summary = texts('summary', 'summary_text');
  if (content.length) return { text: content.join(PART_SEPARATOR), member: 'content' };
  return { text: summary.join(PART_SEPARATOR), member: 'summary' };
}

/** A reasoning item: what the provider can take of it joins the current (or next) model turn; the rest is recorded. */
function addReasoning(c: Conversation, item: Record<string, unknown>, path: string): void {
  const { text, member } = reasoningItemText(item, path);
  recordUnmapped(item, REASONING_MEMBERS, path, c.b.removed);
  const encrypted = item.encrypted_content;
  const carried = decodeCarried(encrypted);
  const signaturesKept = carried !== null && c.b.profile.thoughtSignatures && !isEmptyCarried(carried);
  const textKept = text !== '' && c.b.profile.reasoningEcho !== null;
  if (!textKept && !signaturesKept) {
    c.b.removed.push(path);
    return;
  }
  if (text !== '' && !textKept) c.b.removed.push(`${path}.${member}`);
  if (typeof encrypted === 'string' && encrypted !== '' && !signaturesKept) c.b.removed.push(`${path}.encrypted_content`);
  const carry = c.assistant ? c.assistant.reasoning : (c.pending ??= { texts: [], paths: [], carried: {} });
  carry.paths.push(path);
  if (textKept) carry.texts.push(text);
  if (signaturesKept) mergeCarried(carry.carried, carried);
}

/** Reasoning that no assistant output followed: recorded as removed (the provider has no place for it). */
function dropPending(c: Conversation): void {
  if (!c.pending) return;
  c.b.removed.push(...c.pending.paths);
  c.pending = null;
}

/** Ends the open model turn: its assistant message with text, tool calls and the reasoning the provider takes. */
function closeTurn(c: Conversation): void {
  const turn = c.assistant;
  if (!turn) return;
  c.assistant = null;
  const message = turn.message;
  if (turn.toolCalls.length) {
    message.tool_calls = turn.toolCalls;
    if (message.content === '') message.content = null;
  }
  if (turn.reasoning.texts.length && c.b.profile.reasoningEcho) message[c.b.profile.reasoningEcho] = turn.reasoning.texts.join(PART_SEPARATOR);
  restoreThoughtSignatures(message, turn.reasoning.carried);
  push(c, message, turn.origin);
}

/** The user message holding the tool outputs' images and files, after the tool messages. */
function flushAttachments(c: Conversation): void {
  if (!c.attachments.length) return;
  push(c, { role: 'user', content: c.attachments }, { path: c.attachmentPaths[0]!, parts: c.attachmentPaths, calls: [] });
  c.attachments = [];
  c.attachmentPaths = [];
}

