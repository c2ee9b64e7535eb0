/**
 * `llmSchema` of an OpenAI Responses request and response, in the reference's shapes
 * (test/fixtures/reference/rest-api-openapi.json: `LLMRequestBody`, `LLMResponseBody`, `Message`, `Tool`).
 * Source of the Responses shapes: OpenAI API reference, "Responses" → "Create a model response"
 * (request: `instructions`, `input` as a string or items, `tools`, `tool_choice`, `reasoning`, `text`;
 * response: the `response` object with its `output` items, `status` and `usage`).
 *
 * `instructions` becomes a system message first (and is kept as the reference's `instructions`).
 * `input` as a string is one user message; as items, each item is one `Message`, in order:
 * `message` (roles user/assistant/system/developer; a string content, or parts: `input_text` /
 * `output_text` → text, `refusal` → text, `input_image` → an image, `input_file` → a file) → a
 * message or a `contentArray`; `function_call` / `custom_tool_call` → a function call (`tool_calls`:
 * `id` = `call_id`, `arguments` parsed from their JSON text, or `{ input }` for a custom call);
 * `function_call_output` / `custom_tool_call_output` → a function result (`tool_call_id`);
 * `reasoning` → an assistant message whose `reasoning` is the summary texts joined; an item of
 * another type is kept as its JSON text, never dropped. A namespaced function (tool or call) is
 * named `<namespace>__<name>`, as the gateway's chat translation names it (the reference's `Tool`
 * takes no nesting); a hosted tool (`web_search`, `file_search`, …) is named by its `type`.
 * The bodies themselves are stored as received.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A function name with its namespace, when it has one, as `<namespace>__<name>`. */
const qualified = (name: unknown, namespace: unknown): string =>
  typeof namespace === 'string' && namespace !== '' ? `${namespace}__${str(name) ?? ''}` : (str(name) ?? '');

/** A call's `arguments` JSON text as an object; text that is not a JSON object is kept as `{ _raw }`. */
function parsedArguments(args: unknown): Json {
  if (isObject(args)) return args;
  if (typeof args !== 'string' || args === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : { _raw: args };
  } catch {
    return { _raw: args };
  }
}

/** A `function_call_output` / `custom_tool_call_output` `output` (a string, or content parts) as text. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return output === undefined ? '' : JSON.stringify(output);
  return output.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : isObject(p) ? `[${String(p.type)}]` : '')).join('\n');
}

/** One content part of a `message` item as a reference `Message`. */
function partToMessage(part: unknown, role: string): Json {
  if (!isObject(part)) return { _type: 'message', role, content: typeof part === 'string' ? part : JSON.stringify(part) };
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { _type: 'message', role, content: str(part.text) ?? '' };
    case 'refusal':
      return { _type: 'message', role, content: str(part.refusal) ?? '' };
    case 'input_image': {
      const url = str(part.image_url) ?? str(part.file_id);
      return { _type: 'image', role, type: 'input_image', ...(url !== undefined ? { image_url: url } : {}), ...(str(part.detail) ? { detail: part.detail } : {}) };
    }
    case 'input_file': {
      const out: Json = { _type: 'file', role, type: 'input_file' };
      for (const k of ['file_id', 'file_data', 'filename'] as const) if (typeof part[k] === 'string') out[k] = part[k];
      if (out.file_id === undefined && typeof part.file_url === 'string') out.file_id = part.file_url;
      return out;
    }
    default:
      return { _type: 'message', role, content: JSON.stringify(part) };
  }
}

/** A `message` item: a string content is a plain message; parts become `contentArray` with the texts joined into `content`. */
function messageItem(item: Json): Json {
  const role = str(item.role) ?? 'user';
  if (!Array.isArray(item.content)) return { _type: 'message', role, content: str(item.content) ?? '' };
  const parts = item.content.map((p) => partToMessage(p, role));
  const texts = parts.filter((p) => p._type === 'message').map((p) => p.content as string);
  return { _type: 'contentArray', role, contentArray: parts, content: texts.join('') };
}

/** The summary texts of a `reasoning` item, joined by blank lines. */
const summaryText = (item: Json): string =>
  Array.isArray(item.summary) ? item.summary.map((s) => (isObject(s) ? (str(s.text) ?? '') : '')).filter((t) => t !== '').join('\n\n') : '';

/**
 * One Responses item (of `input` or of the response's `output`) as a reference `Message` (see the
 * module comment); an item of an unknown type is kept as its JSON text in an assistant message.
 */
export function responsesItem(item: unknown): Json {
  if (!isObject(item)) return { _type: 'message', role: 'user', content: typeof item === 'string' ? item : JSON.stringify(item) };
  switch (item.type ?? (item.role !== undefined ? 'message' : undefined)) {
    case 'message':
      return messageItem(item);
    case 'function_call':
    case 'custom_tool_call': {
      const args = item.type === 'custom_tool_call' ? { input: item.input } : parsedArguments(item.arguments);
      const call: Json = { ...(str(item.call_id) ? { id: item.call_id } : {}), name: qualified(item.name, item.namespace), arguments: args };
      return { _type: 'functionCall', role: 'assistant', tool_calls: [call] };
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
      return { _type: 'function', role: 'tool', tool_call_id: str(item.call_id) ?? '', content: outputText(item.output) };
    case 'reasoning':
      return { _type: 'message', role: 'assistant', reasoning: summaryText(item) };
    default:
      return { _type: 'message', role: 'assistant', content: JSON.stringify(item) };
  }
}

/** One Responses tool as reference `Tool`s: a namespace yields its functions, flattened (see the module comment). */
function tools(t: Json): Json[] {
  if (t.type === 'namespace' && Array.isArray(t.tools)) {
    return t.tools.filter(isObject).map((inner) => ({ ...tools(inner)[0]!, name: qualified(str(inner.name) ?? str(inner.type), t.name) }));
  }
  const out: Json = { name: str(t.name) ?? str(t.type) ?? '', description: str(t.description) ?? '' };
  out.parameters = isObject(t.parameters) ? t.parameters : isObject(t.format) ? { format: t.format } : {};
  if (typeof t.strict === 'boolean') out.strict = t.strict;
  return [out];
}

/** Responses `tool_choice` as the reference's: `required` → `any`; a named function or hosted tool → `tool`. */
function toolChoice(tc: unknown): Json | undefined {
  if (tc === 'auto' || tc === 'none') return { type: tc };
  if (tc === 'required') return { type: 'any' };
  if (!isObject(tc)) return undefined;
  if (tc.type === 'allowed_tools') return { type: tc.mode === 'required' ? 'any' : 'auto' };
  return { type: 'tool', name: str(tc.name) ?? str(tc.type) ?? '' };
}

/** `reasoning.effort` as the reference's `reasoning_effort` (its enum has no `none`/`xhigh`: those are left out). */
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);
const VERBOSITIES = new Set(['low', 'medium', 'high']);

/**
 * A Responses request body as the reference's `LLMRequestBody`: `instructions` as a system message
 * first (and as `instructions`), then the `input` items; `tools`, `tool_choice`,
 * `max_output_tokens` → `max_tokens`, `temperature`, `top_p`, `stream`, `parallel_tool_calls`,
 * `reasoning.effort` → `reasoning_effort`, `text.verbosity` → `verbosity`, `text.format` →
 * `response_format`.
 */
export function responsesRequestSchema(req: Json, provider: string): Json {
  const request: Json = { llm_type: 'chat', provider };
  if (typeof req.model === 'string') request.model = req.model;
  const messages: Json[] = [];
  if (typeof req.instructions === 'string') {
    request.instructions = req.instructions;
    messages.push({ _type: 'message', role: 'system', content: req.instructions });
  }
  if (typeof req.input === 'string') messages.push({ _type: 'message', role: 'user', content: req.input });
  else if (Array.isArray(req.input)) for (const item of req.input) messages.push(responsesItem(item));
  request.messages = messages;
  if (typeof req.max_output_tokens === 'number') request.max_tokens = req.max_output_tokens;
  for (const k of ['temperature', 'top_p'] as const) if (typeof req[k] === 'number') request[k] = req[k];
  for (const k of ['stream', 'parallel_tool_calls'] as const) if (typeof req[k] === 'boolean') request[k] = req[k];
  const effort = isObject(req.reasoning) ? req.reasoning.effort : undefined;
  if (typeof effort === 'string' && EFFORTS.has(effort)) request.reasoning_effort = effort;
  const text = isObject(req.text) ? req.text : {};
  if (typeof text.verbosity === 'string' && VERBOSITIES.has(text.verbosity)) request.verbosity = text.verbosity;
  if (isObject(text.format) && typeof text.format.type === 'string') request.response_format = { ...text.format };
  if (Array.isArray(req.tools)) request.tools = req.tools.filter(isObject).flatMap(tools);
  const tc = toolChoice(req.tool_choice);
  if (tc) request.tool_choice = tc;
  return request;
}

/** True for a Responses response body: a `response` object with an `output` array. */
export function isResponsesResponse(res: unknown): res is Json {
  return isObject(res) && Array.isArray(res.output) && (res.object === 'response' || res.object === undefined);
}

/**
 * A Responses `response` as the reference's `LLMResponseBody`: its model and one assistant message
 * gathering the `output` items in order in `contentArray`, the texts joined into `content`, the
 * reasoning summaries into `reasoning` and every function call in `tool_calls` (`_type:
 * functionCall` then). A `status` other than `completed` (`incomplete`, `failed`, …) is kept as the
 * message's `status`, with `incomplete_details.reason` as `status_reason`, and a `failed`
 * response's `error` becomes the reference's `error` — the reference's `Message` allows members of
 * its own. `usage` is not repeated here: the SvcRequest's token counts carry it.
 */
export function responsesResponseSchema(res: Json, fallbackModel: string | null): Json {
  const parts = (res.output as unknown[]).map(responsesItem);
  const message: Json = { _type: 'contentArray', role: 'assistant', contentArray: parts };
  message.content = parts.filter((p) => (p._type === 'message' || p._type === 'contentArray') && typeof p.content === 'string').map((p) => p.content as string).join('');
  const reasoning = parts.filter((p) => typeof p.reasoning === 'string' && p.reasoning !== '').map((p) => p.reasoning as string);
  if (reasoning.length > 0) message.reasoning = reasoning.join('\n\n');
  const calls = parts.flatMap((p) => (Array.isArray(p.tool_calls) ? (p.tool_calls as Json[]) : []));
  if (calls.length > 0) {
    message._type = 'functionCall';
    message.tool_calls = calls;
  }
  if (typeof res.status === 'string' && res.status !== 'completed') {
    message.status = res.status;
    if (isObject(res.incomplete_details) && typeof res.incomplete_details.reason === 'string') message.status_reason = res.incomplete_details.reason;
  }
  const out: Json = { model: str(res.model) ?? fallbackModel, messages: [message] };
  if (isObject(res.error)) out.error = { svcMessage: res.error };
  return out;
}
