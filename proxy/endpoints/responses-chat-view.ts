/**
 * A Responses body seen as a chat-completions body, for the token estimate of the `fallback`
 * token-limit handler only: every text where the estimator counts chat text, so the count is the
 * estimator's count of the same words. Nothing here is sent to a provider (the Responses → chat
 * translator maps requests); items that carry no countable text are dropped from the view.
 *
 * What maps to what: `instructions` → a system message; a string `input` → a user message; a
 * `message` item (or an easy `{role, content}` one) → a message of its role, its `input_text`,
 * `output_text` and `refusal` parts → text parts, `input_image` → an `image_url` part and
 * `input_file` → a `file` part (the estimator's flat per-image and per-file costs); `function_call`
 * → an assistant tool call; `function_call_output` → a `tool` message with its output's text;
 * `reasoning` → assistant text of its summary (and reasoning) texts; any other item → a part holding
 * the item, whose member strings the estimator counts; `tools` of type `function` (and the function
 * tools inside a `namespace`) → function tools, hosted tools → a function named after their type.
 * `model` is kept, `max_output_tokens` becomes `max_tokens` (the allowance reads it).
 * Source of the shapes: OpenAI API reference, "Responses" → "Create a model response".
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool } from '../../shared/chat.ts';
import type { Json } from './types.ts';

/** The text of a string or of the `text` members of parts (joined by a blank line). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const p of content as Json[]) if (p && typeof p.text === 'string') texts.push(p.text);
  return texts.join('\n\n');
}

/** One content part of a message item as a chat part. */
function partOf(part: Json): ChatContentPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: String(part.text ?? '') };
    case 'refusal':
      return { type: 'text', text: String(part.refusal ?? '') };
    case 'input_image':
      return { type: 'image_url', image_url: { url: typeof part.image_url === 'string' ? part.image_url : '' } };
    case 'input_file':
      return { type: 'file', file: { filename: typeof part.filename === 'string' ? part.filename : 'file' } };
    default:
      return part as ChatContentPart;
  }
}

/** A message item (typed or easy) as a chat message. */
function messageOf(item: Json): ChatMessage {
  const role = typeof item.role === 'string' ? item.role : 'user';
  if (typeof item.content === 'string') return { role, content: item.content };
  const parts = Array.isArray(item.content) ? (item.content as Json[]).filter((p) => p && typeof p === 'object').map(partOf) : [];
  return { role, content: parts };
}

/** The chat messages of one input item, appended to `out`. */
function itemOf(item: Json, out: ChatMessage[]): void {
  switch (item.type ?? 'message') {
    case 'message':
      out.push(messageOf(item));
      return;
    case 'function_call':
      out.push({ role: 'assistant', content: null, tool_calls: [{ id: String(item.call_id ?? ''), type: 'function', function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') } }] });
      return;
    case 'function_call_output':
      out.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: typeof item.output === 'string' ? item.output : textOf(item.output) });
      return;
    case 'reasoning':
      out.push({ role: 'assistant', content: [textOf(item.summary), textOf(item.content)].filter((t) => t !== '').join('\n\n') });
      return;
    default:
      out.push({ role: 'user', content: [item as ChatContentPart] });
  }
}

/** The tools as chat function tools (a namespace's function tools flattened; hosted tools named by their type). */
function toolsOf(tools: Json[], out: ChatTool[]): void {
  for (const t of tools) {
    if (!t || typeof t !== 'object') continue;
    if (t.type === 'namespace' && Array.isArray(t.tools)) {
      toolsOf(t.tools as Json[], out);
      continue;
    }
    const name = typeof t.name === 'string' ? t.name : String(t.type ?? '');
    out.push({ type: 'function', function: { name, description: typeof t.description === 'string' ? t.description : undefined, parameters: t.parameters ?? {} } });
  }
}

/**
 * The chat view of a Responses (or input_tokens) body (see the module comment). Never throws on a
 * body the kind's validation accepted.
 */
export function responsesChatView(body: Json): ChatCompletionRequest {
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions) messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  else if (Array.isArray(body.input)) for (const item of body.input as Json[]) if (item && typeof item === 'object') itemOf(item, messages);
  const view: ChatCompletionRequest = { model: body.model, messages };
  if (typeof body.max_output_tokens === 'number') view.max_tokens = body.max_output_tokens;
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    const tools: ChatTool[] = [];
    toolsOf(body.tools as Json[], tools);
    view.tools = tools;
  }
  return view;
}
