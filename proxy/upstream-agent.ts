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

/** The module path of undici's header helpers (already loaded by its Agent). */
export const UNDICI_UTIL_MODULE = 'undici/lib/core/util.js';

const util = requireCjs(UNDICI_UTIL_MODULE) as {
  headerNameToString(name: Buffer | string): string;
  parseHeaders(raw: Buffer[]): Record<string, string | string[]>;
};

/**
 * A raw header name (bytes as received) as its lower-case string, looked up in undici's table of
 * known names before decoding: undici's `util.headerNameToString`.
 */
export const headerNameToString: (name: Buffer | string) => string = util.headerNameToString;

/**
 * Raw headers (name, value, name, value … as received) as an object of lower-case names, a repeated
 * name's values in an array: undici's `util.parseHeaders`.
 */
export const parseHeaders: (raw: Buffer[]) => Record<string, string | string[]> = util.parseHeaders;
