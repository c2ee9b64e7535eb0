/**
 * What a full memory cache store costs the process (issue 18): adds N answers to a
 * `MemoryCacheStore` of `cache.max-size` bytes, as the cache writer hands them over (a new key
 * each, a request id from `randomUUID` as the gateway's, the body the stub's chat answer
 * `test/fixtures/providers/openai/chat-completion.json` with a counter in it), then prints how many
 * the store still holds, the heap and external memory it added, the process's RSS, and the time of
 * a full collection (`gc()`, median of 5) with them held. Answers the store holds on V8's heap make
 * every full collection mark them; answers kept as bytes in one arena do not.
 *
 * Usage: node --expose-gc --import tsx bench/cache-fill.ts [--answers=300000] [--max-size=268435456]
 * @throws when run without `--expose-gc`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MemoryCacheStore } from '../proxy/cache/memory.ts';

const MiB = 1024 * 1024;

/** The key of answer `i` (SHA-256 in hex, as the gateway's keys). */
function keyOf(i: number): string {
  return createHash('sha256').update(`cache-fill:${i}`).digest('hex');
}

function main(): void {
  const { values } = parseArgs({ options: { answers: { type: 'string', default: '300000' }, 'max-size': { type: 'string', default: String(256 * MiB) } } });
  const n = Number(values.answers);
  const maxSize = Number(values['max-size']);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('run with node --expose-gc');
  const fixture = readFileSync(new URL('../test/fixtures/providers/openai/chat-completion.json', import.meta.url), 'utf8');
  const store = new MemoryCacheStore(maxSize);
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < n; i++) {
    const body = Buffer.from(fixture.replace('"id":"', `"id":"${i}-`));
    store.add(keyOf(i), { requestId: randomUUID(), status: 200, streamed: false, contentType: 'application/json', chunks: [body], bytes: body.length }, 3_600_000, 1);
  }
  gc();
  const after = process.memoryUsage();
  const pauses: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    gc();
    pauses.push(performance.now() - t0);
  }
  pauses.sort((a, b) => a - b);
  let held = 0;
  for (let i = 0; i < n; i++) if (store.get(keyOf(i)) !== null) held++;
  const mib = (x: number) => (x / MiB).toFixed(1);
  console.log(`${n} answers added to a ${mib(maxSize)} MiB memory store; ${held} held`);
  console.log(`heap used +${mib(after.heapUsed - before.heapUsed)} MiB, external +${mib(after.external - before.external)} MiB, RSS ${mib(after.rss)} MiB`);
  console.log(`full collection with them held: ${pauses[2]!.toFixed(1)} ms (median of 5)`);
}

main();
