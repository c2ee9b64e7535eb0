/** Request bodies of the `/v1/prompt-2025` routes (superstruct), and the prompt body they carry. */
import { any, array, boolean, enums, integer, literal, max, min, nullable, number, object, optional, record, size, string, type, union } from 'superstruct';
import { sizedText, Text } from '../../validation.ts';

const ChatMessage = type({
  role: string(),
  content: nullable(union([string(), array(type({ type: string(), text: optional(string()), image_url: optional(type({ url: string() })) }))])),
  name: optional(string()),
  tool_call_id: optional(string()),
  tool_calls: optional(array(type({ id: string(), type: literal('function'), function: type({ name: string(), arguments: string() }) }))),
});

/** The reference `OpenAIChatRequest` (a prompt-2025 version body): known members only (400 on others). */
export const PromptBodyStruct = object({
  model: optional(string()),
  messages: optional(array(ChatMessage)),
  temperature: optional(number()),
  top_p: optional(number()),
  max_tokens: optional(number()),
  max_completion_tokens: optional(number()),
  stream: optional(boolean()),
  stop: optional(union([array(string()), string()])),
  tools: optional(
    array(type({ type: literal('function'), function: type({ name: string(), description: optional(string()), parameters: optional(record(string(), any())), strict: optional(boolean()) }) })),
  ),
  tool_choice: optional(union([enums(['none', 'auto', 'required']), type({ type: string(), function: optional(type({ name: string(), type: literal('function') })) })])),
  parallel_tool_calls: optional(boolean()),
  reasoning_effort: optional(enums(['minimal', 'low', 'medium', 'high'])),
  verbosity: optional(enums(['low', 'medium', 'high'])),
  frequency_penalty: optional(number()),
  presence_penalty: optional(number()),
  logit_bias: optional(record(string(), number())),
  logprobs: optional(boolean()),
  top_logprobs: optional(number()),
  n: optional(number()),
  modalities: optional(array(string())),
  prediction: optional(any()),
  audio: optional(any()),
  response_format: optional(type({ type: string(), json_schema: optional(any()) })),
  seed: optional(number()),
  service_tier: optional(string()),
  store: optional(boolean()),
  stream_options: optional(any()),
  metadata: optional(record(string(), string())),
  user: optional(string()),
  function_call: optional(union([string(), type({ name: string() })])),
  functions: optional(array(any())),
});

const Tags = size(array(sizedText(256)), 0, 100);
const EnvironmentName = sizedText(100);

/** Body of `POST /v1/prompt-2025`. */
export const CreatePrompt2025Body = type({ name: sizedText(1000), tags: Tags, promptBody: PromptBodyStruct });
/** Body of `POST /v1/prompt-2025/update`. */
export const UpdatePrompt2025Body = type({
  promptId: Text,
  promptVersionId: Text,
  newMajorVersion: boolean(),
  environment: optional(EnvironmentName),
  commitMessage: size(Text, 0, 10_000),
  promptBody: PromptBodyStruct,
});
/** Body of `POST /v1/prompt-2025/query` (all optional; `page` is 0-based, `pageSize` 1–1000, default 100). */
export const QueryPrompts2025Body = type({
  search: optional(size(Text, 0, 1000)),
  tagsFilter: optional(Tags),
  page: optional(max(min(integer(), 0), 1_000_000)),
  pageSize: optional(max(min(integer(), 1), 1000)),
});
/** Body of `POST /v1/prompt-2025/query/versions`. */
export const QueryVersionsBody = type({ promptId: Text, majorVersion: optional(max(min(integer(), 0), 2_147_483_647)) });
/** Body of `POST /v1/prompt-2025/query/environment-version`. */
export const EnvironmentVersionBody = type({ promptId: Text, environment: EnvironmentName });
/** Body of `POST /v1/prompt-2025/promote`: which version gets which environment's label. */
export const PromotePrompt2025Body = type({ promptId: Text, promptVersionId: Text, environment: EnvironmentName });
