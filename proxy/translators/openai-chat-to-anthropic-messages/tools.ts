/**
 * OpenAI chat `tools`, `tool_choice` and `parallel_tool_calls` as Anthropic's `tools` and `tool_choice`:
 *
 * | chat member | Messages |
 * | --- | --- |
 * | `tools[i]` `{type: "function", function: {name, description, parameters}}` | `{name, description, input_schema: parameters}` (an empty object schema when there are no parameters) |
 * | `tools[i].cache_control` | `cache_control` of the tool (the LiteLLM convention, as on content parts) |
 * | `tools[i].function.strict: true` | removed and recorded: the guarantee is not sent (Anthropic's strict tool use is refused by the models without structured outputs, which a tool list must keep reaching); `false` is Anthropic's default |
 * | any other tool type (`custom`, …) | refused (400 naming `tools[i]`) |
 * | any other member of a tool or its function | removed and recorded (`tools[0].function.x`) |
 * | `tool_choice` | `auto` → `auto`, `required` → `any`, `none` → `none`, `{function: {name}}` → `{type: "tool", name}` |
 * | `parallel_tool_calls: false` | `disable_parallel_tool_use: true` (with `tool_choice` `auto` when none is given) |
 *
 * Sources: https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`, `parallel_tool_calls`),
 * https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use.
 */
import type { ChatCompletionRequest } from '../../../shared/chat.ts';
import { badRequest } from '../../errors.ts';
import { recordUnmapped } from '../shared/request-members.ts';
import { isRecord } from '../shared/values.ts';
import type { AnthropicRequest } from '../wire/anthropic-messages.ts';

const TOOL_MEMBERS = new Set(['type', 'function', 'cache_control']);
const FUNCTION_MEMBERS = new Set(['name', 'description', 'parameters', 'strict']);

/** One Anthropic client tool. */
export type AnthropicTool = NonNullable<AnthropicRequest['tools']>[number];

/**
 * The Anthropic tools of a chat `tools` array, pushing the paths of the members it removes to `removed`.
 * @throws {GatewayError} 400 naming `tools[i]` for a tool that is not a function with a name.
 */
export function anthropicTools(tools: readonly unknown[], removed: string[]): AnthropicTool[] {
  const out: AnthropicTool[] = [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function) || typeof tool.function.name !== 'string') {
      throw badRequest(`tools[${i}]: only {"type":"function","function":{"name",...}} tools are supported by anthropic`, `tools[${i}]`);
    }
    const fn = tool.function;
    const mapped: AnthropicTool = { name: fn.name as string, input_schema: fn.parameters ?? { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') mapped.description = fn.description;
    if (tool.cache_control !== undefined && tool.cache_control !== null) mapped.cache_control = tool.cache_control;
    if (fn.strict === true) removed.push(`tools[${i}].function.strict`);
    recordUnmapped(tool, TOOL_MEMBERS, `tools[${i}]`, removed);
    recordUnmapped(fn, FUNCTION_MEMBERS, `tools[${i}].function`, removed);
    out.push(mapped);
  }
  return out;
}

/**
 * Anthropic's `tool_choice` for the body's `tool_choice` and `parallel_tool_calls` (table above); undefined: none.
 * @throws {GatewayError} 400 naming `tool_choice` when it is none of OpenAI's forms.
 */
export function anthropicToolChoice(body: ChatCompletionRequest): AnthropicRequest['tool_choice'] {
  const choice = body.tool_choice;
  const noParallel = body.parallel_tool_calls === false;
  let mapped: AnthropicRequest['tool_choice'];
  if (choice === undefined || choice === null) mapped = noParallel && body.tools?.length ? { type: 'auto' } : undefined;
  else if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (choice === 'none') return { type: 'none' };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    mapped = { type: 'tool', name: choice.function.name };
  } else {
    throw badRequest('tool_choice must be "auto", "required", "none" or {"type":"function","function":{"name":...}}', 'tool_choice');
  }
  if (mapped && noParallel) mapped.disable_parallel_tool_use = true;
  return mapped;
}
