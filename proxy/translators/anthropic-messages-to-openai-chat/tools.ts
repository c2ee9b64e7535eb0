/**
 * Messages `tools` and `tool_choice` as chat-completions `tools`, `tool_choice` and `parallel_tool_calls`.
 *
 * - a client tool (`type` absent or `custom`) → `{type: "function", function: {name, description, parameters:
 *   input_schema, strict}}`; its Anthropic-only members (`cache_control`, `defer_loading`, `input_examples`,
 *   `eager_input_streaming`, …) are removed and recorded;
 * - a description longer than the provider accepts (OpenAI, Azure: 1,024 characters) is cut there, ending in
 *   {@link DESCRIPTION_CONTINUED}, and given whole in a system message ({@link toolDescriptionsMessage}), so the
 *   model still reads all of it;
 * - an Anthropic server or built-in tool (`web_search_20250305`, `web_fetch_…`, `code_execution_…`, `bash_…`,
 *   `text_editor_…`, `computer_…`, `memory_…`, `tool_search_tool_…`, an MCP toolset, …) is refused with a 400 naming
 *   `tools[i].type`: server tools run at Anthropic, and the built-in client tools are defined by Anthropic's model
 *   training rather than a schema in the request, so another provider would answer without them;
 * - `tool_choice`: `auto` → `"auto"`, `any` → `"required"`, `tool` → `{type: "function", function: {name}}`,
 *   `none` → `"none"`; `disable_parallel_tool_use: true` → `parallel_tool_calls: false`. Without tools, `tool_choice`
 *   is removed and recorded (chat refuses a `tool_choice` without `tools`).
 * Sources: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use,
 * https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`, `parallel_tool_calls`).
 */
import type { ChatCompletionRequest, ChatTool } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { isPresent, objectAt, recordUnmapped, stringAt } from '../shared/request-members.ts';
import { targetName, type RequestBuild } from './build.ts';

const TOOL_MEMBERS = new Set(['type', 'name', 'description', 'input_schema', 'strict']);

/** The end of a tool description cut to the provider's limit. */
export const DESCRIPTION_CONTINUED = ' … (continued in the system message "Tool descriptions")';

/** The chat tools, and the whole descriptions of those whose description had to be cut (`[name, description]`). */
export interface ChatTools {
  tools: ChatTool[];
  overflow: Array<[string, string]>;
}

/** The system message giving the whole descriptions that were cut in the tool list. */
export function toolDescriptionsMessage(overflow: Array<[string, string]>): string {
  return ['Tool descriptions (in full; the tool list shortens them):', ...overflow.map(([name, text]) => `## ${name}\n${text}`)].join('\n\n');
}

function description(name: string, text: string, b: RequestBuild, overflow: Array<[string, string]>): string {
  const limit = b.profile.toolDescriptionLimit;
  if (limit === null || text.length <= limit) return text;
  overflow.push([name, text]);
  return text.slice(0, limit - DESCRIPTION_CONTINUED.length) + DESCRIPTION_CONTINUED;
}

/**
 * The chat `tools` of a Messages `tools` array.
 * @throws {GatewayError} 400 naming `tools`, `tools[i]`, `tools[i].name`, `tools[i].input_schema` when malformed, or
 *   `tools[i].type` for a server or built-in tool.
 */
export function chatToolsOf(tools: unknown, b: RequestBuild): ChatTools {
  if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools');
  const overflow: Array<[string, string]> = [];
  const list = tools.map((raw, i): ChatTool => {
    const path = `tools[${i}]`;
    const tool = objectAt(raw, path);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      throw badRequest(
        `${path}.type ${JSON.stringify(tool.type)}: Anthropic's server and built-in tools cannot run at ${targetName(b)}; send client tools with an input_schema`,
        `${path}.type`,
      );
    }
    const name = stringAt(tool.name, `${path}.name`);
    const schema = objectAt(tool.input_schema, `${path}.input_schema`);
    recordUnmapped(tool, TOOL_MEMBERS, path, b.removed, isPresent);
    const fn: NonNullable<ChatTool['function']> = { name, parameters: schema };
    if (typeof tool.description === 'string') fn.description = description(name, tool.description, b, overflow);
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
  return { tools: list, overflow };
}

/**
 * Sets `tool_choice` and `parallel_tool_calls` of `out` from a Messages `tool_choice`; `hasTools` tells whether the
 * request has any tool.
 * @throws {GatewayError} 400 naming `tool_choice.type` or `tool_choice.name` when malformed.
 */
export function applyToolChoice(choice: unknown, hasTools: boolean, out: ChatCompletionRequest, b: RequestBuild): void {
  const c = objectAt(choice, 'tool_choice');
  if (!hasTools) {
    b.removed.push('tool_choice');
    return;
  }
  switch (c.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      out.tool_choice = { type: 'function', function: { name: stringAt(c.name, 'tool_choice.name') } };
      break;
    default:
      throw badRequest(`tool_choice.type must be "auto", "any", "tool" or "none", got ${JSON.stringify(c.type)}`, 'tool_choice.type');
  }
  if (c.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  recordUnmapped(c, TOOL_CHOICE_MEMBERS, 'tool_choice', b.removed, isPresent);
}

const TOOL_CHOICE_MEMBERS = new Set(['type', 'name', 'disable_parallel_tool_use']);
