/**
 * End-to-end: Claude Code itself (npm `@anthropic-ai/claude-code`, the pinned version the captured
 * request of test/fixtures/clients/ came from) run as `claude -p "…"` with only
 * `ANTHROPIC_BASE_URL` pointing at the gateway, the service key, `DISABLE_TELEMETRY=1`,
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and `HOME` in a fresh temporary folder, against
 * real processes: admin, the proxy, and test/support/claude-code-stub.ts playing both Anthropic and
 * an OpenAI-compatible provider. Each test asserts that the CLI printed what the stub answered, and
 * what reached the stub: passthrough to Anthropic, translation to the OpenAI-compatible provider
 * (`--model openai/gpt-4o-mini`), Bedrock's InvokeModel (only the betas Bedrock takes: Bedrock, and the
 * stack's stub playing it, refuse any other), a turn in which the model calls the Bash tool that Claude Code runs
 * and answers (both ways), a router, the service key in each of its headers, bring-your-own-key with
 * `Svc-Auth`, and a wrong key. The CLI is installed on first use (test/support/agent-cli.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getModelInfo } from '../shared/models.ts';
import { CLAUDE_CODE, ensureAgentCli, runAgentCli, type CliRun, type InstalledCli } from './support/agent-cli.ts';
import { AWS_TEST_ENV, clearStubRequests, fetchRecord, PROVIDER_KEYS, startStubbedStack, stubRequests, waitFor, type Stack, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

/** The request headers Claude Code 2.1.328 sent when it was captured (test/fixtures/clients/README.md). */
const CAPTURED_HEADERS = (JSON.parse(readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request-headers.json', import.meta.url), 'utf8')) as { headers: Record<string, string> }).headers;
/** What the stub's recorded answers print (test/fixtures/providers/anthropic/message-stream.sse, openai/chat-completion-stream.sse). */
const ANTHROPIC_TEXT = 'Hello there!';
const OPENAI_TEXT = 'The capital of the UK is London.';
/** What the stack's stub answers on Bedrock's InvokeModel stream (its anthropic/message-stream.sse, framed as Bedrock frames it). */
const BEDROCK_TEXT = '2';
/** The stub's tool-use script (test/support/claude-code-stub.ts). */
const BASH_MARKER = 'Run this command with Bash: ';
const FINAL_PREFIX = 'The command printed: ';

let cli: InstalledCli;
let stubbed: StubbedStack;
let stack: Stack;
const folders: string[] = [];

before(async () => {
  cli = await ensureAgentCli(CLAUDE_CODE);
  console.log(`${CLAUDE_CODE.pkg}@${CLAUDE_CODE.version}: ${cli.installed ? 'installed' : 'found in the cache'} in ${Math.round(cli.ms)} ms`);
  stubbed = await startStubbedStack(
    'test/support/claude-code-stub.ts',
    // Bedrock is the stack's own stub (test/support/stub-upstream.ts), which refuses betas Bedrock does not know.
    (stub, stackStub) => ({
      providers: { anthropic: { 'base-url': `${stub}/v1` }, openai: { 'base-url': `${stub}/v1` }, bedrock: { 'base-url': stackStub, region: 'us-east-1' } },
      routers: {
        // Claude Code's default model, mapped to an OpenAI model: the whole session goes to OpenAI.
        coding: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['openai'], 'model-mappings': { 'claude-opus-5-5': ['openai/gpt-4o-mini'] } } } },
      },
    }),
    AWS_TEST_ENV,
  );
  stack = stubbed.stack;
});
after(async () => {
  await stubbed?.stop();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

/** What reached the Claude Code stub since the last {@link clearUpstream}. */
const upstream = (): Promise<Json[]> => stubRequests(stubbed.stubUrl);
const clearUpstream = (): Promise<void> => clearStubRequests(stubbed.stubUrl);

/** A fresh temporary folder, removed after the tests. */
function folder(prefix: string): string {
  const f = mkdtempSync(path.join(tmpdir(), prefix));
  folders.push(f);
  return f;
}

/**
 * Runs `claude -p <prompt> --session-id <uuid> …args` in a fresh working folder with a fresh HOME.
 * `env` replaces the default credentials (base URL: the gateway at `basePath`; service key as
 * `ANTHROPIC_API_KEY`). Returns the run and the session id it used.
 */
async function claude(prompt: string, o: { args?: string[]; env?: Record<string, string>; basePath?: string; cwd?: string } = {}): Promise<CliRun & { session: string }> {
  const session = randomUUID();
  const env: Record<string, string> = {
    HOME: folder('claude-home-'),
    ANTHROPIC_BASE_URL: `${stack.gatewayUrl}${o.basePath ?? ''}`,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...(o.env ?? { ANTHROPIC_API_KEY: stack.apiKey }),
  };
  const run = await runAgentCli(cli, ['-p', prompt, '--session-id', session, ...(o.args ?? [])], { env, cwd: o.cwd ?? folder('claude-cwd-') });
  console.log(`claude -p ${JSON.stringify(prompt.slice(0, 40))} ${(o.args ?? []).join(' ')}: exit ${run.code} in ${Math.round(run.ms)} ms`);
  return { ...run, session };
}

/** Asserts a run ended well and printed exactly `text` (one line). */
function assertPrinted(run: CliRun, text: string): void {
  assert.equal(run.code, 0, `claude exited ${run.code ?? run.signal}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  assert.equal(run.stdout, `${text}\n`, `stderr: ${run.stderr}`);
}

/** The gateway's log records of one Claude Code session (by its `x-claude-code-session-id`), oldest first. */
async function sessionRecords(session: string, count: number): Promise<Json[]> {
  let rows: Json[] = [];
  await waitFor(async () => {
    const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { sessions_request_response_rmt: { session_session_id: { equals: session } } }, sort: { created_at: 'asc' } }),
    });
    rows = ((await res.json()) as { data: Json[] }).data ?? [];
    return rows.length >= count;
  });
  assert.equal(rows.length, count, `records of session ${session}`);
  return Promise.all(rows.map((r) => fetchRecord(stack, r.request_id)));
}

/** The text of a Messages content (a string or text blocks). */
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: Json) => (b.type === 'text' ? b.text : '')).join('') : '';

describe('Claude Code through the gateway', () => {
  test('passthrough to Anthropic: prints the recorded answer; body, betas and the provider key reach Anthropic; logged by session', async () => {
    await clearUpstream();
    const run = await claude('say hi');
    assertPrinted(run, ANTHROPIC_TEXT);
    const sent = await upstream();
    assert.equal(sent.length, 1, `one request: ${JSON.stringify(sent.map((r) => r.url))}`);
    const [req] = sent as [Json];
    assert.equal(req.url, '/v1/messages');
    assert.equal(req.body.model, 'claude-opus-5-5', "Claude Code's default model, sent as it was");
    assert.equal(req.body.stream, true);
    assert.deepEqual(req.body.thinking, { type: 'adaptive', display: 'omitted' });
    assert.ok(req.body.context_management, 'Anthropic-only members reach Anthropic');
    assert.ok(textOf(req.body.messages[0].content).endsWith('say hi'));
    assert.equal(req.headers['anthropic-beta'], CAPTURED_HEADERS['anthropic-beta'], 'every beta Claude Code sends reaches Anthropic');
    assert.equal(req.headers['anthropic-version'], CAPTURED_HEADERS['anthropic-version']);
    assert.equal(req.headers['x-stainless-package-version'], CAPTURED_HEADERS['x-stainless-package-version']);
    assert.equal(req.headers['x-api-key'], PROVIDER_KEYS.ANTHROPIC_API_KEY, "the gateway's Anthropic key, not the service key");
    assert.equal(req.headers.authorization, undefined);

    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'ANTHROPIC');
    assert.equal(rec.request_properties['svc-endpoint'], 'messages');
    assert.equal(rec.request_properties['svc-session-id'], run.session);
    assert.equal(rec.request_model, 'claude-opus-5-5');
    assert.equal(rec.response_status, 200);
    // The stream's usage (message_start input, message_delta output) is what the record counts.
    assert.deepEqual([rec.prompt_tokens, rec.completion_tokens], [11, 6]);
  });

  test('translation: --model openai/gpt-4o-mini reaches the OpenAI-compatible provider as a chat completion and prints its answer', async () => {
    await clearUpstream();
    const run = await claude('say hi', { args: ['--model', 'openai/gpt-4o-mini'] });
    assertPrinted(run, OPENAI_TEXT);
    const sent = await upstream();
    assert.equal(sent.length, 1, `one request: ${JSON.stringify(sent.map((r) => r.url))}`);
    const [req] = sent as [Json];
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.body.model, 'gpt-4o-mini');
    assert.equal(req.body.stream, true);
    assert.equal(req.headers.authorization, `Bearer ${PROVIDER_KEYS.OPENAI_API_KEY}`);
    assert.equal(req.headers['anthropic-beta'], undefined, 'Anthropic headers do not go to another provider');
    assert.ok(req.body.messages.some((m: Json) => m.role === 'user' && JSON.stringify(m.content).includes('say hi')));
    assert.ok(req.body.tools.some((t: Json) => t.type === 'function' && t.function.name === 'Bash'), "Claude Code's tools are offered as functions");
    // Claude Code asks for 128,000 output tokens; OpenAI takes max_completion_tokens, capped at the model's limit.
    assert.equal(req.body.max_completion_tokens, getModelInfo('openai', 'gpt-4o-mini')!.maxOutputTokens);
    // gpt-4o-mini takes no reasoning effort (OpenAI answers 400 to one): Claude Code's effort is not sent.
    assert.equal(req.body.reasoning_effort, undefined);
    assert.equal(req.body.max_tokens, undefined);

    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'OPENAI');
    assert.equal(rec.request_properties['svc-endpoint'], 'messages');
    assert.equal(rec.response_status, 200);
    // The OpenAI stream's final usage chunk (openai/chat-completion-stream.sse) is what the record counts.
    assert.deepEqual([rec.prompt_tokens, rec.completion_tokens], [78, 9]);
    // Claude Code's Anthropic-only members were dropped on the way, and the record says which.
    const removed = JSON.parse(rec.request_properties['svc-removed-members'] ?? '[]') as string[];
    assert.ok(removed.includes('context_management'), `svc-removed-members: ${JSON.stringify(removed)}`);
    assert.ok(removed.includes('output_config.effort'), `svc-removed-members: ${JSON.stringify(removed)}`);
  });

  for (const how of ['passthrough', 'translation'] as const) {
    test(`a tool turn through ${how}: the model calls Bash, Claude Code runs it and sends the result back, then prints the final answer`, async () => {
      await clearUpstream();
      const cwd = folder('claude-cwd-');
      const secret = `note-${randomUUID()}`;
      writeFileSync(path.join(cwd, 'note.txt'), `${secret}\n`);
      // `tr` upper-cases what `cat` read: the result can only come from a shell Claude Code ran.
      // Translation picks the model with ANTHROPIC_MODEL here (the test above uses --model).
      const env = { ANTHROPIC_API_KEY: stack.apiKey, ...(how === 'translation' ? { ANTHROPIC_MODEL: 'openai/gpt-4o-mini' } : {}) };
      const run = await claude(`${BASH_MARKER}cat note.txt | tr a-z A-Z`, { cwd, env, args: ['--allowedTools', 'Bash'] });
      const expected = secret.toUpperCase();
      assertPrinted(run, `${FINAL_PREFIX}${expected}`);
      const sent = await upstream();
      assert.equal(sent.length, 2, `a tool call, then its result: ${JSON.stringify(sent.map((r) => r.url))}`);
      const second = sent[1]!.body;
      if (how === 'passthrough') {
        assert.ok(sent.every((r) => r.url === '/v1/messages'));
        const [assistant, user] = second.messages.slice(-2);
        assert.equal(assistant.role, 'assistant');
        const call = assistant.content.find((b: Json) => b.type === 'tool_use');
        assert.deepEqual([call.id, call.name, call.input.command], ['toolu_stub_bash_1', 'Bash', 'cat note.txt | tr a-z A-Z']);
        const result = user.content.find((b: Json) => b.type === 'tool_result');
        assert.equal(result.tool_use_id, 'toolu_stub_bash_1');
        assert.equal(result.is_error, false);
        assert.equal(textOf(result.content).trim(), expected);
      } else {
        assert.ok(sent.every((r) => r.url === '/v1/chat/completions' && r.body.model === 'gpt-4o-mini'));
        const [assistant, tool] = second.messages.slice(-2);
        assert.equal(assistant.role, 'assistant');
        assert.deepEqual(
          assistant.tool_calls.map((c: Json) => [c.id, c.function.name, JSON.parse(c.function.arguments).command]),
          [['call_stub_bash_1', 'Bash', 'cat note.txt | tr a-z A-Z']],
        );
        assert.equal(tool.role, 'tool');
        assert.equal(tool.tool_call_id, 'call_stub_bash_1');
        assert.equal(textOf(tool.content).trim(), expected);
      }
      const records = await sessionRecords(run.session, 2);
      assert.deepEqual(
        records.map((r) => r.provider),
        how === 'passthrough' ? ['ANTHROPIC', 'ANTHROPIC'] : ['OPENAI', 'OPENAI'],
      );
    });
  }

  test("Bedrock: --model bedrock/…anthropic… goes through InvokeModel with only the betas Bedrock takes, and prints Bedrock's answer", async () => {
    await clearStubRequests(stack.stubUrl);
    const run = await claude('say hi', { args: ['--model', 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0'] });
    assertPrinted(run, BEDROCK_TEXT);
    const [req, ...more] = (await stubRequests(stack.stubUrl)).filter((r) => r.url.startsWith('/model/'));
    assert.equal(more.length, 0, 'one request, not refused and retried');
    assert.match(req!.url, /^\/model\/us\.anthropic\.claude-sonnet-4-5-20250929-v1(%3A|:)0\/invoke-with-response-stream$/);
    assert.equal(req!.body.anthropic_version, 'bedrock-2023-05-31');
    const sentBetas = req!.body.anthropic_beta as string[];
    assert.ok(sentBetas.includes('interleaved-thinking-2025-05-14'), `anthropic_beta: ${JSON.stringify(sentBetas)}`);
    assert.ok(!sentBetas.includes('claude-code-20250219'), 'a beta Bedrock refuses is not sent');
    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'BEDROCK');
    assert.equal(rec.response_status, 200);
    const removed = JSON.parse(rec.request_properties['svc-removed-members'] ?? '[]') as string[];
    assert.ok(removed.includes('anthropic-beta: claude-code-20250219'), `svc-removed-members: ${JSON.stringify(removed)}`);
  });

  test('a router (ANTHROPIC_BASE_URL=…/router/coding) maps Claude Code\'s default model to an OpenAI model', async () => {
    await clearUpstream();
    const run = await claude('say hi', { basePath: '/router/coding' });
    assertPrinted(run, OPENAI_TEXT);
    const [req, ...more] = await upstream();
    assert.equal(more.length, 0);
    assert.equal(req!.url, '/v1/chat/completions');
    assert.equal(req!.body.model, 'gpt-4o-mini');
  });
});

describe('Claude Code credentials at the gateway', () => {
  test('the service key in ANTHROPIC_AUTH_TOKEN (Authorization: Bearer), base URL …/ai', async () => {
    await clearUpstream();
    const run = await claude('say hi', { basePath: '/ai', env: { ANTHROPIC_AUTH_TOKEN: stack.apiKey } });
    assertPrinted(run, ANTHROPIC_TEXT);
    const [req] = (await upstream()) as [Json];
    assert.equal(req.url, '/v1/messages');
    assert.equal(req.headers['x-api-key'], PROVIDER_KEYS.ANTHROPIC_API_KEY);
    assert.equal(req.headers.authorization, undefined, 'the service key does not go to Anthropic');
  });

  test('bring your own key: the service key in Svc-Auth (ANTHROPIC_CUSTOM_HEADERS), the user\'s own key goes to Anthropic', async () => {
    await clearUpstream();
    const own = 'sk-ant-api03-users-own-key';
    const run = await claude('say hi', { env: { ANTHROPIC_API_KEY: own, ANTHROPIC_CUSTOM_HEADERS: `Svc-Auth: Bearer ${stack.apiKey}` } });
    assertPrinted(run, ANTHROPIC_TEXT);
    const [req] = (await upstream()) as [Json];
    assert.equal(req.headers['x-api-key'], own, "the user's key, not the gateway's");
    assert.equal(req.headers['svc-auth'], undefined, 'the service key does not go to Anthropic');
    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'ANTHROPIC');
  });

  test('the response cache (ANTHROPIC_CUSTOM_HEADERS): a second identical run is answered from the cache; the stream replay prints the same', async () => {
    await clearUpstream();
    // `metadata` carries each run's own session id; the rest of the body is the same for the same
    // prompt in the same folder with the same HOME (the system prompt names both).
    const env = {
      HOME: folder('claude-cache-home-'),
      ANTHROPIC_API_KEY: stack.apiKey,
      ANTHROPIC_CUSTOM_HEADERS: `Svc-Cache-Enabled: true\nSvc-Cache-Ignore-Keys: metadata\nSvc-Cache-Seed: ${randomUUID()}`,
    };
    const cwd = folder('claude-cache-cwd-');
    const first = await claude('say hi', { env, cwd });
    assertPrinted(first, ANTHROPIC_TEXT);
    assert.equal((await upstream()).length, 1, 'the first run reached Anthropic');
    const second = await claude('say hi', { env, cwd });
    assertPrinted(second, ANTHROPIC_TEXT);
    assert.equal((await upstream()).length, 1, 'the second run was answered from the cache');
    const [miss] = (await sessionRecords(first.session, 1)) as [Json];
    const [hit] = (await sessionRecords(second.session, 1)) as [Json];
    assert.equal(hit.cache_reference_id, miss.request_id);
    assert.deepEqual([hit.prompt_tokens, hit.completion_tokens, hit.cost], [miss.prompt_tokens, miss.completion_tokens, 0]);
  });

  test('a wrong service key: Claude Code gets a 401 and nothing reaches the provider', async () => {
    await clearUpstream();
    // Claude Code retries a 401 ten times with backoff unless told not to.
    const run = await claude('say hi', { env: { ANTHROPIC_API_KEY: 'sk-svc-not-a-key', CLAUDE_CODE_MAX_RETRIES: '0' } });
    assert.equal(run.code, 1, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    // The message Claude Code shows is the one of the gateway's Anthropic-shaped error body.
    assert.match(run.stdout + run.stderr, /API Error: 401 invalid API key/);
    assert.deepEqual(await upstream(), []);
  });
});
