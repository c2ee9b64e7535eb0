/**
 * undici's `Agent` (keep-alive connection pools per origin, https://undici.nodejs.org), loaded from
 * its own module rather than from undici's index. The index also loads fetch, WebSocket,
 * EventSource, the cache stores and the mock agents, which the proxy never uses: measured here,
 * `import('undici')` adds ~18 MiB of RSS to a Node process and `agent.js` alone ~9 MiB, against a
 * budget of 150 MB at 2,000 open streams (bench/README.md). undici's package has no `exports` map, so
 * the path is reachable; test/upstream-agent.test.ts checks it is the very class undici exports, so
 * an undici release that moves it fails the tests rather than the proxy.
 */
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

const requireCjs = createRequire(import.meta.url);

/** The module path of undici's Agent, relative to the package (see the file's comment). */
export const UNDICI_AGENT_MODULE = 'undici/lib/dispatcher/agent.js';

/** undici's `Agent` class, as `import { Agent } from 'undici'` exports it. */
export const Agent = requireCjs(UNDICI_AGENT_MODULE) as typeof UndiciAgent;
