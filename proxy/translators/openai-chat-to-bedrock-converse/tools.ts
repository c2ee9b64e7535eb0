/**
 * OpenAI chat `tools`, `tool_choice` and `parallel_tool_calls` as Converse's `toolConfig`:
 *
 * | chat member | Converse |
 * | --- | --- |
 * | `tools[i]` `{type: "function", function: {name, description, parameters}}` | `{toolSpec: {name, description, inputSchema: {json: parameters}}}` (an empty object schema when there are no parameters) |
 * | `tools[i].cache_control` | a `{cachePoint}` entry after the tool (the LiteLLM convention, as on content parts) |
 * | `tools[i].function.strict: true` | removed and recorded: the guarantee is not sent (Converse's strict tool use is refused by the models without structured outputs, which a tool list must keep reaching); `false` is Converse's default |
 * | any other tool type (`custom`, …) | refused (400 naming `tools[i]`) |
 * | any other member of a tool or its function | removed and recorded (`tools[0].function.x`) |
 * | `tool_choice` | `auto` → `{auto: {}}`, `required` → `{any: {}}`, `{function: {name}}` → `{tool: {name}}`; `none` → no `toolConfig`, unless the history holds tool calls or results (Converse refuses those without one): then the tools are sent without a choice, and `tool_choice` is recorded (Converse has no `none`) |
 * | `tool_choice` `required` or a function without `tools` | removed and recorded: there is no tool to call |
 * | `parallel_tool_calls: false` | removed and recorded: Converse has no such switch; `true` is what Converse does |
 *
 * Sources: https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`, `parallel_tool_calls`),
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolConfiguration.html.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { recordUnmapped } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import { CACHE_POINT, type ConverseRequest, type ConverseTool } from '../wire/bedrock.ts';

const TOOL_MEMBERS = new Set(['type', 'function', 'cache_control']);
const FUNCTION_MEMBERS = new Set(['name', 'description', 'parameters', 'strict']);

/**
 * The Converse tools of a chat `tools` array, pushing the paths of the members it removes to `removed`.
 * @throws {GatewayError} 400 naming `tools` when it is not an array, `tools[i]` for a tool that is not a function with a name.
 */
function converseTools(tools: unknown, removed: string[]): ConverseTool[] {
  if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools');
  const out: ConverseTool[] = [];
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function) || typeof tool.function.name !== 'string') {
      throw badRequest(`tools[${i}]: only {"type":"function","function":{"name",...}} tools are supported by bedrock`, `tools[${i}]`);
    }
    const fn = tool.function;
    out.push({
      toolSpec: {
        name: fn.name as string,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } },
      },
    });
    if (tool.cache_control !== undefined && tool.cache_control !== null) out.push(CACHE_POINT);
    if (fn.strict === true) removed.push(`tools[${i}].function.strict`);
    recordUnmapped(tool, TOOL_MEMBERS, `tools[${i}]`, removed);
    recordUnmapped(fn, FUNCTION_MEMBERS, `tools[${i}].function`, removed);
  }
  return out;
}

/**
 * Converse's `toolConfig` for the body's `tools`, `tool_choice` and `parallel_tool_calls` (table above), pushing what
 * it removes to `removed`; undefined when no tool is sent. `hasToolBlocks`: the history holds tool calls or results.
 * @throws {GatewayError} 400 naming `tools[i]` (see above), or `tool_choice` when it is none of OpenAI's forms.
 */
export function converseToolConfig(body: ChatCompletionRequest, hasToolBlocks: boolean, removed: string[]): ConverseRequest['toolConfig'] {
  const choice = body.tool_choice ?? undefined;
  let toolChoice: NonNullable<ConverseRequest['toolConfig']>['toolChoice'];
  if (choice === 'required') toolChoice = { any: {} };
  else if (choice === 'auto') toolChoice = { auto: {} };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') toolChoice = { tool: { name: choice.function.name } };
  else if (choice !== undefined && choice !== 'none') {
    throw badRequest('tool_choice must be "auto", "required", "none" or {"type":"function","function":{"name":...}}', 'tool_choice');
  }
  // The tools' members are recorded only when the tools are sent.
  const toolsRemoved: string[] = [];
  const tools = body.tools === undefined || body.tools === null ? [] : converseTools(body.tools, toolsRemoved);
  if (!tools.length) {
    if (toolChoice && !('auto' in toolChoice)) removed.push('tool_choice');
    return undefined;
  }
  if (choice === 'none') {
    if (!hasToolBlocks) return undefined;
    removed.push('tool_choice');
  }
  removed.push(...toolsRemoved);
  if (body.parallel_tool_calls === false) removed.push('parallel_tool_calls');
  return toolChoice ? { tools, toolChoice } : { tools };
}
