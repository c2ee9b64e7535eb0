/**
 * A value following a JSON Schema, for the stubs that play a provider's structured output (structured-output-stub.ts
 * for Anthropic, bedrock-stub.ts for Bedrock's Converse): no recording of a structured answer exists, so the stubs
 * answer with this value as the model's text.
 */
import type { Json } from './scripted-stub.ts';

/**
 * A value following JSON Schema `schema` (the subset structured-output clients send: objects, arrays, scalars, enums):
 * a string property `"<name>-value"`, a number 42, a boolean true, an enum's first value, an array of one item.
 */
export function exampleOf(schema: Json, name = 'value'): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema.anyOf) && schema.anyOf.length) return exampleOf(schema.anyOf[0], name);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [key, sub] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) out[key] = exampleOf(sub, key);
      return out;
    }
    case 'array':
      return [exampleOf((schema.items ?? {}) as Json, name)];
    case 'number':
    case 'integer':
      return 42;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return `${name}-value`;
  }
}
