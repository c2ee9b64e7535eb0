/**
 * Structured output on Anthropic's Messages API: OpenAI's `response_format` as Anthropic's `output_config.format`,
 * shared by the chat → Messages translator (../openai-chat-to-anthropic-messages/request.ts, where the client sent
 * `response_format`) and the Responses → Messages route (../openai-responses-to-anthropic-messages.ts, where the
 * client sent `text.format`, which the Responses → chat translation turned into `response_format`).
 *
 * | `response_format` | Messages |
 * | --- | --- |
 * | `{type: "json_schema", json_schema: {schema}}` | `output_config.format: {type: "json_schema", schema}` (Anthropic's structured output constrains the answer to the schema, so `strict` is honoured whatever its value) |
 * | `json_schema.name` | not sent: a label OpenAI requires, which does not change the answer and has no place at Anthropic |
 * | `json_schema.description` | removed and recorded: Anthropic's format has no description |
 * | `{type: "json_object"}` | refused (400 naming the type): Anthropic has no JSON mode without a schema |
 * | `{type: "text"}` | nothing: text is Anthropic's default |
 *
 * Sources: https://platform.openai.com/docs/api-reference/chat/create (`response_format`),
 * https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs, https://docs.anthropic.com/en/api/messages.
 */
import { badRequest } from '../../errors.ts';
import { objectAt, recordUnmapped } from './request-members.ts';

/** Anthropic's `output_config.format`: the answer is JSON following `schema` (a JSON Schema object). */
export interface AnthropicOutputFormat {
  type: 'json_schema';
  schema: Record<string, unknown>;
}

/** The client's names of the members read, for errors and the record of removed members. */
export interface OutputFormatPaths {
  /** The format object (`response_format`; for a Responses client `text.format`). */
  readonly format: string;
  /** The object holding `name`, `schema`, `strict`, `description` (`response_format.json_schema`; `text.format`). */
  readonly schema: string;
}

/** The paths of a chat-completions client. */
export const CHAT_FORMAT_PATHS: OutputFormatPaths = { format: 'response_format', schema: 'response_format.json_schema' };

const FORMAT_MEMBERS = new Set(['type', 'json_schema']);
/** `name` is a label and `strict` is honoured (see the table above); any other (`description`) is recorded. */
const SCHEMA_MEMBERS = new Set(['name', 'schema', 'strict']);

/**
 * The `output_config.format` for a chat `response_format` (untrusted JSON), or undefined for `text` (nothing to
 * send); what it cannot carry is pushed to `removed` under the client's names (`paths`).
 * @throws {GatewayError} 400 naming `<format>.type` for `json_object` or an unknown type, `<schema>.schema` when the
 *   schema is not an object, or the member that is not an object.
 */
export function anthropicOutputFormat(format: unknown, paths: OutputFormatPaths, removed: string[]): AnthropicOutputFormat | undefined {
  const f = objectAt(format, paths.format);
  switch (f.type) {
    case 'text':
      recordUnmapped(f, FORMAT_MEMBERS, paths.format, removed);
      return undefined;
    case 'json_object':
      throw badRequest(`${paths.format}.type "json_object": Anthropic has no JSON mode; send a json_schema format`, `${paths.format}.type`, 'unsupported_parameter');
    case 'json_schema': {
      recordUnmapped(f, FORMAT_MEMBERS, paths.format, removed);
      const s = objectAt(f.json_schema, `${paths.format}.json_schema`);
      const schema = objectAt(s.schema, `${paths.schema}.schema`);
      recordUnmapped(s, SCHEMA_MEMBERS, paths.schema, removed);
      return { type: 'json_schema', schema };
    }
    default:
      throw badRequest(`${paths.format}.type must be "text", "json_schema" or "json_object", got ${JSON.stringify(f.type)}`, `${paths.format}.type`);
  }
}
