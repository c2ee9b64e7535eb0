/**
 * Responses `tools` and `tool_choice` as chat-completions `tools` and `tool_choice`.
 *
 * - `function` (flat: `{type, name, description, parameters, strict}`) → `{type: "function", function: {name,
 *   description, parameters, strict}}`; members chat has no place for (`defer_loading`, `allowed_callers`,
 *   `output_schema`, …) are removed and recorded;
 * - `custom` (free-form input, optionally a Lark or regex grammar) → a function taking one string member `input`,
 *   its description followed by the grammar when there is one; the provider's calls of it are answered as
 *   `custom_tool_call` items (../response.ts), so a Codex `apply_patch` keeps working;
 * - `namespace` → each function and custom tool inside it, named `<namespace>__<name>` (./tool-names.ts), its
 *   description preceded by the namespace's description (the model sees what the group is for); the calls are
 *   answered with the original `name` and `namespace`;
 * - hosted tools (`web_search`, `web_search_preview`, `file_search`, `code_interpreter`, `image_generation`,
 *   `computer_use_preview`, `computer`, `mcp`, `local_shell`, `shell`, `apply_patch`, `tool_search`, and any other
 *   type) run at OpenAI or need OpenAI's model training: the provider cannot run them, so each is removed and
 *   recorded (`tools[i]`) and the request goes on with the rest — a client such as Codex keeps working without its
 *   web search. {@link hostedToolTypes} lists them for a response header.
 * - `tool_choice`: `auto`, `none`, `required` as they are; `{type: "function", name}` and `{type: "custom", name}` →
 *   `{type: "function", function: {name}}` (the name as sent); `{type: "allowed_tools", mode, tools}` → `tool_choice`
 *   `mode` with `tools` narrowed to the listed functions; a hosted tool's choice is refused (400), since the tool was
 *   removed and forcing it cannot be honoured. Without any tool left, `tool_choice` and `parallel_tool_calls` are
 *   removed and recorded (chat refuses them without `tools`).
 * Sources: https://platform.openai.com/docs/api-reference/responses/create (`tools`, `tool_choice`),
 * https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`, `parallel_tool_calls`).
 */
import type { ChatCompletionRequest, ChatTool } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import { targetName, type RequestBuild } from './build.ts';
import { sentToolName } from './tool-names.ts';

const FUNCTION_MEMBERS = new Set(['type', 'name', 'description', 'parameters', 'strict']);
const CUSTOM_MEMBERS = new Set(['type', 'name', 'description', 'format']);
const NAMESPACE_MEMBERS = new Set(['type', 'name', 'description', 'tools']);

/** The `tool_choice` types that name tools chat can carry; any other names a hosted tool. */
const CHOICE_TYPES = new Set(['function', 'custom', 'allowed_tools']);

/** The parameters of the function a custom tool becomes: one string, the tool's free-form input. */
const CUSTOM_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The free-form input of the tool.' } },
  required: ['input'],
  additionalProperties: false,
};

/**
 * The chat `tools` of a Responses `tools` array (see the module comment); hosted tools' paths go to `b.removed`.
 * @throws {GatewayError} 400 naming `tools`, `tools[i]`, its `type`, `name`, `parameters` or `format` when malformed.
 */
export function chatToolsOf(tools: unknown, b: RequestBuild): ChatTool[] {
  if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools');
  const out: ChatTool[] = [];
  tools.forEach((raw, i) => {
    const path = `tools[${i}]`;
    const tool = objectAt(raw, path);
    if (typeof tool.type !== 'string') throw badRequest(`${path}.type must be a string`, `${path}.type`);
    if (tool.type === 'namespace') out.push(...namespaceTools(tool, path, b));
    else if (tool.type === 'function' || tool.type === 'custom') out.push(chatTool(tool, path, undefined, b));
    else b.removed.push(path);
  });
  return out;
}

function namespaceTools(tool: Record<string, unknown>, path: string, b: RequestBuild): ChatTool[] {
  const namespace = stringAt(tool.name, `${path}.name`);
  if (!Array.isArray(tool.tools)) throw badRequest(`${path}.tools must be an array`, `${path}.tools`);
  const description = typeof tool.description === 'string' && tool.description !== '' ? tool.description : undefined;
  recordUnmapped(tool, NAMESPACE_MEMBERS, path, b.removed);
  const out: ChatTool[] = [];
  tool.tools.forEach((raw, j) => {
    const p = `${path}.tools[${j}]`;
    const inner = objectAt(raw, p);
    if (inner.type === 'function' || inner.type === 'custom') out.push(chatTool(inner, p, { namespace, description }, b));
    else b.removed.push(p);
  });
  return out;
}

/** A function or custom tool (top-level, or inside `group`) as a chat function tool. */
function chatTool(tool: Record<string, unknown>, path: string, group: { namespace: string; description?: string } | undefined, b: RequestBuild): ChatTool {
  const name = stringAt(tool.name, `${path}.name`);
  const sent = sentToolName(b.names, name, group?.namespace);
  const own = tool.description === undefined || tool.description === null ? undefined : stringAt(tool.description, `${path}.description`);
  const fn: NonNullable<ChatTool['function']> = { name: sent };
  let description = [group?.description, own].filter((d): d is string => d !== undefined && d !== '').join('\n\n');
  if (tool.type === 'custom') {
    description = [description, grammarNote(tool.format, `${path}.format`)].filter((d) => d !== '').join('\n\n');
    fn.parameters = CUSTOM_PARAMETERS;
    recordUnmapped(tool, CUSTOM_MEMBERS, path, b.removed);
  } else {
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = objectAt(tool.parameters, `${path}.parameters`);
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    recordUnmapped(tool, FUNCTION_MEMBERS, path, b.removed);
  }
  if (description !== '') fn.description = description;
  return { type: 'function', function: fn };
}

/** What a custom tool's `format` tells the model: nothing for `text`, the grammar for `grammar`. */
function grammarNote(format: unknown, path: string): string {
  if (format === undefined || format === null) return '';
  const f = objectAt(format, path);
  if (f.type === 'text') return '';
  if (f.type !== 'grammar') throw badRequest(`${path}.type must be "text" or "grammar", got ${JSON.stringify(f.type)}`, `${path}.type`);
  const syntax = stringAt(f.syntax, `${path}.syntax`);
  return `The input must follow this ${syntax} grammar:\n${stringAt(f.definition, `${path}.definition`)}`;
}

/**
 * Sets `tool_choice` of `out` (whose `tools` are already mapped) from a Responses `tool_choice`.
 * @throws {GatewayError} 400 naming `tool_choice` or its member when malformed, or `tool_choice.type` for a hosted tool.
 */
export function applyToolChoice(choice: unknown, out: ChatCompletionRequest, b: RequestBuild): void {
  if (!out.tools?.length) {
    if (isRecord(choice) && !CHOICE_TYPES.has(choice.type as string)) hostedChoice(choice, b);
    b.removed.push('tool_choice');
    return;
  }
  if (typeof choice === 'string') {
    if (choice !== 'auto' && choice !== 'none' && choice !== 'required') {
      throw badRequest(`tool_choice must be "auto", "none", "required" or an object, got ${JSON.stringify(choice)}`, 'tool_choice');
    }
    out.tool_choice = choice;
    return;
  }
  const c = objectAt(choice, 'tool_choice');
  switch (c.type) {
    case 'function':
    case 'custom': {
      const namespace = typeof c.namespace === 'string' ? c.namespace : undefined;
      out.tool_choice = { type: 'function', function: { name: sentToolName(b.names, stringAt(c.name, 'tool_choice.name'), namespace) } };
      return;
    }
    case 'allowed_tools':
      return allowedTools(c, out, b);
    default:
      hostedChoice(c, b);
  }
}

function hostedChoice(c: Record<string, unknown>, b: RequestBuild): never {
  throw badRequest(`tool_choice.type ${JSON.stringify(c.type)}: the tool runs at OpenAI and cannot be forced at ${targetName(b)}`, 'tool_choice.type');
}

/** `allowed_tools`: `mode` as the choice, the tools narrowed to the listed functions and custom tools. */
function allowedTools(c: Record<string, unknown>, out: ChatCompletionRequest, b: RequestBuild): void {
  if (c.mode !== 'auto' && c.mode !== 'required') throw badRequest('tool_choice.mode must be "auto" or "required"', 'tool_choice.mode');
  if (!Array.isArray(c.tools)) throw badRequest('tool_choice.tools must be an array', 'tool_choice.tools');
  const allowed = new Set<string>();
  c.tools.forEach((raw, k) => {
    const t = objectAt(raw, `tool_choice.tools[${k}]`);
    if (t.type === 'function' || t.type === 'custom') {
      const namespace = typeof t.namespace === 'string' ? t.namespace : undefined;
      allowed.add(sentToolName(b.names, stringAt(t.name, `tool_choice.tools[${k}].name`), namespace));
    } else b.removed.push(`tool_choice.tools[${k}]`);
  });
  out.tools = out.tools!.filter((t) => t.function !== undefined && allowed.has(t.function.name));
  if (out.tools.length) out.tool_choice = c.mode;
  else {
    if (c.mode === 'required') throw badRequest('tool_choice.tools: none of the allowed tools can be called at ' + targetName(b), 'tool_choice.tools');
    delete out.tools;
  }
}

/**
 * The types of the tools in a Responses body that the translator removes because chat providers cannot run them
 * (`web_search`, `file_search`, …, inside namespaces too), in order, once each: what a response header can name.
 * Pure; an absent or malformed `tools` gives [].
 */
export function hostedToolTypes(body: unknown): string[] {
  const tools = isRecord(body) && Array.isArray(body.tools) ? body.tools : [];
  const types = new Set<string>();
  const visit = (list: unknown[], inNamespace: boolean): void => {
    for (const t of list) {
      if (!isRecord(t) || typeof t.type !== 'string') continue;
      if (t.type === 'namespace' && !inNamespace && Array.isArray(t.tools)) visit(t.tools, true);
      else if (t.type !== 'function' && t.type !== 'custom') types.add(t.type);
    }
  };
  visit(tools, false);
  return [...types];
}
