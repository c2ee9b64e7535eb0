import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { scanJson, spliceModel } from '../proxy/json-scan.ts';
import { Deadlines, sweepIntervalMs } from '../proxy/deadlines.ts';

/** What the gateway does: splice only when the span holds exactly what JSON.parse read. */
function rewrite(text: string, model: string): Buffer | null {
  const buf = Buffer.from(text);
  const scan = scanJson(buf, 128);
  const parsed = JSON.parse(text) as { model?: unknown };
  if (scan.modelStart < 0 || typeof parsed.model !== 'string') return null;
  if (buf.toString('utf8', scan.modelStart, scan.modelEnd) !== JSON.stringify(parsed.model)) return null;
  return spliceModel(buf, scan.modelStart, scan.modelEnd, model);
}

describe('scanJson', () => {
  test('finds the top-level model string and splices a new one in', () => {
    const text = '{"messages":[{"role":"user","content":"hi"}],"model":"openai/gpt-4o-mini","stream":true}';
    const out = rewrite(text, 'gpt-4o-mini')!;
    assert.equal(out.toString(), '{"messages":[{"role":"user","content":"hi"}],"model":"gpt-4o-mini","stream":true}');
  });

  test('ignores "model" inside nested objects, arrays and string values', () => {
    const text = '{"metadata":{"model":"nested"},"messages":[{"role":"user","content":"\\"model\\":\\"x\\""}],"tools":["model"],"model" : "openai/a"}';
    const scan = scanJson(Buffer.from(text), 128);
    assert.equal(text.slice(scan.modelStart, scan.modelEnd), '"openai/a"');
  });

  test('the last duplicate member wins, as in JSON.parse', () => {
    const out = rewrite('{"model":"first","model":"openai/second"}', 'm')!;
    assert.deepEqual(JSON.parse(out.toString()), { model: 'm' });
    assert.equal(out.toString(), '{"model":"first","model":"m"}');
  });

  test('no span for a non-string model, an escaped member name or an escaped value', () => {
    assert.equal(scanJson(Buffer.from('{"model":5}'), 128).modelStart, -1);
    assert.equal(scanJson(Buffer.from('{"model":{"a":"b"}}'), 128).modelStart, -1);
    assert.equal(scanJson(Buffer.from('{"mod\\u0065l":"x"}'), 128).modelStart, -1);
    // The value holds an escape: the span is found, but it differs from JSON.stringify of the parsed value.
    assert.equal(rewrite('{"model":"openai\\/gpt"}', 'x'), null);
  });

  test('depth: nesting beyond the limit is reported, brackets in strings do not count', () => {
    assert.equal(scanJson(Buffer.from('[[[1]]]'), 3).tooDeep, false);
    assert.equal(scanJson(Buffer.from('[[[[1]]]]'), 3).tooDeep, true);
    assert.equal(scanJson(Buffer.from('{"a":"[[[[[[[["}'), 3).tooDeep, false);
  });

  test('strings: a quote after an odd run of backslashes does not end one, after an even run it does', () => {
    // "a\\" then "model":"x" at the top level: the even run (an escaped backslash) ends the string.
    const text = '{"a":"q\\\\","model":"x","b":"\\"[[[[\\\\\\"{{"}';
    assert.deepEqual(JSON.parse(text), { a: 'q\\', model: 'x', b: '"[[[[\\"{{' });
    const scan = scanJson(Buffer.from(text), 1);
    assert.equal(scan.tooDeep, false, 'brackets after an escaped quote are inside the string');
    assert.equal(text.slice(scan.modelStart, scan.modelEnd), '"x"');
    // An unterminated string: no span, and nothing after it counts.
    assert.deepEqual({ ...scanJson(Buffer.from('{"model":"x","b":"[[[[\\"'), 2) }, { tooDeep: false, modelStart: 2 + 7, modelEnd: 12 });
  });

  test('property: tooDeep is exactly nesting past the limit, whatever the strings hold', () => {
    const depthOf = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0);
    const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', ' ', 'é', ':', ',') });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(tricky, tie('node'), { maxKeys: 3 })),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 6 }), (v, max) => {
        const text = JSON.stringify(v);
        assert.equal(scanJson(Buffer.from(text), max).tooDeep, depthOf(v) > max, text);
      }),
      { numRuns: 1000 },
    );
  });

  test('property: splicing equals parse, replace model, serialize', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 6 }), fc.string(), fc.string(), (obj, model, next) => {
        const body = { ...obj, model };
        const text = JSON.stringify(body, null, Math.random() < 0.5 ? 0 : 2);
        const out = rewrite(text, next);
        // Only an object whose model value is written with escapes has no span.
        if (out === null) {
          assert.notEqual(JSON.stringify(model).slice(1, -1), model);
          return;
        }
        assert.deepEqual(JSON.parse(out.toString()), { ...JSON.parse(text), model: next });
      }),
      { numRuns: 500 },
    );
  });
});

describe('Deadlines', () => {
  test('a sweep hands over exactly the items whose deadline has passed', () => {
    const expired: string[] = [];
    const d = new Deadlines<{ id: string; deadlineMs: number; deadlineSlot: number }>(60_000, (item) => {
      expired.push(item.id);
      item.deadlineMs = Infinity;
    });
    try {
      const a = { id: 'a', deadlineMs: 100, deadlineSlot: -1 };
      const b = { id: 'b', deadlineMs: 300, deadlineSlot: -1 };
      const c = { id: 'c', deadlineMs: Infinity, deadlineSlot: -1 };
      d.track(a);
      d.track(b);
      d.track(c);
      d.sweep(200);
      assert.deepEqual(expired, ['a']);
      d.untrack(b);
      d.sweep(1_000);
      assert.deepEqual(expired, ['a']);
      assert.equal(d.size, 2);
    } finally {
      d.close();
    }
  });

  test('untracking in any order, also from inside a sweep, keeps every other item tracked exactly once', () => {
    type Item = { id: number; deadlineMs: number; deadlineSlot: number };
    const seen: number[] = [];
    // Expired items untrack themselves, as the gateway's requests do when they are answered.
    const d = new Deadlines<Item>(60_000, (item) => {
      seen.push(item.id);
      d.untrack(item);
    });
    try {
      const items: Item[] = Array.from({ length: 50 }, (_, id) => ({ id, deadlineMs: id % 3 === 0 ? 10 : 1_000, deadlineSlot: -1 }));
      for (const it of items) d.track(it);
      d.track(items[7]!); // tracking twice is a no-op
      for (const id of [49, 0, 25, 26, 1]) d.untrack(items[id]!);
      d.untrack(items[0]!); // and so is untracking twice
      assert.equal(d.size, 45);
      d.sweep(100);
      const expected = items.filter((it) => it.id % 3 === 0 && ![0].includes(it.id)).map((it) => it.id);
      assert.deepEqual([...seen].sort((x, y) => x - y), expected);
      assert.equal(d.size, 45 - expected.length);
      seen.length = 0;
      d.sweep(10_000);
      const rest = items.filter((it) => it.id % 3 !== 0 && ![49, 25, 26, 1].includes(it.id)).map((it) => it.id);
      assert.deepEqual([...seen].sort((x, y) => x - y), rest);
      assert.equal(d.size, 0);
      for (const it of items) assert.equal(it.deadlineSlot, -1);
    } finally {
      d.close();
    }
  });

  test('the timer fires expired deadlines on its own', async () => {
    const d = new Deadlines<{ deadlineMs: number; deadlineSlot: number }>(10, (item) => {
      item.deadlineMs = Infinity;
      fired = true;
    });
    let fired = false;
    try {
      d.track({ deadlineMs: performance.now() + 20, deadlineSlot: -1 });
      const until = Date.now() + 2_000;
      while (!fired && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      assert.equal(fired, true);
    } finally {
      d.close();
    }
  });

  test('sweep interval: an eighth of the shortest timeout, within 10..250 ms', () => {
    assert.equal(sweepIntervalMs(10_000, 600_000), 250);
    assert.equal(sweepIntervalMs(1_000, 300), 37);
    assert.equal(sweepIntervalMs(40), 10);
  });
});
