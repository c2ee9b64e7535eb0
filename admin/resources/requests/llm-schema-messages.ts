/**
 * `llmSchema` of an Anthropic Messages request and response, in the reference's shapes
 * (test/fixtures/reference/rest-api-openapi.json: `LLMRequestBody`, `LLMResponseBody`, `Message`).
 * Source of the Messages shapes: Anthropic API reference, "Messages" (request: `system`, `messages`
 * with content blocks, `tools`, `tool_choice`, `stop_sequences`, `output_config`; response: a
 * `message` with content blocks).
 *
 * Each content block becomes one entry of the message's `contentArray`, in order: `text` → a
 * message, `image` → an image (`image_url`: the URL, or a `data:` URL of base64 data), `document`
 * → a file, `tool_use` → a function call (also listed in the message's `tool_calls`),
 * `tool_result` → a function result (`tool_call_id`; `is_error: true` kept, as the reference's
 * `Message` allows members of its own), `thinking` → `reasoning` (also joined into
 * the message's `reasoning`), `redacted_thinking` → `reasoning: "[redacted thinking]"`; a block of
 * another type is kept as its JSON text, never dropped. The bodies themselves are stored as received.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The text of a `tool_result` content (a string, or blocks whose text parts are joined). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (isObject(b) && typeof b.text === 'string' ? b.text : isObject(b) ? `[${String(b.type)}]` : '')).join('\n');
}

/** An image or document `source` as a URL: the URL itself, or a `data:` URL of base64 data. */
function sourceUrl(source: unknown): { url?: string; mime?: string; data?: string } {
  if (!isObject(source)) return {};
  if (source.type === 'url') return { url: str(source.url) };
  if (source.type === 'base64' && typeof source.data === 'string') {
    const mime = str(source.media_type) ?? 'application/octet-stream';
    return { url: `data:${mime};base64,${source.data}`, mime, data: source.data };
  }
  if (source.type === 'text') return { mime: str(source.media_type) ?? 'text/plain', data: str(source.data) };
  if (source.type === 'file') return { url: str(source.file_id) };
  return {};
}

/** One content block as a reference `Message` (see the module comment). */
export function blockToMessage(block: unknown, role: string): Json {
  if (!isObject(block)) return { _type: 'message', role, content: typeof block === 'string' ? block : JSON.stringify(block) };
  switch (block.type) {
    case 'text':
      return { _type: 'message', role, content: str(block.text) ?? '' };
    case 'image': {
      const src = sourceUrl(block.source);
      return { _type: 'image', role, ...(src.url !== undefined ? { image_url: src.url } : {}), ...(src.mime ? { mime_type: src.mime } : {}) };
    }
    case 'document': {
      const src = sourceUrl(block.source);
      const out: Json = { _type: 'file', role };
      if (src.mime) out.mime_type = src.mime;
      if (src.data !== undefined) out.file_data = src.data;
      else if (src.url !== undefined) out.file_id = src.url;
      if (typeof block.title === 'string') out.filename = block.title;
      return out;
    }
    case 'tool_use':
    case 'server_tool_use':
      return { _type: 'functionCall', role, tool_calls: [{ ...(str(block.id) ? { id: block.id } : {}), name: str(block.name) ?? '', arguments: isObject(block.input) ? block.input : {} }] };
    case 'tool_result':
      return { _type: 'function', role: 'tool', tool_call_id: str(block.tool_use_id) ?? '', content: resultText(block.content), ...(block.is_error === true ? { is_error: true } : {}) };
    case 'thinking':
      return { _type: 'message', role, reasoning: str(block.thinking) ?? '' };
    case 'redacted_thinking':
      return { _type: 'message', role, reasoning: '[redacted thinking]' };
    default:
      return { _type: 'message', role, content: JSON.stringify(block) };
  }
}

/**
 * One Messages message (or the response `message`) as a reference `Message`: a string content is a
 * plain message; blocks become `contentArray`, with the texts joined into `content`, the thinking
 * joined into `reasoning` and every tool call listed in `tool_calls` (`_type: functionCall` then).
 */
export function messagesMessage(m: Json): Json {
  const role = str(m.role) ?? 'user';
  if (!Array.isArray(m.content)) return { _type: 'message', role, content: str(m.content) ?? '' };
  const parts = m.content.map((b) => blockToMessage(b, role));
  const out: Json = { _type: 'contentArray', role, contentArray: parts };
  const texts = parts.filter((p) => p._type === 'message' && typeof p.content === 'string').map((p) => p.content as string);
  out.content = texts.join('');
  const thinking = parts.filter((p) => typeof p.reasoning === 'string').map((p) => p.reasoning as string);
  if (thinking.length > 0) out.reasoning = thinking.join('\n');
  const calls = parts.flatMap((p) => (Array.isArray(p.tool_calls) ? (p.tool_calls as Json[]) : []));
  if (calls.length > 0) {
    out._type = 'functionCall';
    out.tool_calls = calls;
  }
  return out;
}

/** The `system` member (a string or text blocks) as a system message, or null when absent. */
function systemMessage(system: unknown): Json | null {
  if (typeof system === 'string') return { _type: 'message', role: 'system', content: system };
  if (Array.isArray(system)) return messagesMessage({ role: 'system', content: system });
  return null;
}

/** `output_config.effort` as the reference's `reasoning_effort` (its enum has no `xhigh`/`max`: those are left out). */
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/**
 * A Messages request body as the reference's `LLMRequestBody`: `system` first, then the messages;
 * `tools` (`input_schema` → `parameters`; a server tool named by its `type` when it has no name),
 * `tool_choice` (Anthropic's `auto`/`any`/`tool`/`none` are the reference's own), `stop_sequences`
 * → `stop`, `max_tokens`, `temperature`, `top_p`, `stream`, `output_config.effort` →
 * `reasoning_effort`.
 */
export function messagesRequestSchema(req: Json, provider: string): Json {
  const request: Json = { llm_type: 'chat', provider };
  if (typeof req.model === 'string') request.model = req.model;
  const messages: Json[] = [];
  const system = systemMessage(req.system);
  if (system) messages.push(system);
  if (Array.isArray(req.messages)) for (const m of req.messages) if (isObject(m)) messages.push(messagesMessage(m));
  request.messages = messages;
  for (const k of ['max_tokens', 'temperature', 'top_p'] as const) if (typeof req[k] === 'number') request[k] = req[k];
  if (typeof req.stream === 'boolean') request.stream = req.stream;
  if (Array.isArray(req.stop_sequences)) request.stop = req.stop_sequences.filter((s): s is string => typeof s === 'string');
  const effort = isObject(req.output_config) ? req.output_config.effort : undefined;
  if (typeof effort === 'string' && EFFORTS.has(effort)) request.reasoning_effort = effort;
  if (Array.isArray(req.tools)) {
    request.tools = req.tools.filter(isObject).map((t) => ({
      name: str(t.name) ?? str(t.type) ?? '',
      description: str(t.description) ?? '',
      parameters: isObject(t.input_schema) ? t.input_schema : {},
    }));
  }
  if (isObject(req.tool_choice) && typeof req.tool_choice.type === 'string' && ['auto', 'any', 'tool', 'none'].includes(req.tool_choice.type)) {
    request.tool_choice = { type: req.tool_choice.type, ...(typeof req.tool_choice.name === 'string' ? { name: req.tool_choice.name } : {}) };
  }
  return request;
}

/** True for a Messages response body: a `message` object with a content array. */
export function isMessagesResponse(res: unknown): res is Json {
  return isObject(res) && Array.isArray(res.content) && (res.type === 'message' || res.role === 'assistant');
}

/** A Messages response (`message`) as the reference's `LLMResponseBody`: its model and one assistant message. */
export function messagesResponseSchema(res: Json, fallbackModel: string | null): Json {
  return { model: str(res.model) ?? fallbackModel, messages: [messagesMessage({ role: str(res.role) ?? 'assistant', content: res.content })] };
}
