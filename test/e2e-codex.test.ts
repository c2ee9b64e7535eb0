/**
 * End-to-end: Codex itself (npm `@openai/codex`, the pinned version the captured request of
 * test/fixtures/clients/ came from) run as `codex exec --skip-git-repo-check "…"` with `CODEX_HOME`
 * in a fresh temporary folder holding a `config.toml` whose `model_provider` has `base_url` at the
 * gateway, `env_key` naming the variable that holds the service key and `wire_api = "responses"`,
 * `HOME` in another fresh folder and no OPENAI_* variable of the machine, against real processes:
 * admin, the proxy, and test/support/responses-stub.ts playing OpenAI's Responses API, an
 * OpenAI-compatible chat provider, Anthropic and Bedrock's Converse. Each test asserts what Codex printed
 * (the stub's answer) and what reached the stub: passthrough to OpenAI (Codex's request as sent, its
 * x-codex-* headers, logged by its session), translation to the chat provider, to Anthropic and to
 * Bedrock (its namespace tools flattened, the hosted web_search removed and recorded), a turn in which
 * the model calls `exec_command`, Codex runs it and sends the `function_call_output` back (all four ways), a router
 * mapping Codex's model, bring-your-own-key with `Svc-Auth`, and a wrong key. The CLI is installed on first use (test/support/agent-cli.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CODEX, ensureAgentCli, runAgentCli, type CliRun, type InstalledCli } from './support/agent-cli.ts';
import { AWS_TEST_ENV, clearStubRequests, fetchRecord, PROVIDER_KEYS, startStubbedStack, stubRequests, waitFor, type Stack, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

/** What the stub's recorded answers print (openai/responses-stream.sse, openai/chat-completion-stream.sse, anthropic/message-stream.sse, bedrock/converse-stream.jsonl). */
const RESPONSES_TEXT = '2 + 2 equals 4.';
const CHAT_TEXT = 'The capital of the UK is London.';
const ANTHROPIC_TEXT = 'Hello there!';
const BEDROCK_TEXT = readFileSync(new URL('./fixtures/providers/bedrock/converse-stream.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as Json).contentBlockDelta?.delta?.text ?? '')
  .join('');
/** The stub's function-call script (test/support/responses-stub.ts). */
const CALL_MARKER = 'Call the function ';
const FINAL_PREFIX = 'The function returned: ';
const CALL_ID = 'call_stub_responses_1';
/** The model of the captured request (test/fixtures/clients/codex-0.169.0.request.json), and the chat provider's. */
const CODEX_MODEL = 'gpt-4.1-nano';
const GROQ_MODEL = 'llama-3.3-70b-versatile';
const ANTHROPIC_MODEL = 'claude-sonnet-4-5';
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
/** The variable the config's `env_key` names: Codex sends its value as the Bearer key. */
const KEY_VARIABLE = 'SVC_GATEWAY_KEY';

let cli: InstalledCli;
let stubbed: StubbedStack;
let stack: Stack;
const folders: string[] = [];

before(async () => {
  cli = await ensureAgentCli(CODEX);
  console.log(`${CODEX.pkg}@${CODEX.version}: ${cli.installed ? 'installed' : 'found in the cache'} in ${Math.round(cli.ms)} ms`);
  stubbed = await startStubbedStack(
    'test/support/responses-stub.ts',
    (stub) => ({
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        groq: { 'base-url': `${stub}/openai/v1` },
        anthropic: { 'base-url': `${stub}/v1` },
        bedrock: { 'base-url': stub, region: 'us-east-1' },
      },
      routers: {
        // Codex's model, mapped to a Groq model: the whole session goes to a chat provider.
        coding: { 'load-balance': { chat: { strategy: 'model-mappings', providers: ['groq'], 'model-mappings': { [CODEX_MODEL]: [`groq/${GROQ_MODEL}`] } } } },
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

/** What reached the stub since the last {@link clearUpstream}. */
const upstream = (): Promise<Json[]> => stubRequests(stubbed.stubUrl);
const clearUpstream = (): Promise<void> => clearStubRequests(stubbed.stubUrl);

/** A fresh temporary folder, removed after the tests. */
function folder(prefix: string): string {
  const f = mkdtempSync(path.join(tmpdir(), prefix));
  folders.push(f);
  return f;
}

/**
 * The `config.toml` of a Codex pointed at the gateway: its own `model_provider` with `base_url`,
 * `env_key` and `wire_api = "responses"` (as README's Codex section shows), and no retries, so a
 * refused request fails at once.
 */
function codexConfig(baseUrl: string, model: string, providerLines: string[] = []): string {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "svc"',
    '',
    '[model_providers.svc]',
    'name = "svc gateway"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    `env_key = "${KEY_VARIABLE}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    ...providerLines,
    '',
  ].join('\n');
}

/**
 * Runs `codex exec --skip-git-repo-check <prompt>` with a fresh CODEX_HOME (holding
 * {@link codexConfig} for the gateway at `basePath`, default `/v1`, plus `providerLines` in the
 * provider's table) and a fresh HOME, the service key (or `key`) in {@link KEY_VARIABLE} and `env`.
 * Returns the run and the session id Codex reported.
 */
async function codex(
  prompt: string,
  o: { model?: string; basePath?: string; key?: string; cwd?: string; providerLines?: string[]; env?: Record<string, string> } = {},
): Promise<CliRun & { session: string | null }> {
  const codexHome = folder('codex-home-');
  writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(`${stack.gatewayUrl}${o.basePath ?? '/v1'}`, o.model ?? CODEX_MODEL, o.providerLines));
  const env = { HOME: folder('codex-user-'), CODEX_HOME: codexHome, [KEY_VARIABLE]: o.key ?? stack.apiKey, ...o.env };
  const run = await runAgentCli(cli, ['exec', '--skip-git-repo-check', prompt], { env, cwd: o.cwd ?? folder('codex-cwd-') });
  console.log(`codex exec ${JSON.stringify(prompt.slice(0, 40))} (${o.model ?? CODEX_MODEL} at ${o.basePath ?? '/v1'}): exit ${run.code} in ${Math.round(run.ms)} ms`);
  return { ...run, session: /^session id: (\S+)$/m.exec(run.stderr)?.[1] ?? null };
}

/** Asserts a run ended well and printed exactly `text` (its final message, one line) on stdout. */
function assertPrinted(run: CliRun, text: string): void {
  assert.equal(run.code, 0, `codex exited ${run.code ?? run.signal}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  assert.equal(run.stdout, `${text}\n`, `stderr: ${run.stderr}`);
}

/** The gateway's log records of one Codex session (by its session id), oldest first. */
async function sessionRecords(session: string | null, count: number): Promise<Json[]> {
  assert.ok(session, 'Codex reported its session id');
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

/** The removed-member paths a record lists (`svc-removed-members`, a JSON array). */
const removedOf = (rec: Json): string[] => JSON.parse(rec.request_properties['svc-removed-members'] ?? '[]') as string[];

/** Where a translated Codex request goes: Groq (chat completions), Anthropic (Messages) or Bedrock (Converse), all at the stub. */
type Translated = 'chat' | 'anthropic' | 'bedrock';

/** The gateway base path and model of Codex's config for each way its requests can go. */
const WAYS = {
  passthrough: { basePath: '/v1', model: CODEX_MODEL },
  chat: { basePath: '/ai', model: `groq/${GROQ_MODEL}` },
  anthropic: { basePath: '/ai', model: `anthropic/${ANTHROPIC_MODEL}` },
  bedrock: { basePath: '/ai', model: `bedrock/${BEDROCK_MODEL}` },
} as const;

/**
 * Asserts a request reached the stub as a streamed chat completion at Groq, a streamed Messages
 * request at Anthropic or a ConverseStream call at Bedrock (signed with the gateway's AWS key), with
 * the provider's key, Codex's tools flattened to function tools (the
 * `multi_agent_v1` namespace's as `multi_agent_v1__<name>`), web_search gone and no Responses-only
 * member or Codex header left.
 */
function assertTranslatedRequest(req: Json, to: Translated): void {
  if (to === 'chat') {
    assert.equal(req.url, '/openai/v1/chat/completions');
    assert.equal(req.body.model, GROQ_MODEL);
    assert.equal(req.headers.authorization, `Bearer ${PROVIDER_KEYS.GROQ_API_KEY}`);
  } else if (to === 'anthropic') {
    assert.equal(req.url, '/v1/messages');
    assert.equal(req.body.model, ANTHROPIC_MODEL);
    assert.equal(req.headers['x-api-key'], PROVIDER_KEYS.ANTHROPIC_API_KEY);
    assert.equal(req.headers.authorization, undefined, 'the service key does not go to Anthropic');
  } else {
    assert.match(decodeURIComponent(req.url), new RegExp(`^/model/${BEDROCK_MODEL.replace(/[.:]/g, '\\$&')}/converse-stream$`));
    assert.match(req.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//, 'signed with the gateway\'s AWS key');
  }
  if (to !== 'bedrock') assert.equal(req.body.stream, true);
  assert.equal(req.headers['x-codex-turn-metadata'], undefined, 'Codex headers go to OpenAI only');
  const names =
    to === 'bedrock'
      ? (req.body.toolConfig.tools as Json[]).map((t) => t.toolSpec?.name ?? `<${Object.keys(t)[0]}>`)
      : (req.body.tools as Json[]).map((t) => (to === 'chat' ? (t.type === 'function' ? t.function.name : `<${t.type}>`) : t.input_schema ? t.name : `<${t.type}>`));
  assert.ok(names.includes('exec_command'), `tools: ${names.join(', ')}`);
  assert.ok(names.includes('multi_agent_v1__spawn_agent'), `the namespace's tools flattened: ${names.join(', ')}`);
  assert.ok(names.every((n) => /^[a-zA-Z0-9_-]+$/.test(n)), `only function tools, named as the provider accepts: ${names.join(', ')}`);
  for (const member of ['input', 'include', 'store', 'client_metadata', 'prompt_cache_key']) assert.equal(req.body[member], undefined, member);
}

/** The text of a user turn in a chat or Messages body (string content, or text parts/blocks). */
const userTexts = (messages: Json[]): string =>
  messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content as Json[]).map((b) => b.text ?? '').join('')))
    .join('\n');

describe('Codex through the gateway', () => {
  test('passthrough to OpenAI (base_url …/v1): prints the recorded answer; its request, headers and the provider key reach OpenAI; logged by session', async () => {
    await clearUpstream();
    const run = await codex('What is 2+2?');
    assertPrinted(run, RESPONSES_TEXT);
    const sent = await upstream();
    assert.deepEqual(
      sent.map((r) => `${r.method} ${r.url}`),
      ['POST /v1/responses'],
    );
    const [req] = sent as [Json];
    assert.equal(req.body.model, CODEX_MODEL);
    assert.equal(req.body.stream, true);
    assert.equal(req.body.store, false);
    assert.deepEqual(req.body.include, ['reasoning.encrypted_content']);
    const types = (req.body.tools as Json[]).map((t) => t.type);
    assert.ok(types.includes('namespace') && types.includes('web_search'), `Codex's tools as sent: ${types.join(', ')}`);
    assert.equal(req.body.input.at(-1).content[0].text, 'What is 2+2?');
    assert.equal(req.headers.originator, 'codex_exec');
    assert.ok(req.headers['x-codex-turn-metadata'], 'the x-codex-* headers reach OpenAI');
    assert.equal(req.headers['session-id'], run.session);
    assert.equal(req.headers.authorization, `Bearer ${PROVIDER_KEYS.OPENAI_API_KEY}`, "the gateway's OpenAI key, not the service key");

    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'OPENAI');
    assert.equal(rec.request_properties['svc-endpoint'], 'responses');
    assert.equal(rec.request_properties['svc-session-id'], run.session);
    assert.equal(rec.response_status, 200);
    // The recorded stream's response.completed usage.
    assert.deepEqual([rec.prompt_tokens, rec.completion_tokens], [14, 9]);
  });

  const TRANSLATIONS = [
    { to: 'chat', text: CHAT_TEXT, provider: 'GROQ', usage: [78, 9] },
    { to: 'anthropic', text: ANTHROPIC_TEXT, provider: 'ANTHROPIC', usage: [11, 6] },
    { to: 'bedrock', text: BEDROCK_TEXT, provider: 'BEDROCK', usage: [13, 82] },
  ] as const;
  for (const t of TRANSLATIONS) {
    const what = { chat: 'chat completion at Groq', anthropic: 'Messages request at Anthropic', bedrock: 'ConverseStream call at Bedrock' }[t.to];
    test(`translation (base_url …/ai, model ${WAYS[t.to].model}): a streamed ${what}, its answer printed, web_search removed and recorded`, async () => {
      await clearUpstream();
      const run = await codex('say hi', WAYS[t.to]);
      assertPrinted(run, t.text);
      const sent = await upstream();
      assert.equal(sent.length, 1, `one request: ${JSON.stringify(sent.map((r) => r.url))}`);
      assertTranslatedRequest(sent[0]!, t.to);
      assert.ok(userTexts(sent[0]!.body.messages).includes('say hi'), "Codex's prompt reaches the provider");

      const [rec] = (await sessionRecords(run.session, 1)) as [Json];
      assert.equal(rec.provider, t.provider);
      assert.equal(rec.request_properties['svc-endpoint'], 'responses');
      assert.equal(rec.response_status, 200);
      // The recorded streams' usage: the chat stream's final chunk; Anthropic's message_start and message_delta; Converse's metadata.
      assert.deepEqual([rec.prompt_tokens, rec.completion_tokens], t.usage);
      const removed = removedOf(rec);
      assert.ok(removed.some((p) => /^tools\[\d+\]$/.test(p)), `the hosted web_search tool is recorded as removed: ${JSON.stringify(removed)}`);
      assert.ok(removed.includes('include'), `svc-removed-members: ${JSON.stringify(removed)}`);
    });
  }

  for (const how of ['passthrough', 'chat', 'anthropic', 'bedrock'] as const) {
    test(`an exec_command turn through ${how}: the model calls exec_command, Codex runs it and sends the function_call_output back, then prints the final answer`, async () => {
      await clearUpstream();
      const cwd = folder('codex-cwd-');
      const secret = `note-${randomUUID()}`;
      writeFileSync(path.join(cwd, 'note.txt'), `${secret}\n`);
      const command = 'cat note.txt | tr a-z A-Z';
      // `tr` upper-cases what `cat` read: the result can only come from a shell Codex ran.
      const prompt = `${CALL_MARKER}exec_command with ${JSON.stringify({ cmd: command })}`;
      const run = await codex(prompt, { cwd, ...WAYS[how] });
      const expected = secret.toUpperCase();
      assertPrinted(run, `${FINAL_PREFIX}${expected}`);
      const sent = await upstream();
      assert.equal(sent.length, 2, `a call, then its output: ${JSON.stringify(sent.map((r) => r.url))}`);
      const second = sent[1]!.body;
      if (how === 'passthrough') {
        assert.ok(sent.every((r) => r.url === '/v1/responses' && r.body.model === CODEX_MODEL));
        const [call, output] = (second.input as Json[]).slice(-2);
        assert.deepEqual([call.type, call.call_id, call.name, JSON.parse(call.arguments).cmd], ['function_call', CALL_ID, 'exec_command', command]);
        assert.equal(output.type, 'function_call_output');
        assert.equal(output.call_id, CALL_ID);
        assert.ok(String(output.output).trimEnd().endsWith(`\n${expected}`), `the command's output: ${JSON.stringify(output.output)}`);
      } else if (how === 'chat') {
        for (const r of sent) assertTranslatedRequest(r, how);
        const [assistant, tool] = (second.messages as Json[]).slice(-2);
        assert.equal(assistant.role, 'assistant');
        assert.deepEqual(
          assistant.tool_calls.map((c: Json) => [c.id, c.function.name, JSON.parse(c.function.arguments).cmd]),
          [[CALL_ID, 'exec_command', command]],
        );
        assert.equal(tool.role, 'tool');
        assert.equal(tool.tool_call_id, CALL_ID);
        assert.ok(JSON.stringify(tool.content).includes(expected), `the command's output: ${JSON.stringify(tool.content)}`);
      } else if (how === 'bedrock') {
        for (const r of sent) assertTranslatedRequest(r, how);
        const [assistant, user] = (second.messages as Json[]).slice(-2);
        assert.equal(assistant.role, 'assistant');
        const call = (assistant.content as Json[]).find((b) => b.toolUse)!.toolUse;
        assert.deepEqual([call.toolUseId, call.name, call.input.cmd], [CALL_ID, 'exec_command', command]);
        assert.equal(user.role, 'user');
        const result = (user.content as Json[]).find((b) => b.toolResult)!.toolResult;
        assert.equal(result.toolUseId, CALL_ID);
        assert.ok(JSON.stringify(result.content).includes(expected), `the command's output: ${JSON.stringify(result.content)}`);
      } else {
        for (const r of sent) assertTranslatedRequest(r, how);
        const [assistant, user] = (second.messages as Json[]).slice(-2);
        assert.equal(assistant.role, 'assistant');
        const call = (assistant.content as Json[]).find((b) => b.type === 'tool_use')!;
        assert.deepEqual([call.id, call.name, call.input.cmd], [CALL_ID, 'exec_command', command]);
        assert.equal(user.role, 'user');
        const result = (user.content as Json[]).find((b) => b.type === 'tool_result')!;
        assert.equal(result.tool_use_id, CALL_ID);
        assert.ok(JSON.stringify(result.content).includes(expected), `the command's output: ${JSON.stringify(result.content)}`);
      }
      const records = await sessionRecords(run.session, 2);
      assert.deepEqual(
        records.map((r) => r.provider),
        { passthrough: ['OPENAI', 'OPENAI'], chat: ['GROQ', 'GROQ'], anthropic: ['ANTHROPIC', 'ANTHROPIC'], bedrock: ['BEDROCK', 'BEDROCK'] }[how],
      );
    });
  }

  test("a router (base_url …/router/coding) maps Codex's model to a chat provider's", async () => {
    await clearUpstream();
    const run = await codex('say hi', { basePath: '/router/coding' });
    assertPrinted(run, CHAT_TEXT);
    const sent = await upstream();
    assert.equal(sent.length, 1, `one request: ${JSON.stringify(sent.map((r) => r.url))}`);
    assertTranslatedRequest(sent[0]!, 'chat');
  });

  test("bring your own key: the service key in Svc-Auth (env_http_headers), the user's own key goes to OpenAI", async () => {
    await clearUpstream();
    const own = 'sk-proj-users-own-openai-key';
    const run = await codex('What is 2+2?', { key: own, providerLines: ['env_http_headers = { "Svc-Auth" = "SVC_AUTH_HEADER" }'], env: { SVC_AUTH_HEADER: `Bearer ${stack.apiKey}` } });
    assertPrinted(run, RESPONSES_TEXT);
    const [req, ...more] = await upstream();
    assert.equal(more.length, 0);
    assert.equal(req!.url, '/v1/responses');
    assert.equal(req!.headers.authorization, `Bearer ${own}`, "the user's key, not the gateway's");
    assert.equal(req!.headers['svc-auth'], undefined, 'the service key does not go to OpenAI');
    const [rec] = (await sessionRecords(run.session, 1)) as [Json];
    assert.equal(rec.provider, 'OPENAI');
  });

  test('the response cache (http_headers): a second identical run is answered from the cache; the stream replay prints the same', async () => {
    await clearUpstream();
    // `prompt_cache_key`, `client_metadata` and the input items' ids are each run's own; the rest of
    // the body is the same for the same prompt in the same folder with the same homes.
    const ignore = 'prompt_cache_key,client_metadata,input.*.id';
    const headers = `http_headers = { "Svc-Cache-Enabled" = "true", "Svc-Cache-Ignore-Keys" = "${ignore}", "Svc-Cache-Seed" = "${randomUUID()}" }`;
    const codexHome = folder('codex-cache-home-');
    writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(`${stack.gatewayUrl}/v1`, CODEX_MODEL, [headers]));
    const same = { cwd: folder('codex-cache-cwd-'), env: { HOME: folder('codex-cache-user-'), CODEX_HOME: codexHome } };
    const first = await codex('What is 2+2?', same);
    assertPrinted(first, RESPONSES_TEXT);
    assert.equal((await upstream()).length, 1, 'the first run reached OpenAI');
    const second = await codex('What is 2+2?', same);
    assertPrinted(second, RESPONSES_TEXT);
    assert.equal((await upstream()).length, 1, 'the second run was answered from the cache');
    const [miss] = (await sessionRecords(first.session, 1)) as [Json];
    const [hit] = (await sessionRecords(second.session, 1)) as [Json];
    assert.equal(hit.cache_reference_id, miss.request_id);
    assert.deepEqual([hit.prompt_tokens, hit.completion_tokens, hit.cost], [miss.prompt_tokens, miss.completion_tokens, 0]);
  });

  test('a wrong service key: Codex reports the 401 and nothing reaches the provider', async () => {
    await clearUpstream();
    const run = await codex('What is 2+2?', { key: 'sk-svc-not-a-key' });
    assert.notEqual(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.match(run.stdout + run.stderr, /401/);
    assert.match(run.stdout + run.stderr, /invalid API key/);
    assert.deepEqual(await upstream(), []);
  });
});
