/**
 * Validation of untrusted values with superstruct, in one place for admin's REST bodies, the
 * control-plane messages, the log records admin ingests and the gateway configuration.
 *
 * superstruct builds each failure's message with `${value}`, which throws on an object whose own
 * `toString` or `valueOf` member is not a function (`{"offset": {"toString": 0}}`, found by
 * test/fuzz.test.ts). {@link validateValue} reports such a value as invalid instead of throwing, and
 * {@link describeStructError} reads only the first failure, because `StructError.failures()` goes on
 * validating the rest of the value lazily, wherever it is called.
 */
import { StructError, validate, type Struct } from 'superstruct';

/** A value superstruct could not describe (see the module comment); `path` is empty: the member is unknown. */
export class UndescribableValueError extends Error {
  readonly path: string[] = [];
}

/**
 * superstruct's `validate` (with `coerce` as given), except that it never throws.
 * @returns `[undefined, value]` when valid, else `[error, undefined]`: a `StructError` for an
 *   ordinary failure, an {@link UndescribableValueError} for a value superstruct cannot print.
 */
export function validateValue<T, S>(value: unknown, struct: Struct<T, S>, options: { coerce?: boolean } = {}): [StructError | UndescribableValueError, undefined] | [undefined, T] {
  try {
    return validate(value, struct, options);
  } catch (err) {
    return [new UndescribableValueError(`a member holds an object with its own "toString" or "valueOf" member where a plain value is expected (${(err as Error).message})`), undefined];
  }
}

/** Formats a validation error as `key.path: what is wrong` (an undescribable value: its message). */
export function describeStructError(error: StructError | UndescribableValueError): string {
  if (!(error instanceof StructError)) return error.message;
  // The error's own fields are its first failure (see the module comment for why not `failures()`).
  const path = error.path.length ? error.path.join('.') : '(root)';
  // StructError prefixes its first failure's message with "At path: <path> -- ".
  const prefix = `At path: ${error.path.join('.')} -- `;
  const message = withArticle(error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message);
  if (error.type === 'never') return `${path}: unknown key`;
  if (error.value === undefined) return `${path}: ${requiredMessage(message)}`;
  return `${path}: ${receivedNamed(message, error.value)}`;
}

/** superstruct writes "Expected a ${type}" whatever the type: "Expected a integer" becomes "Expected an integer". */
function withArticle(message: string): string {
  return message.replace(/\bExpected a (?=[aeiou])/g, 'Expected an ');
}

/**
 * superstruct prints the value it received with `String()`, which writes an array as its joined
 * elements (`[]` as nothing) and an object as `[object Object]`: those are named by kind instead.
 */
function receivedNamed(message: string, value: unknown): string {
  if (value === null || typeof value !== 'object') return message;
  const m = /^(.*), but received: .*$/s.exec(message);
  return m ? `${m[1]}, but received ${Array.isArray(value) ? 'an array' : 'an object'}` : message;
}

/**
 * One message for a missing member: `required, expected <what>`. superstruct's own message for it
 * ("Expected a string, but received: undefined") says the same thing twice, and a struct's message
 * that already starts with "required" is kept as it is rather than prefixed a second time.
 */
function requiredMessage(message: string): string {
  if (/^required\b/i.test(message)) return message;
  const expected = /^Expected (.*), but received: undefined$/s.exec(message);
  return `required, ${expected ? `expected ${expected[1]}` : message}`;
}
