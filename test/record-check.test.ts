/**
 * admin/record-check.ts's fast check against LogRecordSchema, the definition: it checks every
 * member of the schema, accepts the records proxies send, and accepts nothing the schema refuses
 * (every member of full records, nested ones too, replaced by odd values, deleted, or joined by an
 * unknown key).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validate } from 'superstruct';
import { CHECKED_MEMBERS, isCertainlyLogRecord } from '../admin/record-check.ts';
import { LogRecordSchema, type LogRecord } from '../shared/record.ts';
import { logRecord } from './rest-support.ts';

const ORG = '00000000-0000-4000-8000-000000000001';

/** Records with every optional member set, each nested shape present. */
function fullRecords(): LogRecord[] {
  const base = logRecord(ORG, { properties: { 'svc-a': 'b' } });
  return [
    base,
    {
      ...base,
      usage: {
        prompt_tokens: 1,
        completion_tokens: null,
        total_tokens: 3,
        prompt_tokens_details: { cached_tokens: 1, cache_write_tokens: 0, audio_tokens: null },
        completion_tokens_details: { reasoning_tokens: 1, audio_tokens: 0 },
        input_tokens: 1,
        output_tokens: 2,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1 },
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0, thinking_tokens: 1 },
        extra_member: 'kept',
      } as LogRecord['usage'],
      prompt: { promptId: 'p', versionId: 'v', version: '1.0', environment: null, inputs: { name: { any: ['thing'] } } },
      tokenLimit: { handler: 'truncate', tokensBefore: 10, tokensAfter: 5, allowedInput: 5, modelSent: 'm', skipped: null },
      attempts: [{ provider: 'openai', status: 200, latencyMs: 1, error: null }, { provider: 'groq', status: 0, latencyMs: 2 }],
      sessionId: 's',
      sessionPath: '/a',
      sessionName: null,
      removedMembers: ['x'],
      wireFormat: 'openai-chat',
      cacheEnabled: true,
      cacheReferenceId: null,
    },
  ];
}

const ODD: unknown[] = [undefined, null, 0, -1, 1.5, NaN, Infinity, '', 'x', true, false, [], ['a'], [1], [null], {}, { a: 'b' }, { a: 1 }, [{ provider: 'x', status: 1, latencyMs: 1 }]];

/** Every member path of `value` (objects and arrays), depth first. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (!value || typeof value !== 'object') return [];
  const out: Array<Array<string | number>> = [];
  for (const key of Object.keys(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(path, ...paths((value as Record<string, unknown>)[key], path));
  }
  return out;
}

/** A deep copy of `record` with the member at `path` set to `to` (deleted when `to` is the DELETE marker). */
const DELETE = Symbol('delete');
function mutate(record: unknown, path: Array<string | number>, to: unknown): unknown {
  const copy = structuredClone(record) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  if (to === DELETE) delete at[path.at(-1)!];
  else at[path.at(-1)!] = to;
  return copy;
}

const schemaAccepts = (v: unknown): boolean => validate(v, LogRecordSchema)[0] === undefined;

describe('the fast record check', () => {
  test('checks exactly the members of LogRecordSchema', () => {
    assert.deepEqual([...CHECKED_MEMBERS].sort(), Object.keys(LogRecordSchema.schema).sort());
  });

  test('accepts the records proxies send', () => {
    for (const record of fullRecords()) {
      assert.ok(schemaAccepts(record));
      assert.ok(isCertainlyLogRecord(record));
    }
  });

  test('accepts nothing LogRecordSchema refuses', () => {
    let tried = 0;
    for (const record of fullRecords()) {
      const variants: unknown[] = [{ ...record, unknownMember: 1 }];
      for (const path of paths(record)) {
        variants.push(mutate(record, path, DELETE), ...ODD.map((odd) => mutate(record, path, odd)));
        const at = path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], record);
        if (at && typeof at === 'object') variants.push(mutate(record, [...path, 'unknownMember'], 1));
      }
      for (const variant of variants) {
        tried++;
        if (isCertainlyLogRecord(variant)) assert.ok(schemaAccepts(variant), `accepted what the schema refuses: ${JSON.stringify(variant)}`);
      }
    }
    assert.ok(tried > 1000, `${tried} variants tried`);
  });
});
