/**
 * The Node.js (V8) flags the proxy runs with: `npm start` (scripts/start.ts), `npm run proxy`
 * (package.json, kept equal by test/node-flags.test.ts) and the benchmarks pass them on the command
 * line (V8 refuses them in NODE_OPTIONS).
 *
 * `--initial-heap-size=96` (MB): V8 starts the old generation's limit at about 96 MB instead of
 * sizing it from the small live heap. The proxy's live heap is ~20 MB, but its young generation
 * grows to tens of MB under load, and V8 starts a full (mark-compact) collection whenever the old
 * generation's headroom is smaller than the young generation (`Heap::IncrementalMarkingLimitReached`,
 * the `--trace-incremental-marking` lines read "Start (task) … v8: 21MB / 44MB / 23MB"). So with
 * the request log on, whose records live until admin acknowledges them, the proxy ran a
 * mark-compact every ~0.5 s at ~6,500 req/s. Measured (bench observability scenario, one round,
 * `--trace-gc`): 33 mark-compacts without the flag, 11 at 64 MB, 7 at 96 MB, 6 at 160 MB; the live
 * heap after each stayed 22–27 MB. The cost is memory: garbage may build up to about this size
 * before the old generation is collected.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--initial-heap-size=96'];
