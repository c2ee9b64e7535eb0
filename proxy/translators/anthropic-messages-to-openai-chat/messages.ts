/**
 * The Messages conversation (`system` and `messages`) as chat-completions messages.
 *
 * - `system` (a string or text blocks) → the first message, `role: "system"`; a `role: "system"` entry inside
 *   `messages` (Claude Code sends one) → a system message at its place.
 * - a user turn → its `tool_result` blocks first, each a `role: "tool"` message (chat requires tool messages right
 *   after the assistant's tool calls), then one user message with the rest: text, images (`image_url`) and
 *   documents (`file` or text parts); text-only content is sent as one string, blocks joined by a blank line.
 * - a tool result's text blocks are joined by a blank line; `is_error: true` prefixes the text with `Error: ` (chat
 *   has no error flag on tool messages, so the model reads it in the text); images and PDF documents inside a tool
 *   result cannot go in a tool message, so they follow in the user message, after a text part
 *   `Attachments of tool result <id>:`, and the tool message's text says that they follow.
 * - an assistant turn → one assistant message: text blocks concatenated into `content`, `tool_use` blocks into
 *   `tool_calls` (`arguments` = the input as a JSON string), thinking as the target takes it (see
 *   {@link assistantMessage}).
 * Source: https://docs.anthropic.com/en/api/messages, https://platform.openai.com/docs/api-reference/chat/create.
 */
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { decodeCarried, isEmptyCarried, mergeCarried, restoreThoughtSignatures, type CarriedReasoning } from '../shared/carried-reasoning.ts';
import { isPresent, objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { targetToolCallId } from '../shared/tool-call-ids.ts';
import { targetName, type RequestBuild } from './build.ts';
import { BLOCK_SEPARATOR, documentParts, imagePart, partsContent, textOfBlock, textOnly } from './content.ts';

const TOOL_USE_MEMBERS = new Set(['type', 'id', 'name', 'input']);
const TOOL_RESULT_MEMBERS = new Set(['type', 'tool_use_id', 'content', 'is_error']);
const THINKING_MEMBERS = new Set(['type', 'thinking', 'signature']);

/** The prefix that marks a failed tool call's result (`is_error: true`) in the tool message's text. */
export const TOOL_ERROR_PREFIX = 'Error: ';

/**
 * `system` and `messages` as chat messages, in order.
 * @throws {GatewayError} 400 naming the member for a malformed conversation, a block the target cannot take, or a
 *   final assistant message (prefill) the target cannot continue.
 */
export function chatMessagesOf(system: unknown, messages: unknown, b: RequestBuild): ChatMessage[] {
  if (!Array.isArray(messages)) throw badRequest('messages must be an array', 'messages');
  const out: ChatMessage[] = [];
  if (system !== undefined && system !== null) {
    const text = textOnly(system, 'system', b);
    if (text !== '') out.push({ role: 'system', content: text });
  }
  messages.forEach((raw, i) => {
    const path = `messages[${i}]`;
    const message = objectAt(raw, path);
    recordUnmapped(message, MESSAGE_MEMBERS, path, b.removed, isPresent);
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: textOnly(message.content, `${path}.content`, b) });
        break;
      case 'user':
        pushUserTurn(message.content, `${path}.content`, b, out);
        break;
      case 'assistant': {
        const assistant = assistantMessage(message.content, `${path}.content`, b);
        if (i === messages.length - 1) prefill(assistant, path, b);
        out.push(assistant);
        break;
      }
      default:
        throw badRequest(`${path}.role must be "user", "assistant" or "system", got ${JSON.stringify(message.role)}`, `${path}.role`);
    }
  });
  return out;
}

const MESSAGE_MEMBERS = new Set(['role', 'content']);

/** A final assistant message asks the model to continue it: kept where the target does, else refused. */
function prefill(message: ChatMessage, path: string, b: RequestBuild): void {
  if (b.profile.prefill === 'none') {
    throw badRequest(
      `${path}: ${targetName(b)} cannot continue a final assistant message (prefill); end the conversation with a user message`,
      path,
    );
  }
  if (b.profile.prefill === 'prefix-flag') message.prefix = true;
}

/** The tool messages and the user message of one user turn, appended to `out`. */
function pushUserTurn(content: unknown, path: string, b: RequestBuild, out: ChatMessage[]): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content blocks`, path);
  const attachments: ChatContentPart[] = [];
  const parts: ChatContentPart[] = [];
  content.forEach((raw, j) => {
    const p = `${path}[${j}]`;
    const block = objectAt(raw, p);
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: textOfBlock(block, p, b) });
        break;
      case 'image':
        parts.push(imagePart(block, p, b));
        break;
      case 'document':
        parts.push(...documentParts(block, p, b));
        break;
      case 'tool_result':
        out.push(toolMessage(block, p, b, attachments));
        break;
      default:
        throw badRequest(`${p}.type ${JSON.stringify(block.type)} cannot be translated for ${targetName(b)} in a user message`, `${p}.type`);
    }
  });
  const all = attachments.length ? [...attachments, ...parts] : parts;
  if (all.length) out.push({ role: 'user', content: partsContent(all) });
}

/**
 * A `tool_result` block as a tool message; its images and PDF documents are appended to `attachments` (preceded by
 * a text part naming the tool call) for the user message that follows.
 */
function toolMessage(block: Record<string, unknown>, path: string, b: RequestBuild, attachments: ChatContentPart[]): ChatMessage {
  const id = stringAt(block.tool_use_id, `${path}.tool_use_id`);
  recordUnmapped(block, TOOL_RESULT_MEMBERS, path, b.removed, isPresent);
  const texts: string[] = [];
  const media: ChatContentPart[] = [];
  const content = block.content;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    content.forEach((raw, k) => {
      const p = `${path}.content[${k}]`;
      const inner = objectAt(raw, p);
      if (inner.type === 'text') texts.push(textOfBlock(inner, p, b));
      else if (inner.type === 'image') media.push(imagePart(inner, p, b));
      else if (inner.type === 'document') {
        for (const part of documentParts(inner, p, b)) (part.type === 'text' ? texts.push(part.text as string) : media.push(part));
      } else throw badRequest(`${p}.type ${JSON.stringify(inner.type)} cannot be translated in a tool result`, `${p}.type`);
    });
  } else if (content !== undefined && content !== null) {
    throw badRequest(`${path}.content must be a string or an array of content blocks`, `${path}.content`);
  }
  if (media.length) {
    texts.push(`[${media.length} attachment(s) of this tool result follow in the next user message]`);
    attachments.push({ type: 'text', text: `Attachments of tool result ${id}:` }, ...media);
  }
  let text = texts.join(BLOCK_SEPARATOR);
  if (block.is_error === true) text = TOOL_ERROR_PREFIX + text;
  return { role: 'tool', tool_call_id: targetToolCallId(id, b.profile.alnum9ToolIds), content: text };
}

/** What an assistant turn's thinking blocks add to its chat message. */
interface ThinkingCarry {
  reasoning: string[];
  carried: CarriedReasoning;
}

/**
 * An assistant turn as one assistant message. Its thinking blocks:
 * - the thinking text goes back as `reasoning_content` (joined by a blank line) where the target reads it (DeepSeek
 *   requires it during a tool-use turn in thinking mode; OpenRouter); elsewhere it is removed and recorded (Groq
 *   rejects the member);
 * - a signature the translator wrote (Gemini's thought signatures, see ./carried-reasoning.ts) is put back as
 *   `extra_content.google.thought_signature` on the message and its tool calls when the target is Gemini;
 *   Anthropic's own signatures, and `redacted_thinking` blocks, mean nothing to another provider: removed and recorded.
 * A block of which nothing is carried is recorded whole (`…content[j]`); otherwise the lost member
 * (`…content[j].thinking` or `…content[j].signature`).
 */
function assistantMessage(content: unknown, path: string, b: RequestBuild): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) throw badRequest(`${path} must be a string or an array of content blocks`, path);
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  const thinking: ThinkingCarry = { reasoning: [], carried: {} };
  content.forEach((raw, j) => {
    const p = `${path}[${j}]`;
    const block = objectAt(raw, p);
    switch (block.type) {
      case 'text':
        text += textOfBlock(block, p, b);
        break;
      case 'tool_use':
        toolCalls.push(toolCallOf(block, p, b));
        break;
      case 'thinking':
        carryThinking(block, p, b, thinking);
        break;
      case 'redacted_thinking':
        b.removed.push(p);
        break;
      default:
        throw badRequest(`${p}.type ${JSON.stringify(block.type)} cannot be translated for ${targetName(b)} in an assistant message`, `${p}.type`);
    }
  });
  const message: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length ? null : text };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (thinking.reasoning.length) message.reasoning_content = thinking.reasoning.join(BLOCK_SEPARATOR);
  restoreThoughtSignatures(message, thinking.carried);
  return message;
}

function toolCallOf(block: Record<string, unknown>, path: string, b: RequestBuild): ChatToolCall {
  const id = stringAt(block.id, `${path}.id`);
  const name = stringAt(block.name, `${path}.name`);
  recordUnmapped(block, TOOL_USE_MEMBERS, path, b.removed, isPresent);
  return { id: targetToolCallId(id, b.profile.alnum9ToolIds), type: 'function', function: { name, arguments: JSON.stringify(block.input ?? {}) } };
}

function carryThinking(block: Record<string, unknown>, path: string, b: RequestBuild, into: ThinkingCarry): void {
  const text = typeof block.thinking === 'string' ? block.thinking : '';
  const signature = typeof block.signature === 'string' ? block.signature : '';
  recordUnmapped(block, THINKING_MEMBERS, path, b.removed, isPresent);
  const textKept = text !== '' && b.profile.reasoningEcho !== null;
  const carried = decodeCarried(signature);
  const signatureKept = carried !== null && b.profile.thoughtSignatures && !isEmptyCarried(carried);
  const textLost = text !== '' && !textKept;
  const signatureLost = signature !== '' && !signatureKept;
  if (!textKept && !signatureKept) {
    b.removed.push(path);
    return;
  }
  if (textKept) into.reasoning.push(text);
  else if (textLost) b.removed.push(`${path}.thinking`);
  if (signatureKept) mergeCarried(into.carried, carried);
  else if (signatureLost) b.removed.push(`${path}.signature`);
}


