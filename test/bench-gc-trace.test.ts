/**
 * bench/gc-trace.ts sums V8's `--trace-gc-nvp` lines: the lines below are V8's own (Node 20),
 * shortened to the members the sum reads and their neighbours.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sumGcTrace } from '../bench/gc-trace.ts';

const SCAVENGE = '[21703:0x35559e70]       16 ms: pause=1.1 mutator=13.1 gc=s reduce_memory=0 scavenge=1.02 total_size_before=4700160 holes_size_before=0 allocated=1032832 promoted=2714168 nodes_promoted=0 semi_space_copied=0';
const MARK_COMPACT = '[21703:0x35559e70]       40 ms: pause=15.4 mutator=2.0 gc=mc reduce_memory=0 mark=9.8 allocated=5499160 promoted=4115712 nodes_promoted=0';

test('sums pauses and allocation over every collection, promotion over scavenges only, and skips other output', () => {
  const t = sumGcTrace([SCAVENGE, 'proxy listening on 8080', SCAVENGE, MARK_COMPACT, ''].join('\n'));
  assert.equal(t.scavenges, 2);
  assert.equal(t.markCompacts, 1);
  assert.equal(Math.round(t.pauseMs * 10), 176);
  assert.equal(t.maxPauseMs, 15.4);
  assert.equal(t.allocatedBytes, 2 * 1032832 + 5499160);
  assert.equal(t.promotedBytes, 2 * 2714168, 'nodes_promoted is not promoted, and a mark-compact promotes nothing here');
});

test('no collections: zeros', () => {
  assert.deepEqual(sumGcTrace('nothing here\n'), { allocatedBytes: 0, pauseMs: 0, maxPauseMs: 0, scavenges: 0, markCompacts: 0, promotedBytes: 0 });
});
