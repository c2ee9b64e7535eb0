/**
 * The coding-agent CLI harness (test/support/agent-cli.ts): an install that cannot happen fails
 * with a message naming the package, the version and npm's error, and leaves nothing in the cache
 * that a later run would take for an installed CLI. Asks the npm registry for a version that does
 * not exist (a metadata lookup, nothing is downloaded).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { AGENT_CLI_CACHE, ensureAgentCli, type AgentCliSpec } from './support/agent-cli.ts';

test('an install that cannot happen names the package, the version and npm\'s error, and leaves no cache entry', async () => {
  const spec: AgentCliSpec = { pkg: '@anthropic-ai/claude-code', version: '0.0.0-no-such-version', bin: 'claude' };
  await assert.rejects(ensureAgentCli(spec), (err: Error) => {
    assert.match(err.message, /^cannot install @anthropic-ai\/claude-code@0\.0\.0-no-such-version for the end-to-end tests: `npm install --prefix /);
    assert.match(err.message, /ETARGET|No matching version|E404/, 'npm\'s own error is quoted');
    return true;
  });
  const left = existsSync(AGENT_CLI_CACHE) ? readdirSync(AGENT_CLI_CACHE).filter((f) => f.includes('0.0.0-no-such-version')) : [];
  assert.deepEqual(left, [], 'no staging folder, lock or cache entry is left behind');
});
