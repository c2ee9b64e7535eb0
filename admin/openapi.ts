/**
 * This API's own OpenAPI 3 description (`GET /v1/openapi.json`), and a minimal JSON-schema checker
 * ({@link validateSchema}) for OpenAPI 3.0 schemas used by the tests to hold responses to it and to
 * the reference. Response shapes follow the reference (`test/fixtures/reference/rest-api-openapi.json`);
 * where the issue differs, this document says what the routes do: prompt-2025 successes carry no
 * `{data, error}` envelope, the filter tree accepts only `request`, `response` (status, model),
 * `request_response_rmt` (the fields the log stores), `properties`, `prompts_versions` and
 * `sessions_request_response_rmt` (its `session_session_id` and `session_session_name`) and `feedback`
 * (id, created_at, rating) leaves and rejects unknown members, and
 * `POST /v1/experiment/dataset/{datasetId}/query` lists a dataset's rows. Beyond the reference, for
 * the web console and any other client: keyset paging (`before`) and `POST /v1/request/count`, `POST /v1/dashboard/query` (totals, series, breakdowns), sessions
 * (`POST /v1/session/query`, `GET /v1/session/{sessionId}`),
 * `POST /v1/experiment/dataset` (the newest matching requests), changing a dataset (adding requests by
 * id, removing one, renaming, deleting) and exporting it as JSON Lines, and the revoked state of API keys. What the
 * reference's `SvcRequest` has no member for is shown under reserved `svc-` names in `properties`
 * (see {@link SVC_PROPERTIES}), and `llmSchema` is also built from Anthropic Messages bodies.
 * A test enumerates the registered routes and asserts each is documented here and vice versa.
 */
import type Router from '@koa/router';

/** A JSON schema as OpenAPI 3.0 writes it. */
export type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullValue: Schema = { type: 'number', enum: [null], nullable: true };
/** `{data: <schema>, error: null}` — the success envelope. */
const envelope = (data: Schema): Schema => ({
  type: 'object',
  properties: { data, error: nullValue },
  required: ['data', 'error'],
  additionalProperties: false,
});
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const str: Schema = { type: 'string' };
const num: Schema = { type: 'number', format: 'double' };
const int: Schema = { type: 'integer' };
const nullableNum = (description: string): Schema => ({ type: 'number', format: 'double', nullable: true, description });
const isoTime = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
/** An epoch-millisecond time up to the end of the year 9999 (admin/resources/sessions/schema.ts refuses later ones). */
const epochMs: Schema = { type: 'integer', minimum: 0, maximum: 253_402_300_799_999 };

/** Component schemas copied from the reference (the operator objects reject unknown operators). */
const REFERENCE_SCHEMAS: Record<string, Schema> = {
  "PromptInputRecord": {"properties": {"id": {"type": "string"}, "inputs": {"$ref": "#/components/schemas/Record_string.string_"}, "dataset_row_id": {"type": "string"}, "source_request": {"type": "string"}, "prompt_version": {"type": "string"}, "created_at": {"type": "string"}, "response_body": {"type": "string"}, "request_body": {"type": "string"}, "auto_prompt_inputs": {"items": {}, "type": "array"}}, "required": ["id", "inputs", "source_request", "prompt_version", "created_at", "auto_prompt_inputs"], "type": "object", "additionalProperties": false},
  "CreatePromptResponse": {"properties": {"id": {"type": "string"}, "prompt_version_id": {"type": "string"}}, "required": ["id", "prompt_version_id"], "type": "object", "additionalProperties": false},
  "DatasetMetadata": {"properties": {"promptVersionId": {"type": "string"}, "inputRecordsIds": {"items": {"type": "string"}, "type": "array"}}, "type": "object", "additionalProperties": false},
  "DatasetResult": {"properties": {"id": {"type": "string"}, "name": {"type": "string"}, "created_at": {"type": "string"}, "meta": {"$ref": "#/components/schemas/DatasetMetadata"}}, "required": ["id", "name", "created_at"], "type": "object", "additionalProperties": false},
  "FunctionCall": {"properties": {"id": {"type": "string"}, "name": {"type": "string"}, "arguments": {"$ref": "#/components/schemas/Record_string.any_"}}, "required": ["name", "arguments"], "type": "object", "additionalProperties": false},
  "LLMRequestBody": {"properties": {"llm_type": {"$ref": "#/components/schemas/LlmType"}, "provider": {"type": "string"}, "model": {"type": "string"}, "messages": {"items": {"$ref": "#/components/schemas/Message"}, "type": "array", "nullable": true}, "prompt": {"type": "string", "nullable": true}, "instructions": {"type": "string", "nullable": true}, "max_tokens": {"type": "number", "format": "double", "nullable": true}, "temperature": {"type": "number", "format": "double", "nullable": true}, "top_p": {"type": "number", "format": "double", "nullable": true}, "seed": {"type": "number", "format": "double", "nullable": true}, "stream": {"type": "boolean", "nullable": true}, "presence_penalty": {"type": "number", "format": "double", "nullable": true}, "frequency_penalty": {"type": "number", "format": "double", "nullable": true}, "stop": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "string"}], "nullable": true}, "reasoning_effort": {"type": "string", "enum": ["minimal", "low", "medium", "high", null], "nullable": true}, "verbosity": {"type": "string", "enum": ["low", "medium", "high", null], "nullable": true}, "tools": {"items": {"$ref": "#/components/schemas/Tool"}, "type": "array"}, "parallel_tool_calls": {"type": "boolean", "nullable": true}, "tool_choice": {"properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": ["none", "auto", "any", "tool"]}}, "required": ["type"], "type": "object"}, "response_format": {"properties": {"json_schema": {}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}, "toolDetails": {"$ref": "#/components/schemas/SvcEventTool"}, "vectorDBDetails": {"$ref": "#/components/schemas/SvcEventVectorDB"}, "dataDetails": {"$ref": "#/components/schemas/SvcEventData"}, "input": {"anyOf": [{"type": "string"}, {"items": {"type": "string"}, "type": "array"}]}, "n": {"type": "number", "format": "double", "nullable": true}, "size": {"type": "string"}, "quality": {"type": "string"}}, "type": "object", "additionalProperties": false},
  "LLMResponseBody": {"properties": {"dataDetailsResponse": {"properties": {"name": {"type": "string"}, "_type": {"type": "string", "enum": ["data"], "nullable": false}, "metadata": {"properties": {"timestamp": {"type": "string"}}, "additionalProperties": {}, "required": ["timestamp"], "type": "object"}, "message": {"type": "string"}, "status": {"type": "string"}}, "additionalProperties": {}, "required": ["name", "_type", "metadata", "message", "status"], "type": "object"}, "vectorDBDetailsResponse": {"properties": {"_type": {"type": "string", "enum": ["vector_db"], "nullable": false}, "metadata": {"properties": {"timestamp": {"type": "string"}, "destination_parsed": {"type": "boolean"}, "destination": {"type": "string"}}, "required": ["timestamp"], "type": "object"}, "actualSimilarity": {"type": "number", "format": "double"}, "similarityThreshold": {"type": "number", "format": "double"}, "message": {"type": "string"}, "status": {"type": "string"}}, "required": ["_type", "metadata", "message", "status"], "type": "object"}, "toolDetailsResponse": {"properties": {"toolName": {"type": "string"}, "_type": {"type": "string", "enum": ["tool"], "nullable": false}, "metadata": {"properties": {"timestamp": {"type": "string"}}, "required": ["timestamp"], "type": "object"}, "tips": {"items": {"type": "string"}, "type": "array"}, "message": {"type": "string"}, "status": {"type": "string"}}, "required": ["toolName", "_type", "metadata", "tips", "message", "status"], "type": "object"}, "error": {"properties": {"svcMessage": {}}, "required": ["svcMessage"], "type": "object"}, "model": {"type": "string", "nullable": true}, "instructions": {"type": "string", "nullable": true}, "responses": {"items": {"$ref": "#/components/schemas/Response"}, "type": "array", "nullable": true}, "messages": {"items": {"$ref": "#/components/schemas/Message"}, "type": "array", "nullable": true}}, "type": "object"},
  "LlmSchema": {"properties": {"request": {"$ref": "#/components/schemas/LLMRequestBody"}, "response": {"allOf": [{"$ref": "#/components/schemas/LLMResponseBody"}], "nullable": true}}, "required": ["request"], "type": "object", "additionalProperties": false},
  "LlmType": {"type": "string", "enum": ["chat", "completion"]},
  "Message": {"properties": {"ending_event_id": {"type": "string"}, "trigger_event_id": {"type": "string"}, "start_timestamp": {"type": "string"}, "annotations": {"items": {"properties": {"content": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}, "type": {"type": "string", "enum": ["url_citation"], "nullable": false}}, "required": ["title", "url", "type"], "type": "object"}, "type": "array"}, "reasoning": {"type": "string"}, "deleted": {"type": "boolean"}, "contentArray": {"items": {"$ref": "#/components/schemas/Message"}, "type": "array"}, "idx": {"type": "number", "format": "double"}, "detail": {"type": "string"}, "filename": {"type": "string"}, "file_id": {"type": "string"}, "file_data": {"type": "string"}, "type": {"type": "string", "enum": ["input_image", "input_text", "input_file"]}, "audio_data": {"type": "string"}, "image_url": {"type": "string"}, "timestamp": {"type": "string"}, "tool_call_id": {"type": "string"}, "tool_calls": {"items": {"$ref": "#/components/schemas/FunctionCall"}, "type": "array"}, "mime_type": {"type": "string"}, "content": {"type": "string"}, "name": {"type": "string"}, "instruction": {"type": "string"}, "role": {"anyOf": [{"type": "string"}, {"type": "string", "enum": ["user", "assistant", "system", "developer"]}]}, "id": {"type": "string"}, "_type": {"type": "string", "enum": ["functionCall", "function", "image", "file", "message", "autoInput", "contentArray", "audio"]}}, "required": ["_type"], "type": "object"},
  "ModelProviderName": {"type": "string", "enum": ["baseten", "anthropic", "azure", "bedrock", "canopywave", "cerebras", "chutes", "deepinfra", "deepseek", "fireworks", "google-ai-studio", "groq", "svc", "mistral", "nebius", "novita", "openai", "openrouter", "perplexity", "vertex", "xai"], "nullable": false},
  "OpenAIChatRequest": {"description": "Simplified interface for the OpenAI Chat request format", "properties": {"model": {"type": "string"}, "messages": {"items": {"properties": {"tool_calls": {"items": {"properties": {"type": {"type": "string", "enum": ["function"], "nullable": false}, "function": {"properties": {"arguments": {"type": "string"}, "name": {"type": "string"}}, "required": ["arguments", "name"], "type": "object"}, "id": {"type": "string"}}, "required": ["type", "function", "id"], "type": "object"}, "type": "array"}, "tool_call_id": {"type": "string"}, "name": {"type": "string"}, "content": {"anyOf": [{"type": "string"}, {"items": {"properties": {"image_url": {"properties": {"url": {"type": "string"}}, "required": ["url"], "type": "object"}, "text": {"type": "string"}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}, "type": "array"}], "nullable": true}, "role": {"type": "string"}}, "required": ["content", "role"], "type": "object"}, "type": "array"}, "temperature": {"type": "number", "format": "double"}, "top_p": {"type": "number", "format": "double"}, "max_tokens": {"type": "number", "format": "double"}, "max_completion_tokens": {"type": "number", "format": "double"}, "stream": {"type": "boolean"}, "stop": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "string"}]}, "tools": {"items": {"properties": {"function": {"properties": {"strict": {"type": "boolean"}, "parameters": {"$ref": "#/components/schemas/Record_string.any_"}, "description": {"type": "string"}, "name": {"type": "string"}}, "required": ["name"], "type": "object"}, "type": {"type": "string", "enum": ["function"], "nullable": false}}, "required": ["function", "type"], "type": "object"}, "type": "array"}, "tool_choice": {"anyOf": [{"properties": {"function": {"properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": ["function"], "nullable": false}}, "required": ["name", "type"], "type": "object"}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}, {"type": "string", "enum": ["none", "auto", "required"]}]}, "parallel_tool_calls": {"type": "boolean"}, "reasoning_effort": {"type": "string", "enum": ["minimal", "low", "medium", "high"]}, "verbosity": {"type": "string", "enum": ["low", "medium", "high"]}, "frequency_penalty": {"type": "number", "format": "double"}, "presence_penalty": {"type": "number", "format": "double"}, "logit_bias": {"$ref": "#/components/schemas/Record_string.number_"}, "logprobs": {"type": "boolean"}, "top_logprobs": {"type": "number", "format": "double"}, "n": {"type": "number", "format": "double"}, "modalities": {"items": {"type": "string"}, "type": "array"}, "prediction": {}, "audio": {}, "response_format": {"properties": {"json_schema": {}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}, "seed": {"type": "number", "format": "double"}, "service_tier": {"type": "string"}, "store": {"type": "boolean"}, "stream_options": {}, "metadata": {"$ref": "#/components/schemas/Record_string.string_"}, "user": {"type": "string"}, "function_call": {"anyOf": [{"type": "string"}, {"properties": {"name": {"type": "string"}}, "required": ["name"], "type": "object"}]}, "functions": {"items": {}, "type": "array"}}, "type": "object", "additionalProperties": false},
  "Partial_BooleanOperators_": {"properties": {"equals": {"type": "boolean"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Partial_NumberOperators_": {"properties": {"not-equals": {"type": "number", "format": "double"}, "equals": {"type": "number", "format": "double"}, "gte": {"type": "number", "format": "double"}, "lte": {"type": "number", "format": "double"}, "lt": {"type": "number", "format": "double"}, "gt": {"type": "number", "format": "double"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Partial_PromptVersionsToOperators_": {"properties": {"minor_version": {"$ref": "#/components/schemas/Partial_NumberOperators_"}, "major_version": {"$ref": "#/components/schemas/Partial_NumberOperators_"}, "id": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "prompt_v2": {"$ref": "#/components/schemas/Partial_TextOperators_"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Partial_RequestTableToOperators_": {"properties": {"prompt": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "created_at": {"$ref": "#/components/schemas/Partial_TimestampOperators_"}, "user_id": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "auth_hash": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "org_id": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "id": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "node_id": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "model": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "modelOverride": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "path": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "country_code": {"$ref": "#/components/schemas/Partial_TextOperators_"}, "prompt_id": {"$ref": "#/components/schemas/Partial_TextOperators_"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Partial_TextOperators_": {"properties": {"not-equals": {"type": "string"}, "equals": {"type": "string"}, "like": {"type": "string"}, "ilike": {"type": "string"}, "contains": {"type": "string"}, "not-contains": {"type": "string"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Partial_TimestampOperators_": {"properties": {"equals": {"type": "string"}, "gte": {"type": "string"}, "lte": {"type": "string"}, "lt": {"type": "string"}, "gt": {"type": "string"}}, "type": "object", "description": "Make all properties in T optional", "additionalProperties": false},
  "Prompt2025": {"properties": {"id": {"type": "string"}, "name": {"type": "string"}, "tags": {"items": {"type": "string"}, "type": "array"}, "created_at": {"type": "string"}}, "required": ["id", "name", "tags", "created_at"], "type": "object", "additionalProperties": false},
  "Prompt2025Version": {"properties": {"id": {"type": "string"}, "model": {"type": "string"}, "prompt_id": {"type": "string"}, "major_version": {"type": "number", "format": "double"}, "minor_version": {"type": "number", "format": "double"}, "commit_message": {"type": "string"}, "environments": {"items": {"type": "string"}, "type": "array"}, "created_at": {"type": "string"}, "s3_url": {"type": "string"}, "prompt_body": {"$ref": "#/components/schemas/Prompt2025VersionPromptBody", "description": "The full prompt body including messages. Only included when explicitly requested\nvia the `includePromptBody` parameter to avoid unnecessary data transfer."}}, "required": ["id", "model", "prompt_id", "major_version", "minor_version", "commit_message", "created_at"], "type": "object", "additionalProperties": false},
  "Prompt2025VersionPromptBody": {"properties": {"model": {"type": "string"}, "messages": {"items": {"properties": {"tool_calls": {"items": {"properties": {"type": {"type": "string", "enum": ["function"], "nullable": false}, "function": {"properties": {"arguments": {"type": "string"}, "name": {"type": "string"}}, "required": ["arguments", "name"], "type": "object"}, "id": {"type": "string"}}, "required": ["type", "function", "id"], "type": "object"}, "type": "array"}, "tool_call_id": {"type": "string"}, "name": {"type": "string"}, "content": {"anyOf": [{"type": "string"}, {"items": {"properties": {"image_url": {"properties": {"url": {"type": "string"}}, "required": ["url"], "type": "object"}, "text": {"type": "string"}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}, "type": "array"}], "nullable": true}, "role": {"type": "string"}}, "required": ["content", "role"], "type": "object"}, "type": "array"}, "temperature": {"type": "number", "format": "double"}, "top_p": {"type": "number", "format": "double"}, "max_tokens": {"type": "number", "format": "double"}, "tools": {"items": {"properties": {"function": {"properties": {"parameters": {"$ref": "#/components/schemas/Record_string.unknown_"}, "description": {"type": "string"}, "name": {"type": "string"}}, "required": ["parameters", "description", "name"], "type": "object"}, "type": {"type": "string", "enum": ["function"], "nullable": false}}, "required": ["function", "type"], "type": "object"}, "type": "array"}, "tool_choice": {"anyOf": [{"type": "string"}, {"properties": {"function": {"properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": ["function"], "nullable": false}}, "required": ["name", "type"], "type": "object"}, "type": {"type": "string"}}, "required": ["type"], "type": "object"}]}}, "type": "object", "additionalProperties": {}},
  "PromptCreateResponse": {"properties": {"id": {"type": "string"}, "versionId": {"type": "string"}}, "required": ["id", "versionId"], "type": "object", "additionalProperties": false},
  "PromptVersionResult": {"properties": {"id": {"type": "string"}, "minor_version": {"type": "number", "format": "double"}, "major_version": {"type": "number", "format": "double"}, "prompt_v2": {"type": "string"}, "model": {"type": "string"}, "svc_template": {"type": "string"}, "created_at": {"type": "string"}, "metadata": {"$ref": "#/components/schemas/Record_string.any_"}, "parent_prompt_version": {"type": "string", "nullable": true}, "experiment_id": {"type": "string", "nullable": true}, "updated_at": {"type": "string"}}, "required": ["id", "minor_version", "major_version", "prompt_v2", "model", "svc_template", "created_at", "metadata"], "type": "object", "additionalProperties": false},
  "Provider": {"anyOf": [{"$ref": "#/components/schemas/ProviderName"}, {"$ref": "#/components/schemas/ModelProviderName"}, {"type": "string", "enum": ["CUSTOM"]}]},
  "ProviderName": {"type": "string", "enum": ["OPENAI", "ANTHROPIC", "AZURE", "LOCAL", "SVC", "AMDBARTEK", "ANYSCALE", "CLOUDFLARE", "2YFV", "TOGETHER", "LEMONFOX", "FIREWORKS", "PERPLEXITY", "GOOGLE", "OPENROUTER", "WISDOMINANUTSHELL", "GROQ", "COHERE", "MISTRAL", "DEEPINFRA", "QSTASH", "FIRECRAWL", "AWS", "BEDROCK", "DEEPSEEK", "X", "AVIAN", "NEBIUS", "NOVITA", "OPENPIPE", "CHUTES", "LLAMA", "NVIDIA", "VERCEL", "CEREBRAS", "BASETEN", "CANOPYWAVE"]},
  "Record_string.any_": {"properties": {}, "additionalProperties": {}, "type": "object", "description": "Construct a type with a set of properties K of type T"},
  "Record_string.number_": {"properties": {}, "additionalProperties": {"type": "number", "format": "double"}, "type": "object", "description": "Construct a type with a set of properties K of type T"},
  "Record_string.string_": {"properties": {}, "additionalProperties": {"type": "string"}, "type": "object", "description": "Construct a type with a set of properties K of type T"},
  "Record_string.unknown_": {"properties": {}, "additionalProperties": {}, "type": "object", "description": "Construct a type with a set of properties K of type T"},
  "Response": {"properties": {"contentArray": {"items": {"$ref": "#/components/schemas/Response"}, "type": "array"}, "detail": {"type": "string"}, "filename": {"type": "string"}, "file_id": {"type": "string"}, "file_data": {"type": "string"}, "idx": {"type": "number", "format": "double"}, "audio_data": {"type": "string"}, "image_url": {"type": "string"}, "timestamp": {"type": "string"}, "tool_call_id": {"type": "string"}, "tool_calls": {"items": {"$ref": "#/components/schemas/FunctionCall"}, "type": "array"}, "text": {"type": "string"}, "type": {"type": "string", "enum": ["input_image", "input_text", "input_file"]}, "name": {"type": "string"}, "role": {"type": "string", "enum": ["user", "assistant", "system", "developer"]}, "id": {"type": "string"}, "_type": {"type": "string", "enum": ["functionCall", "function", "image", "text", "file", "contentArray"]}}, "required": ["type", "role", "_type"], "type": "object"},
  "ResultError_string_": {"properties": {"data": {"type": "number", "enum": [null], "nullable": true}, "error": {"type": "string"}}, "required": ["data", "error"], "type": "object", "additionalProperties": false},
  "SortDirection": {"type": "string", "enum": ["asc", "desc"]},
  "SvcEventData": {"properties": {"_type": {"type": "string", "enum": ["data"], "nullable": false}, "name": {"type": "string"}, "meta": {"$ref": "#/components/schemas/Record_string.any_"}}, "required": ["_type", "name"], "type": "object", "additionalProperties": {}},
  "SvcEventTool": {"properties": {"_type": {"type": "string", "enum": ["tool"], "nullable": false}, "toolName": {"type": "string"}, "input": {}}, "required": ["_type", "toolName", "input"], "type": "object", "additionalProperties": {}},
  "SvcEventVectorDB": {"properties": {"_type": {"type": "string", "enum": ["vector_db"], "nullable": false}, "operation": {"type": "string", "enum": ["search", "insert", "delete", "update"]}, "text": {"type": "string"}, "vector": {"items": {"type": "number", "format": "double"}, "type": "array"}, "topK": {"type": "number", "format": "double"}, "filter": {"additionalProperties": false, "type": "object"}, "databaseName": {"type": "string"}}, "required": ["_type", "operation"], "type": "object", "additionalProperties": {}},
  "SvcRequest": {"properties": {"response_id": {"type": "string", "nullable": true}, "response_created_at": {"type": "string", "nullable": true}, "response_body": {}, "response_status": {"type": "number", "format": "double"}, "response_model": {"type": "string", "nullable": true}, "request_id": {"type": "string"}, "request_created_at": {"type": "string"}, "request_body": {}, "request_path": {"type": "string"}, "request_user_id": {"type": "string", "nullable": true}, "request_properties": {"allOf": [{"$ref": "#/components/schemas/Record_string.string_"}], "nullable": true}, "request_model": {"type": "string", "nullable": true}, "model_override": {"type": "string", "nullable": true}, "svc_user": {"type": "string", "nullable": true}, "provider": {"$ref": "#/components/schemas/Provider"}, "delay_ms": {"type": "number", "format": "double", "nullable": true}, "time_to_first_token": {"type": "number", "format": "double", "nullable": true}, "total_tokens": {"type": "number", "format": "double", "nullable": true}, "prompt_tokens": {"type": "number", "format": "double", "nullable": true}, "prompt_cache_write_tokens": {"type": "number", "format": "double", "nullable": true}, "prompt_cache_read_tokens": {"type": "number", "format": "double", "nullable": true}, "completion_tokens": {"type": "number", "format": "double", "nullable": true}, "reasoning_tokens": {"type": "number", "format": "double", "nullable": true}, "prompt_audio_tokens": {"type": "number", "format": "double", "nullable": true}, "completion_audio_tokens": {"type": "number", "format": "double", "nullable": true}, "cost": {"type": "number", "format": "double", "nullable": true}, "prompt_id": {"type": "string", "nullable": true}, "prompt_version": {"type": "string", "nullable": true}, "feedback_created_at": {"type": "string", "nullable": true}, "feedback_id": {"type": "string", "nullable": true}, "feedback_rating": {"type": "boolean", "nullable": true}, "signed_body_url": {"type": "string", "nullable": true}, "llmSchema": {"allOf": [{"$ref": "#/components/schemas/LlmSchema"}], "nullable": true}, "country_code": {"type": "string", "nullable": true}, "asset_ids": {"items": {"type": "string"}, "type": "array", "nullable": true}, "asset_urls": {"allOf": [{"$ref": "#/components/schemas/Record_string.string_"}], "nullable": true}, "scores": {"allOf": [{"$ref": "#/components/schemas/Record_string.number_"}], "nullable": true}, "costUSD": {"type": "number", "format": "double", "nullable": true}, "properties": {"$ref": "#/components/schemas/Record_string.string_"}, "assets": {"items": {"type": "string"}, "type": "array"}, "target_url": {"type": "string"}, "model": {"type": "string"}, "cache_reference_id": {"type": "string", "nullable": true}, "cache_enabled": {"type": "boolean"}, "updated_at": {"type": "string"}, "request_referrer": {"type": "string", "nullable": true}, "ai_gateway_body_mapping": {"type": "string", "nullable": true}, "storage_location": {"type": "string"}}, "required": ["response_id", "response_created_at", "response_status", "response_model", "request_id", "request_created_at", "request_body", "request_path", "request_user_id", "request_properties", "request_model", "model_override", "svc_user", "provider", "delay_ms", "time_to_first_token", "total_tokens", "prompt_tokens", "prompt_cache_write_tokens", "prompt_cache_read_tokens", "completion_tokens", "reasoning_tokens", "prompt_audio_tokens", "completion_audio_tokens", "cost", "prompt_id", "prompt_version", "llmSchema", "country_code", "asset_ids", "asset_urls", "scores", "properties", "assets", "target_url", "model", "cache_reference_id", "cache_enabled", "ai_gateway_body_mapping"], "type": "object", "additionalProperties": false},
  "Tool": {"properties": {"name": {"type": "string"}, "description": {"type": "string"}, "parameters": {"$ref": "#/components/schemas/Record_string.any_"}, "strict": {"type": "boolean"}}, "required": ["name"], "type": "object", "additionalProperties": false},
};

/**
 * The reserved `svc-` names of `SvcRequest.properties` / `request_properties`: what the gateway did
 * or learned that the reference shape has no member for (admin/resources/requests/svc-request.ts).
 */
export const SVC_PROPERTIES: Record<string, string> = {
  'svc-attempts': 'JSON array of every provider attempt: {provider, status, latencyMs, error?}; the last one answered.',
  'svc-token-limit-handler': 'The Svc-Token-Limit-Exception-Handler applied (with -tokens-before, -tokens-after, -model-sent, -skipped).',
  'svc-client-closed': '"true" when the client closed the connection before the answer ended.',
  'svc-tokens-source': '"provider" when the provider reported usage, "estimated" when the gateway counted some of the tokens: all of them, or, for a stream the client left before its end (499), the completion streamed so far (the prompt then the provider\'s count when it had reported one).',
  'svc-endpoint': 'The endpoint kind the client called: chat, embeddings, messages (Anthropic Messages) or responses.',
  'svc-session-id':
    "The request's session: the Svc-Session-Id header, else the client's own (Claude Code's x-claude-code-session-id, Codex's session id); filter with sessions_request_response_rmt.session_session_id or request_response_rmt.session_id, list with POST /v1/session/query.",
  'svc-session-path': "The request's Svc-Session-Path: its place in the session, a /-separated trace path such as /plan/search.",
  'svc-session-name': "The request's Svc-Session-Name.",
  'svc-cost-note':
    'Why cost is null although tokens were counted: "unknown model price: …" (the model table has the model without a price), "unknown model: …", "usage inconsistent: …" or "usage incomplete: …". Absent when cost is known.',
  'svc-removed-members': 'JSON array of the request members a translator removed for the provider (e.g. "context_management", "system[1].cache_control").',
  'svc-wire-format': "The provider's wire format (anthropic-messages, openai-chat, bedrock-converse, …).",
  'svc-cache-write-1h-tokens': "The part of prompt_cache_write_tokens written with Anthropic's 1-hour TTL (priced at the 1-hour write price).",
};

/** `Session`: a session's figures (POST /v1/session/query), the head of `SessionDetail`. */
const SESSION_SCHEMA: Schema = {
  type: 'object',
  description: "A session's figures over all of its requests (in or out of the query's time range).",
  properties: {
    session_id: { type: 'string', description: 'Svc-Session-Id, else the client\'s own session id (Claude Code, Codex).' },
    session_name: { type: 'string', nullable: true, description: 'The newest Svc-Session-Name its requests were sent with; null when none sent one.' },
    first_request_at: isoTime('When its first request was made.'),
    last_request_at: isoTime('When its last request was made.'),
    request_count: int,
    prompt_tokens: int,
    completion_tokens: int,
    total_tokens: int,
    cost: { ...num, description: 'USD; requests without a known cost count 0.' },
    errors: { type: 'integer', description: 'Requests answered with a status >= 400 or none (0).' },
  },
  required: ['session_id', 'session_name', 'first_request_at', 'last_request_at', 'request_count', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost', 'errors'],
  additionalProperties: false,
};

/** Component schemas of this API beyond the reference. */
const OWN_SCHEMAS: Record<string, Schema> = {
  FilterLeaf: {
    type: 'object',
    description:
      'Conditions on the request (request, response, request_response_rmt, properties), on the prompt version it was made with, on its coding session and on its user feedback; all AND together. `{}` matches all. A missing value (NULL, an absent property, a request without feedback) matches only not-equals and not-contains; boolean fields have only equals, so a missing value matches neither {equals: true} nor {equals: false}.',
    properties: {
      request: ref('Partial_RequestTableToOperators_'),
      response: ref('ResponseFilter'),
      request_response_rmt: ref('RequestResponseRmtFilter'),
      properties: ref('PropertyFilter'),
      prompts_versions: ref('Partial_PromptVersionsToOperators_'),
      sessions_request_response_rmt: ref('SessionFilter'),
      feedback: ref('FeedbackFilter'),
    },
    additionalProperties: false,
  },
  FeedbackFilter: {
    type: 'object',
    description:
      "The reference's Partial_FeedbackTableToOperators_ on the request's user feedback (POST /v1/request/{requestId}/feedback; at most one per request): rating (true: thumbs up, false: thumbs down), created_at (when it was last given) and id. id is a UUID here (text operators, as shown in feedback_id), not the reference's number. The reference's response_id is not accepted (400): feedback is stored per request, and no response id is stored apart from the provider's body; filter the request with request_response_rmt.request_id. A request without feedback matches only id not-equals / not-contains.",
    properties: {
      id: { allOf: [ref('Partial_TextOperators_')], description: 'The feedback id (a UUID; feedback_id of a request).' },
      created_at: ref('Partial_TimestampOperators_'),
      rating: ref('Partial_BooleanOperators_'),
    },
    additionalProperties: false,
  },
  PropertyFilter: {
    type: 'object',
    description: "Property name (a caller's Svc-Property-<name>, 1–1000 characters; names have no case, as header names: Env finds env) → text operators. The reserved svc- names shown in a request's properties are derived when read and are not matched here.",
    properties: {},
    additionalProperties: ref('Partial_TextOperators_'),
  },
  ResponseFilter: {
    type: 'object',
    description: "The reference's Partial_ResponseTableToOperators_, of which status (the HTTP status answered) and model (the model the provider answered with) are stored.",
    properties: { status: ref('Partial_NumberOperators_'), model: ref('Partial_TextOperators_') },
    additionalProperties: false,
  },
  RequestResponseRmtFilter: {
    type: 'object',
    description:
      "The reference's Partial_RequestResponseRMTToOperators_, the fields the request log stores. model is the requested model without the provider prefix (as request.model); latency and time_to_first_token are ms, cost USD; properties as the leaf's properties. cache_enabled, cached and cache_reference_id read the response cache: a request that asked for it, a hit (answered from the cache; as the isCached flag), and the request a hit was served from.",
    properties: {
      provider: {
        allOf: [ref('Partial_TextOperators_')],
        description:
          "The provider as a request shows it (the reference's ProviderName: OPENAI, X for xai, LOCAL for ollama, GOOGLE for gemini) or its config name (openai, xai); every operator ignores case.",
      },
      model: ref('Partial_TextOperators_'),
      user_id: ref('Partial_TextOperators_'),
      status: ref('Partial_NumberOperators_'),
      latency: ref('Partial_NumberOperators_'),
      time_to_first_token: ref('Partial_NumberOperators_'),
      cost: ref('Partial_NumberOperators_'),
      prompt_tokens: ref('Partial_NumberOperators_'),
      completion_tokens: ref('Partial_NumberOperators_'),
      total_tokens: ref('Partial_NumberOperators_'),
      prompt_cache_read_tokens: ref('Partial_NumberOperators_'),
      prompt_cache_write_tokens: ref('Partial_NumberOperators_'),
      request_created_at: ref('Partial_TimestampOperators_'),
      response_created_at: ref('Partial_TimestampOperators_'),
      updated_at: { allOf: [ref('Partial_TimestampOperators_')], description: 'When admin stored the request (the ingestion order; a request is stored when it ends, so a long one has an old request_created_at and a new updated_at).' },
      request_id: ref('Partial_TextOperators_'),
      target_url: ref('Partial_TextOperators_'),
      prompt_id: ref('Partial_TextOperators_'),
      prompt_version: ref('Partial_TextOperators_'),
      session_id: { allOf: [ref('Partial_TextOperators_')], description: 'The request\'s session id (as sessions_request_response_rmt.session_session_id).' },
      cache_enabled: { allOf: [ref('Partial_BooleanOperators_')], description: 'The request asked for the response cache (Svc-Cache-Enabled: true), hit or miss.' },
      cached: { allOf: [ref('Partial_BooleanOperators_')], description: 'A response-cache hit: answered from the cache, cache_reference_id set (the isCached flag of /v1/request/query).' },
      cache_reference_id: { allOf: [ref('Partial_TextOperators_')], description: 'A hit: the id of the request whose stored answer was served; null (matching only not-equals / not-contains) for every other request.' },
      properties: ref('PropertyFilter'),
    },
    additionalProperties: false,
  },
  SessionFilter: {
    type: 'object',
    description:
      "The reference's Partial_SessionsRequestResponseRMTToOperators_, of which session_session_id and session_session_name are stored: the request's session (Svc-Session-Id, else Claude Code's x-claude-code-session-id or Codex's session id) and the Svc-Session-Name it was sent with, so `{sessions_request_response_rmt: {session_session_id: {equals: \"<id>\"}}}` finds one session's requests.",
    properties: { session_session_id: ref('Partial_TextOperators_'), session_session_name: ref('Partial_TextOperators_') },
    additionalProperties: false,
  },
  FilterBranch: {
    type: 'object',
    properties: { left: ref('FilterNode'), operator: { type: 'string', enum: ['and', 'or'] }, right: ref('FilterNode') },
    required: ['left', 'operator', 'right'],
    additionalProperties: false,
  },
  FilterNode: {
    description: 'A filter tree: "all", a leaf, or a branch; at most 32 branches deep, 1000 conditions.',
    anyOf: [{ type: 'string', enum: ['all'] }, ref('FilterLeaf'), ref('FilterBranch')],
  },
  SortLeafRequest: {
    type: 'object',
    properties: {
      random: { type: 'boolean', enum: [true] },
      created_at: ref('SortDirection'),
      latency: ref('SortDirection'),
      total_tokens: ref('SortDirection'),
      completion_tokens: ref('SortDirection'),
      prompt_tokens: ref('SortDirection'),
      user_id: ref('SortDirection'),
      body_model: ref('SortDirection'),
      request_prompt: ref('SortDirection'),
      cost: ref('SortDirection'),
      time_to_first_token: ref('SortDirection'),
    },
    additionalProperties: false,
  },
  RequestQueryParams: {
    type: 'object',
    properties: {
      filter: ref('FilterNode'),
      offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
      sort: ref('SortLeafRequest'),
      before: ref('RequestCursor'),
      isScored: { type: 'boolean' },
      isPartOfExperiment: { type: 'boolean' },
      isCached: { type: 'boolean', description: 'true: response-cache hits only (answered from the cache, cache_reference_id set); false: every other request.' },
      includeInputs: { type: 'boolean', description: 'accepted and ignored; see GET /v1/request/{requestId}/inputs.' },
      bodies: {
        type: 'boolean',
        default: true,
        description:
          'Extension (not in the reference API). false: the same rows in the same shape with request_body, response_body, llmSchema and response_id null, the bodies neither read nor measured, so the page is never refused (413) for their size; read one request whole with GET /v1/request/{requestId}.',
      },
    },
    required: ['filter'],
    additionalProperties: false,
  },
  RequestCursor: {
    type: 'object',
    description:
      'Keyset paging: the last row of the previous page (its request_created_at and request_id, as shown: times are stored to the millisecond); the answer holds the rows strictly after it in the default order (created_at desc, id desc), served by an index at any depth. Not with offset or sort (400 naming before).',
    properties: { created_at: isoTime('ISO-8601 date-time'), request_id: { type: 'string', format: 'uuid' } },
    required: ['created_at', 'request_id'],
    additionalProperties: false,
  },
  RequestCountParams: {
    type: 'object',
    properties: {
      filter: ref('FilterNode'),
      isScored: { type: 'boolean' },
      isPartOfExperiment: { type: 'boolean' },
      isCached: { type: 'boolean', description: 'true: response-cache hits only (answered from the cache, cache_reference_id set); false: every other request.' },
      includeInputs: { type: 'boolean', description: 'accepted and ignored.' },
    },
    required: ['filter'],
    additionalProperties: false,
  },
  DashboardQueryParams: {
    type: 'object',
    properties: {
      filter: { allOf: [ref('FilterNode')], description: 'default "all"' },
      timeRange: {
        type: 'object',
        description: 'start inclusive, end exclusive; end after start; at most 366 days.',
        properties: { start: isoTime('ISO-8601 date or date-time'), end: isoTime('ISO-8601 date or date-time') },
        required: ['start', 'end'],
        additionalProperties: false,
      },
      bucket: {
        type: 'string',
        enum: ['minute', 'hour', 'day'],
        description: 'Width of the series buckets, aligned to UTC; default the narrowest giving at most 200 buckets (day beyond 200 hours). At most 2000 buckets over the range (else 400 naming bucket).',
      },
    },
    required: ['timeRange'],
    additionalProperties: false,
  },
  DashboardTotals: {
    type: 'object',
    properties: {
      requests: int,
      errors: { type: 'integer', description: 'Requests answered with a status >= 400 or none (0).' },
      promptTokens: int,
      completionTokens: int,
      costUsd: { ...num, description: 'USD; requests without a known cost count 0.' },
      latencyP50Ms: nullableNum('Median latency (ms, percentile_cont) of the requests with one; null when none.'),
      latencyP95Ms: nullableNum('95th percentile latency (ms).'),
      ttftP50Ms: nullableNum('Median time to first token (ms) of the requests with one; null when none.'),
      ttftP95Ms: nullableNum('95th percentile time to first token (ms).'),
    },
    required: ['requests', 'errors', 'promptTokens', 'completionTokens', 'costUsd', 'latencyP50Ms', 'latencyP95Ms', 'ttftP50Ms', 'ttftP95Ms'],
    additionalProperties: false,
  },
  DashboardPoint: {
    type: 'object',
    properties: {
      time: isoTime('Start of the bucket (UTC-aligned).'),
      requests: int,
      errors: int,
      promptTokens: int,
      completionTokens: int,
      costUsd: num,
      latencyP50Ms: nullableNum('ms; null when the bucket has no request with a latency.'),
      latencyP95Ms: nullableNum('ms'),
      ttftP50Ms: nullableNum('ms'),
    },
    required: ['time', 'requests', 'errors', 'promptTokens', 'completionTokens', 'costUsd', 'latencyP50Ms', 'latencyP95Ms', 'ttftP50Ms'],
    additionalProperties: false,
  },
  DashboardBreakdownRow: {
    type: 'object',
    properties: {
      key: { type: 'string', nullable: true, description: 'The model (as requested, without the provider prefix), provider, API key id or user id; null for the requests without one.' },
      label: { type: 'string', nullable: true, description: "apiKey only: the key's name (null when the request had no key)." },
      requests: int,
      errors: int,
      promptTokens: int,
      completionTokens: int,
      costUsd: num,
      latencyP50Ms: nullableNum('ms'),
    },
    required: ['key', 'requests', 'errors', 'promptTokens', 'completionTokens', 'costUsd', 'latencyP50Ms'],
    additionalProperties: false,
  },
  Dashboard: {
    type: 'object',
    properties: {
      totals: ref('DashboardTotals'),
      series: { ...arrayOf(ref('DashboardPoint')), description: 'Every bucket from the one holding start to the one holding the last instant before end, oldest first; zeros and null percentiles where empty.' },
      breakdowns: {
        type: 'object',
        description: 'Each the top 20 groups by requests (then by key).',
        properties: { model: arrayOf(ref('DashboardBreakdownRow')), provider: arrayOf(ref('DashboardBreakdownRow')), apiKey: arrayOf(ref('DashboardBreakdownRow')), user: arrayOf(ref('DashboardBreakdownRow')) },
        required: ['model', 'provider', 'apiKey', 'user'],
        additionalProperties: false,
      },
    },
    required: ['totals', 'series', 'breakdowns'],
    additionalProperties: false,
  },
  NewestDatasetParams: {
    type: 'object',
    properties: {
      datasetName: { type: 'string', minLength: 1, maxLength: 200 },
      filter: ref('FilterNode'),
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000 },
    },
    required: ['datasetName', 'filter'],
    additionalProperties: false,
  },
  CreatedDataset: {
    type: 'object',
    properties: { datasetId: str, rows: { type: 'integer', description: 'How many requests the dataset holds.' } },
    required: ['datasetId', 'rows'],
    additionalProperties: false,
  },
  RandomDatasetParams: {
    type: 'object',
    properties: {
      datasetName: { type: 'string', minLength: 1, maxLength: 1000 },
      filter: ref('FilterNode'),
      offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
    },
    required: ['datasetName', 'filter'],
    additionalProperties: false,
  },
  RequestInputs: {
    type: 'object',
    nullable: true,
    properties: { inputs: ref('Record_string.any_'), prompt_id: str, version_id: str, environment: { type: 'string', nullable: true } },
    required: ['inputs', 'prompt_id', 'version_id', 'environment'],
    additionalProperties: false,
  },
  DatasetRow: {
    type: 'object',
    properties: { request_id: str, position: int, created_at: str, request_body: {}, response_body: {} },
    required: ['request_id', 'position', 'created_at', 'request_body', 'response_body'],
    additionalProperties: false,
  },
  DatasetId: { type: 'object', properties: { datasetId: str }, required: ['datasetId'], additionalProperties: false },
  AddDatasetRequestsParams: {
    type: 'object',
    properties: {
      requestIds: {
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: { type: 'string', format: 'uuid' },
        description: 'Request ids of the organization, appended in this order; more than 1000 is a 413.',
      },
    },
    required: ['requestIds'],
    additionalProperties: false,
  },
  DatasetRequestsAdded: {
    type: 'object',
    properties: {
      added: { type: 'integer', description: 'Rows appended.' },
      skipped: { type: 'integer', description: 'Ids already in the dataset or repeated in the list.' },
      rows: { type: 'integer', description: 'How many requests the dataset now holds.' },
    },
    required: ['added', 'skipped', 'rows'],
    additionalProperties: false,
  },
  RenameDatasetParams: {
    type: 'object',
    properties: { datasetName: { type: 'string', minLength: 1, maxLength: 200 } },
    required: ['datasetName'],
    additionalProperties: false,
  },
  DatasetExportLine: {
    type: 'object',
    description: 'One line of a dataset export (application/x-ndjson): a row of the dataset with its request.',
    properties: {
      request_id: str,
      position: int,
      created_at: isoTime('When the request was made.'),
      provider: { type: 'string', description: "The gateway's provider name (openai, anthropic, …)." },
      model: { type: 'string', nullable: true, description: 'The requested model, without the provider prefix.' },
      response_model: { type: 'string', nullable: true, description: 'The model the provider answered with.' },
      status: int,
      request_body: {},
      response_body: {},
      prompt_inputs: { allOf: [ref('Record_string.any_')], nullable: true, description: 'Managed-prompt inputs; null without a managed prompt.' },
      prompt_version_id: { type: 'string', nullable: true },
      scores: { allOf: [ref('Record_string.number_')], description: 'Score name → value (a boolean score as 1 or 0); {} without scores.' },
    },
    required: ['request_id', 'position', 'created_at', 'provider', 'model', 'response_model', 'status', 'request_body', 'response_body', 'prompt_inputs', 'prompt_version_id', 'scores'],
    additionalProperties: false,
  },
  VersionId: { type: 'object', properties: { id: str }, required: ['id'], additionalProperties: false },
  ApiKey: {
    type: 'object',
    properties: {
      id: str,
      name: str,
      prefix: str,
      created_at: str,
      last_used_at: {
        type: 'string',
        nullable: true,
        description: 'When the key last authenticated a request, through a proxy or this API (ISO-8601; null: never). Written within seconds of a first use, then at most once a minute.',
      },
      revoked: { type: 'boolean' },
      revoked_at: { type: 'string', nullable: true, description: 'When the key was revoked (ISO-8601; null: live).' },
    },
    required: ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked', 'revoked_at'],
    additionalProperties: false,
  },
  CreatedApiKey: {
    type: 'object',
    description: 'The key itself is shown once, here.',
    properties: { id: str, key: str, name: str, prefix: str, created_at: str },
    required: ['id', 'key', 'name', 'prefix', 'created_at'],
    additionalProperties: false,
  },
  SessionQueryParams: {
    type: 'object',
    properties: {
      timeFilter: {
        type: 'object',
        description: 'Epoch ms, start inclusive, end exclusive (end after start, else 400 naming timeFilter.endTimeUnixMs). A session is listed when at least one of its requests was made in the range; absent: all time.',
        properties: { startTimeUnixMs: epochMs, endTimeUnixMs: epochMs },
        required: ['startTimeUnixMs', 'endTimeUnixMs'],
        additionalProperties: false,
      },
      filter: { allOf: [ref('FilterNode')], description: 'default "all": a session is listed when at least one of its requests in the range matches.' },
      offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
    },
    additionalProperties: false,
  },
  SessionRequest: {
    type: 'object',
    description: 'One request of a session (its bodies: GET /v1/request/{requestId}).',
    properties: {
      request_id: str,
      request_created_at: isoTime('When the request was made.'),
      session_path: { type: 'string', nullable: true, description: 'Its Svc-Session-Path (a /-separated trace path such as /plan/search); null when not sent.' },
      session_name: { type: 'string', nullable: true, description: 'Its Svc-Session-Name; null when not sent.' },
      request_path: { type: 'string', description: "The gateway path called (/v1/chat/completions, /v1/messages, /v1/responses, …)." },
      provider: str,
      model: { type: 'string', nullable: true, description: 'The requested model, without the provider prefix.' },
      user_id: { type: 'string', nullable: true },
      status: int,
      latency_ms: nullableNum('ms'),
      prompt_tokens: { type: 'integer', nullable: true },
      completion_tokens: { type: 'integer', nullable: true },
      total_tokens: { type: 'integer', nullable: true },
      cost: nullableNum('USD; null when unknown.'),
    },
    required: ['request_id', 'request_created_at', 'session_path', 'session_name', 'request_path', 'provider', 'model', 'user_id', 'status', 'latency_ms', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'],
    additionalProperties: false,
  },
  Session: SESSION_SCHEMA,
  SessionDetail: {
    ...SESSION_SCHEMA,
    description: "A session's figures and one page of its requests in time order (created_at, then request_id).",
    properties: { ...(SESSION_SCHEMA.properties as Record<string, Schema>), requests: arrayOf(ref('SessionRequest')) },
    required: [...(SESSION_SCHEMA.required as string[]), 'requests'],
  },
  Health: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] },
};

type Method = 'get' | 'post' | 'delete' | 'patch';
interface OperationSpec {
  id: string;
  tag: string;
  summary: string;
  params?: string[];
  /** Schemas of path parameters that are not UUIDs (default `{type: string, format: uuid}`). */
  paramSchemas?: Record<string, Schema>;
  /** Query parameters: name → schema (with its description). */
  query?: Record<string, Schema>;
  body?: Schema;
  /** Schema of the 200 body. */
  ok: Schema;
  /** Media type of the 200 body (default application/json); errors are JSON envelopes whatever it is. */
  okType?: string;
  /**
   * Extra error statuses beyond 401/503, 400/413 with a body, 400 with query parameters (each is
   * validated) and 404 with path parameters.
   */
  errors?: number[];
  /** The route answers an unknown path parameter with data (not 404), so 404 is not documented. */
  neverNotFound?: true;
  open?: boolean;
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid body or value (the message names the field path)',
  401: 'Missing, malformed, unknown or revoked API key',
  404: 'Unknown id (ids of other organizations included)',
  409: 'Conflict',
  413: 'Body too large',
  503: 'Database unavailable',
};

function operation(spec: OperationSpec): Schema {
  const statuses = new Set<number>(spec.open ? [503] : [401, 503]);
  if (spec.body) [400, 413].forEach((s) => statuses.add(s));
  if (spec.query && Object.keys(spec.query).length > 0) statuses.add(400);
  if (spec.params?.length && !spec.neverNotFound) statuses.add(404);
  for (const s of spec.errors ?? []) statuses.add(s);
  const responses: Record<string, unknown> = { 200: { description: 'Ok', content: { [spec.okType ?? 'application/json']: { schema: spec.ok } } } };
  for (const s of [...statuses].sort()) {
    responses[String(s)] = { description: ERROR_TEXT[s] ?? 'Error', content: { 'application/json': { schema: ref('ResultError_string_') } } };
  }
  return {
    operationId: spec.id,
    summary: spec.summary,
    tags: [spec.tag],
    ...(spec.open ? { security: [] } : { security: [{ api_key: [] }] }),
    parameters: [
      ...(spec.params ?? []).map((name) => ({ in: 'path', name, required: true, schema: spec.paramSchemas?.[name] ?? { type: 'string', format: 'uuid' } })),
      ...Object.entries(spec.query ?? {}).map(([name, schema]) => ({ in: 'query', name, required: false, schema })),
    ],
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } } : {}),
    responses,
  };
}

const obj = (properties: Record<string, Schema>, required: string[], additionalProperties = true): Schema => ({
  type: 'object',
  properties,
  required,
  ...(additionalProperties ? {} : { additionalProperties: false }),
});

/** The documented operations: path → method → spec. Paths use OpenAPI `{param}` syntax. */
const OPERATIONS: Record<string, Partial<Record<Method, OperationSpec>>> = {
  '/health': { get: { id: 'Health', tag: 'Health', summary: 'Liveness and control-plane status (no key needed).', ok: ref('Health'), open: true } },
  '/v1/openapi.json': { get: { id: 'GetOpenApi', tag: 'Meta', summary: 'This document (bare, not enveloped; no key needed).', ok: { type: 'object' }, open: true } },
  '/v1/api-keys': {
    get: {
      id: 'ListApiKeys',
      tag: 'ApiKey',
      summary: 'API keys of the organization, oldest first (never the key): the live ones, and with includeRevoked=true the revoked ones too.',
      query: { includeRevoked: { type: 'string', enum: ['true', 'false'], default: 'false', description: 'true lists revoked keys too (revoked: true, revoked_at set); another value is a 400.' } },
      ok: envelope(arrayOf(ref('ApiKey'))),
    },
    post: { id: 'CreateApiKey', tag: 'ApiKey', summary: 'Creates an API key; the key is returned once.', body: obj({ name: { type: 'string', minLength: 1, maxLength: 200 } }, ['name'], false), ok: envelope(ref('CreatedApiKey')) },
  },
  '/v1/api-keys/{id}': { delete: { id: 'RevokeApiKey', tag: 'ApiKey', summary: 'Revokes a live API key (404 when unknown or already revoked).', params: ['id'], ok: envelope(nullValue) } },
  '/v1/request/{requestId}': {
    get: {
      id: 'GetRequestById',
      tag: 'Request',
      summary:
        'One logged request (chat completions, embeddings or Anthropic Messages). `cost` is null with properties["svc-cost-note"] saying why when the model has no price; the other svc- properties are listed in the API description.',
      params: ['requestId'],
      ok: envelope(ref('SvcRequest')),
    },
  },
  '/v1/request/{requestId}/feedback': {
    post: {
      id: 'FeedbackRequest',
      tag: 'Request',
      summary:
        "Records a user's thumbs up (rating true) or down (false) on a request, shown as its feedback_id, feedback_rating and feedback_created_at; repeating it replaces the rating and its time (the id stays). 404 for an unknown request or another organization's; 400 naming rating when it is not a boolean.",
      params: ['requestId'],
      body: obj({ rating: { type: 'boolean' } }, ['rating'], false),
      ok: envelope(nullValue),
    },
  },
  '/v1/session/query': {
    post: {
      id: 'QuerySessions',
      tag: 'Session',
      summary:
        'Sessions (requests grouped by Svc-Session-Id, else Claude Code\'s or Codex\'s own session id) with a request in the time range and matching the filter, newest last request first, offset/limit; each with its name, first and last time, request count, tokens, cost and errors.',
      body: ref('SessionQueryParams'),
      ok: envelope(arrayOf(ref('Session'))),
    },
  },
  '/v1/session/{sessionId}': {
    get: {
      id: 'GetSession',
      tag: 'Session',
      summary: "A session's figures and its requests in time order with their Svc-Session-Path; 404 when the organization has no request in it. Percent-encode the id in the path.",
      params: ['sessionId'],
      paramSchemas: { sessionId: { type: 'string', minLength: 1, maxLength: 256 } },
      query: {
        offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0, description: 'Requests to skip (400 naming offset when not such an integer).' },
        limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000, description: 'Most requests answered (400 naming limit when not such an integer).' },
      },
      ok: envelope(ref('SessionDetail')),
    },
  },
  '/v1/request/{requestId}/inputs': {
    get: {
      id: 'GetRequestInputs',
      tag: 'Request',
      summary: 'Prompt inputs of a request made through gateway prompt management; data null otherwise (unknown ids too, never 404).',
      params: ['requestId'],
      neverNotFound: true,
      ok: envelope(ref('RequestInputs')),
    },
  },
  '/v1/request/query': {
    post: {
      id: 'GetRequests',
      tag: 'Request',
      summary: 'Logged requests matching a filter tree, newest first by default; `before` pages by keyset (the last row of the previous page) at any depth.',
      body: ref('RequestQueryParams'),
      ok: envelope(arrayOf(ref('SvcRequest'))),
    },
  },
  '/v1/request/count': {
    post: { id: 'CountRequests', tag: 'Request', summary: 'How many logged requests match a filter tree (and the flags of /v1/request/query).', body: ref('RequestCountParams'), ok: envelope(int) },
  },
  '/v1/dashboard/query': {
    post: {
      id: 'GetDashboard',
      tag: 'Dashboard',
      summary: 'Totals, a time series (every bucket of the range) and the top-20 breakdowns by model, provider, API key and user of the requests matching a filter in a time range.',
      body: ref('DashboardQueryParams'),
      ok: envelope(ref('Dashboard')),
    },
  },
  '/v1/request/{requestId}/score': {
    post: {
      id: 'AddScores',
      tag: 'Request',
      summary:
        'Stores several named scores on a request at once (a name already scored is replaced); a boolean score is stored as 1 (true) or 0 (false). 1 to 100 names of 1–256 characters. 404 for an unknown request or another organization\'s.',
      params: ['requestId'],
      body: obj({ scores: { type: 'object', additionalProperties: { oneOf: [num, { type: 'boolean' }] }, minProperties: 1, maxProperties: 100 } }, ['scores'], false),
      ok: envelope(nullValue),
    },
  },
  '/v1/evals/{requestId}': {
    post: {
      id: 'AddEval',
      tag: 'Evals',
      summary: 'Stores a named score on a request (same name replaces).',
      params: ['requestId'],
      body: obj({ score: num, name: { type: 'string', minLength: 1, maxLength: 256 } }, ['score', 'name']),
      ok: envelope(nullValue),
    },
  },
  '/v1/prompt/create': {
    post: {
      id: 'CreatePrompt',
      tag: 'Prompt',
      summary: 'Creates a legacy prompt and its version 1.0, marked production.',
      body: obj(
        {
          userDefinedId: { type: 'string', minLength: 1, maxLength: 256 },
          prompt: { type: 'object', description: 'A chat request: {model?, messages: [{role, ...}], ...}', properties: { model: str, messages: arrayOf({ type: 'object', properties: { role: str }, required: ['role'] }) }, required: ['messages'] },
          metadata: ref('Record_string.any_'),
        },
        ['userDefinedId', 'prompt', 'metadata'],
      ),
      ok: envelope(ref('CreatePromptResponse')),
      errors: [409],
    },
  },
  '/v1/prompt/version/{promptVersionId}/promote': {
    post: {
      id: 'PromotePromptVersionToProduction',
      tag: 'Prompt',
      summary: 'Moves the production mark from the previous version (same prompt, else 400) to this one.',
      params: ['promptVersionId'],
      body: obj({ previousProductionVersionId: str }, ['previousProductionVersionId']),
      ok: envelope(ref('PromptVersionResult')),
    },
  },
  '/v1/prompt-2025': {
    post: {
      id: 'CreatePrompt2025',
      tag: 'Prompt2025',
      summary: 'Creates a prompt whose version 0.0 is labelled production. Bare response.',
      body: obj({ name: { type: 'string', minLength: 1, maxLength: 1000 }, tags: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 256 } }, promptBody: ref('OpenAIChatRequest') }, ['name', 'tags', 'promptBody']),
      ok: ref('PromptCreateResponse'),
    },
  },
  '/v1/prompt-2025/id/{promptId}': { get: { id: 'GetPrompt2025', tag: 'Prompt2025', summary: 'One prompt. Bare response.', params: ['promptId'], ok: ref('Prompt2025') } },
  '/v1/prompt-2025/update': {
    post: {
      id: 'UpdatePrompt2025',
      tag: 'Prompt2025',
      summary: 'New version from a base version of the prompt (new major: highest + 1; new minor: highest of the base major + 1). Bare response.',
      body: obj(
        {
          promptId: str,
          promptVersionId: str,
          newMajorVersion: { type: 'boolean' },
          environment: { type: 'string', minLength: 1, maxLength: 100 },
          commitMessage: { type: 'string', maxLength: 10_000 },
          promptBody: ref('OpenAIChatRequest'),
        },
        ['promptId', 'promptVersionId', 'newMajorVersion', 'commitMessage', 'promptBody'],
      ),
      ok: ref('VersionId'),
      errors: [404],
    },
  },
  '/v1/prompt-2025/promote': {
    post: {
      id: 'PromotePrompt2025Version',
      tag: 'Prompt2025',
      summary: "Moves an environment's label onto an existing version of the prompt (production also sets the prompt's production version). Bare response.",
      body: obj({ promptId: str, promptVersionId: str, environment: { type: 'string', minLength: 1, maxLength: 100 } }, ['promptId', 'promptVersionId', 'environment']),
      ok: ref('VersionId'),
      errors: [404],
    },
  },
  '/v1/prompt-2025/{promptId}': {
    delete: { id: 'DeletePrompt2025', tag: 'Prompt2025', summary: 'Deletes the prompt, its versions and their input records. Answers the JSON value null.', params: ['promptId'], ok: nullValue },
  },
  '/v1/prompt-2025/query': {
    post: {
      id: 'GetPrompts2025',
      tag: 'Prompt2025',
      summary: 'Lists prompts, newest first: `search` matches the name or a tag (case-insensitive substring), `tagsFilter` requires all its tags; `page` is 0-based. Bare response.',
      body: obj(
        {
          search: { type: 'string', maxLength: 1000 },
          tagsFilter: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 256 } },
          page: { type: 'integer', minimum: 0, maximum: 1_000_000 },
          pageSize: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        },
        [],
      ),
      ok: arrayOf(ref('Prompt2025')),
    },
  },
  '/v1/prompt-2025/query/versions': {
    post: {
      id: 'GetPrompt2025Versions',
      tag: 'Prompt2025',
      summary: 'Versions of a prompt (of one major version when given), highest first. Bare response.',
      body: obj({ promptId: str, majorVersion: { type: 'integer', minimum: 0, maximum: 2_147_483_647 } }, ['promptId']),
      ok: arrayOf(ref('Prompt2025Version')),
      errors: [404],
    },
  },
  '/v1/prompt-2025/query/environment-version': {
    post: {
      id: 'GetPrompt2025EnvironmentVersion',
      tag: 'Prompt2025',
      summary: 'The version an environment label points at. Bare response.',
      body: obj({ promptId: str, environment: { type: 'string', minLength: 1, maxLength: 100 } }, ['promptId', 'environment']),
      ok: ref('Prompt2025Version'),
      errors: [404],
    },
  },
  '/v1/prompt-2025/{promptVersionId}/prompt-body': {
    get: { id: 'GetPrompt2025VersionBody', tag: 'Prompt2025', summary: "A version's chat body. Bare response.", params: ['promptVersionId'], ok: ref('Prompt2025VersionPromptBody') },
  },
  '/v1/experiment/dataset': {
    post: {
      id: 'AddDatasetFromFilter',
      tag: 'Dataset',
      summary: 'A new dataset of the newest requests matching a filter (limit: default 1000, at most 10,000; position 0 the newest).',
      body: ref('NewestDatasetParams'),
      ok: envelope(ref('CreatedDataset')),
    },
  },
  '/v1/experiment/dataset/random': {
    post: {
      id: 'AddRandomDataset',
      tag: 'Dataset',
      summary: 'A new dataset of the matching requests in random order (offset/limit; default 100, at most 10,000).',
      body: ref('RandomDatasetParams'),
      ok: envelope(ref('DatasetId')),
    },
  },
  '/v1/experiment/dataset/query': {
    post: {
      id: 'GetDatasets',
      tag: 'Dataset',
      summary: 'Datasets of the organization, newest first; with promptVersionId, those holding a request made with that version.',
      body: obj({ promptVersionId: str }, []),
      ok: envelope(arrayOf(ref('DatasetResult'))),
    },
  },
  '/v1/experiment/dataset/{datasetId}/inputs/query': {
    post: {
      id: 'GetDataset',
      tag: 'Dataset',
      summary:
        "A dataset's rows in order (offset/limit as GetDatasetRows; the body may be empty) as PromptInputRecord: the prompt inputs and version each row's request was made with ({} and \"\" without a managed prompt); id, source_request and dataset_row_id are the request's id; auto_prompt_inputs is always [] (none are kept).",
      params: ['datasetId'],
      body: obj({ offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 }, limit: { type: 'integer', minimum: 1, maximum: 10_000 } }, [], false),
      ok: envelope(arrayOf(ref('PromptInputRecord'))),
    },
  },
  '/v1/experiment/dataset/{datasetId}/query': {
    post: {
      id: 'GetDatasetRows',
      tag: 'Dataset',
      summary: "A dataset's rows in order (offset/limit; default 100, at most 10,000); the body may be empty.",
      params: ['datasetId'],
      body: obj({ offset: { type: 'integer', minimum: 0, maximum: 1_000_000_000 }, limit: { type: 'integer', minimum: 1, maximum: 10_000 } }, [], false),
      ok: envelope(arrayOf(ref('DatasetRow'))),
    },
  },
  '/v1/experiment/dataset/{datasetId}': {
    patch: {
      id: 'RenameDataset',
      tag: 'Dataset',
      summary: 'Renames a dataset (1–200 characters).',
      params: ['datasetId'],
      body: ref('RenameDatasetParams'),
      ok: envelope(ref('DatasetResult')),
    },
    delete: {
      id: 'DeleteDataset',
      tag: 'Dataset',
      summary: 'Deletes a dataset and its rows; the logged requests stay.',
      params: ['datasetId'],
      ok: envelope(nullValue),
    },
  },
  '/v1/experiment/dataset/{datasetId}/request': {
    post: {
      id: 'AddDatasetRequests',
      tag: 'Dataset',
      summary:
        "Appends requests to a dataset by id, in the order given (positions after the last row); ids already in it or repeated are skipped. 1–1000 ids (more: 413). All or nothing: when an id is not one of the organization's requests (unknown, or another organization's), a 404 names the ids and nothing is added.",
      params: ['datasetId'],
      body: ref('AddDatasetRequestsParams'),
      ok: envelope(ref('DatasetRequestsAdded')),
    },
  },
  '/v1/experiment/dataset/{datasetId}/request/{requestId}': {
    delete: {
      id: 'RemoveDatasetRequest',
      tag: 'Dataset',
      summary: 'Removes a request from a dataset (the logged request stays); the later rows move up, so positions stay 0..n-1. 404 when the request is not in the dataset.',
      params: ['datasetId', 'requestId'],
      ok: envelope(nullValue),
    },
  },
  '/v1/experiment/dataset/{datasetId}/export': {
    get: {
      id: 'ExportDataset',
      tag: 'Dataset',
      summary:
        "A dataset's rows as JSON Lines (application/x-ndjson, an attachment named after the dataset): one DatasetExportLine per row, in order, streamed page by page. Errors before the first line are JSON envelopes; a failure later cuts the connection. Rows removed while an export runs can make it miss a row; export again for an exact copy.",
      params: ['datasetId'],
      ok: ref('DatasetExportLine'),
      okType: 'application/x-ndjson',
    },
  },
};

/** The OpenAPI 3.0 document of this API (a fresh object each call). */
export function openApiDocument(): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    paths[path] = {};
    for (const [method, spec] of Object.entries(methods)) paths[path]![method] = operation(spec!);
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'svc-gateway admin API',
      version: '1.0.0',
      license: { name: 'MIT' },
      description:
        'Control-plane REST API. Every /v1 endpoint except this document needs `Authorization: Bearer <API key>` and is scoped to the key\'s organization. Answers use the envelope {data, error}, except prompt-2025 successes (bare payload) and this document.\n\n' +
        'A logged request\'s properties hold the caller\'s Svc-Property-* values and these reserved names:\n' +
        Object.entries(SVC_PROPERTIES)
          .map(([name, meaning]) => `- \`${name}\`: ${meaning}`)
          .join('\n'),
    },
    components: {
      securitySchemes: { api_key: { type: 'apiKey', name: 'Authorization', in: 'header', description: "Bearer token authentication. Format: 'Bearer YOUR_API_KEY'" } },
      schemas: JSON.parse(JSON.stringify({ ...REFERENCE_SCHEMAS, ...OWN_SCHEMAS })) as Record<string, Schema>,
    },
    paths,
  };
}

/** Converts a Koa route path (`/v1/request/:requestId`) to OpenAPI syntax (`/v1/request/{requestId}`). */
export function toOpenApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Registers `GET /v1/openapi.json` (the document itself, not enveloped). */
export function openApiRoutes(router: Router): void {
  const doc = JSON.stringify(openApiDocument());
  router.get('/v1/openapi.json', (ctx) => {
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = doc;
  });
}

/**
 * Checks `value` against an OpenAPI 3.0 schema of `doc` (`$ref` to `#/components/schemas/...`,
 * `type`, `nullable`, `enum`, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
 * `oneOf` (as anyOf), `allOf`, `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`; formats are ignored).
 * @returns the problems found, each `path: what` (empty when valid).
 */
export function validateSchema(doc: Schema, schema: Schema, value: unknown, path = '$'): string[] {
  const components = ((doc.components as Schema | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const check = (s: Schema, v: unknown, p: string, depth: number): string[] => {
    if (depth > 200) return [`${p}: schema nesting too deep`];
    if (typeof s.$ref === 'string') {
      const name = s.$ref.replace('#/components/schemas/', '');
      const target = components[name];
      if (!target) return [`${p}: unresolved $ref ${s.$ref}`];
      return check(target, v, p, depth + 1);
    }
    if (v === null && (s.nullable === true || (Array.isArray(s.enum) && s.enum.includes(null)) || s.type === 'null')) return [];
    if (Array.isArray(s.allOf)) {
      const errors = (s.allOf as Schema[]).flatMap((sub) => check(sub, v, p, depth + 1));
      if (errors.length) return errors;
    }
    const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) {
      const results = alternatives.map((sub) => check(sub, v, p, depth + 1));
      if (!results.some((r) => r.length === 0)) {
        const best = results.reduce((a, b) => (b.length < a.length ? b : a));
        return [`${p}: matches none of anyOf (closest: ${best.join('; ')})`];
      }
    }
    if (v === null && (s.type !== undefined || s.enum !== undefined || s.properties !== undefined)) {
      return [`${p}: null where ${String(s.type ?? 'a value')} is required`];
    }
    const errors: string[] = [];
    if (v === undefined) return [`${p}: missing`];
    switch (s.type) {
      case 'string':
        if (typeof v !== 'string') return [`${p}: expected a string, got ${JSON.stringify(v)?.slice(0, 60)}`];
        if (typeof s.minLength === 'number' && v.length < s.minLength) errors.push(`${p}: shorter than ${s.minLength}`);
        if (typeof s.maxLength === 'number' && v.length > s.maxLength) errors.push(`${p}: longer than ${s.maxLength}`);
        break;
      case 'number':
      case 'integer':
        if (typeof v !== 'number' || !Number.isFinite(v)) return [`${p}: expected a number, got ${JSON.stringify(v)?.slice(0, 60)}`];
        if (s.type === 'integer' && !Number.isInteger(v)) errors.push(`${p}: expected an integer`);
        if (typeof s.minimum === 'number' && v < s.minimum) errors.push(`${p}: below ${s.minimum}`);
        if (typeof s.maximum === 'number' && v > s.maximum) errors.push(`${p}: above ${s.maximum}`);
        break;
      case 'boolean':
        if (typeof v !== 'boolean') return [`${p}: expected a boolean, got ${JSON.stringify(v)?.slice(0, 60)}`];
        break;
      case 'array':
        if (!Array.isArray(v)) return [`${p}: expected an array`];
        if (typeof s.maxItems === 'number' && v.length > s.maxItems) errors.push(`${p}: more than ${s.maxItems} items`);
        if (s.items) v.forEach((item, i) => errors.push(...check(s.items as Schema, item, `${p}[${i}]`, depth + 1)));
        break;
      case 'object':
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return [`${p}: expected an object`];
        break;
      case undefined:
        break;
      default:
        return [`${p}: unsupported schema type ${String(s.type)}`];
    }
    if (Array.isArray(s.enum) && !s.enum.some((e) => e === v)) errors.push(`${p}: ${JSON.stringify(v)} is not one of ${JSON.stringify(s.enum)}`);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const r of (s.required ?? []) as string[]) if (!(r in o)) errors.push(`${p}.${r}: required`);
      for (const [k, val] of Object.entries(o)) {
        if (props[k]) {
          if (val !== undefined) errors.push(...check(props[k]!, val, `${p}.${k}`, depth + 1));
        } else if (s.additionalProperties === false) {
          errors.push(`${p}.${k}: not allowed`);
        } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
          errors.push(...check(s.additionalProperties as Schema, val, `${p}.${k}`, depth + 1));
        }
      }
    }
    return errors;
  };
  return check(schema, value, path, 0);
}
