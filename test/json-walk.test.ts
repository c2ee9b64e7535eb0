/**
 * admin/json-walk.ts: the walks over parsed request bodies never recurse, so no depth exhausts the
 * stack; they find what they look for in document order.
 * Run: node --import tsx --test test/json-walk.test.ts
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findNul } from '../admin/validation.ts';
import { findInJson, findTooDeep, MAX_BODY_DEPTH } from '../admin/json-walk.ts';

/** `{"a": [ … [leaf] … ]}` with `depth` arrays, built by JSON.parse (iterative in V8). */
const nested = (depth: number, leaf: string) => JSON.parse(`{"a":${'['.repeat(depth)}${leaf}${']'.repeat(depth)}}`);

describe('findNul', () => {
  test('finds a U+0000 200,000 levels down without running out of stack', () => {
    const path = findNul(nested(200_000, '"x\\u0000"'));
    assert.equal(path?.length, 200_001);
    assert.equal(path?.[0], 'a');
    assert.ok(path?.slice(1).every((p) => p === 0));
    assert.equal(findNul(nested(200_000, '"clean"')), null);
  });

  test('names member names and values, first in document order', () => {
    assert.deepEqual(findNul({ a: 'ok', b: [1, { 'k\u0000': 1 }], c: 'x\u0000' }), ['b', 1, 'k\u0000']);
    assert.deepEqual(findNul({ a: 'ok', b: [1, { k: 1 }], c: 'x\u0000' }), ['c']);
    assert.deepEqual(findNul(['a', 'b\u0000']), [1]);
    assert.deepEqual(findNul('\u0000'), []);
    assert.equal(findNul({ a: null, b: 1, c: true }), null);
  });
});

describe('findTooDeep', () => {
  test(`allows ${MAX_BODY_DEPTH} nested arrays and objects, the root included, and no more`, () => {
    assert.equal(findTooDeep(nested(MAX_BODY_DEPTH - 1, '1')), null);
    const path = findTooDeep(nested(MAX_BODY_DEPTH, '1'));
    assert.equal(path?.[0], 'a');
    assert.equal(path?.length, MAX_BODY_DEPTH, 'the path of the first container too deep');
    assert.equal(findTooDeep(nested(200_000, '1'))?.length, MAX_BODY_DEPTH);
    assert.equal(findTooDeep({ a: 'x'.repeat(1000) }, 1), null, 'scalars do not nest');
    assert.deepEqual(findTooDeep({ a: 1, b: {} }, 1), ['b']);
  });

  test('visits member names before their values, depth-first', () => {
    const seen: string[] = [];
    findInJson({ a: [1, { b: 2 }], c: 3 }, (v, depth, isName) => (seen.push(`${isName ? 'name' : 'value'}:${JSON.stringify(v)}@${depth}`), false));
    assert.deepEqual(seen, ['value:{"a":[1,{"b":2}],"c":3}@0', 'name:"a"@1', 'value:[1,{"b":2}]@1', 'value:1@2', 'value:{"b":2}@2', 'name:"b"@3', 'value:2@3', 'name:"c"@1', 'value:3@1']);
  });
});
