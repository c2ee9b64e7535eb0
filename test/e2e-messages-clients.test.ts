/**
 * End-to-end: the Anthropic Messages clients people use besides the Anthropic SDK and Claude Code,
 * pointed at the gateway with nothing but a base URL and the service key, against real processes
 * (admin, the proxy, and test/support/claude-code-stub.ts playing Anthropic and an OpenAI-compatible
 * provider from the recorded fixtures, with its scripted Bash tool call):
 *
 * - the Vercel AI SDK's Anthropic provider (`createAnthropic({baseURL})`) with `generateText` and
 *   `streamText`, passed through to Anthropic and translated to OpenAI's chat completions, and a tool
 *   the SDK runs between two steps;
 * - LangChain's `ChatAnthropic` (`anthropicApiUrl`), `invoke` and `stream`, both ways, and a tool call
 *   it reads back.
 *
 * Each test asserts what the client returned and what reached the provider (path, model, the tool
 * result sent back), so a client reading the gateway's answer wrongly, or a gateway sending the
 * provider the wrong thing, fails it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { clearStubRequests, PROVIDER_KEYS, startStubbedStack, stubRequests, type Stack, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

const fixture = (p: string): Json => JSON.parse(readFileSync(new URL(`./fixtures/providers/${p}`, import.meta.url), 'utf8'));
/** What the stub's recorded answers say (test/support/claude-code-stub.ts serves them byte for byte). */
const ANTHROPIC_TEXT = (fixture('anthropic/message.json').content as Json[])[0]!.text as string;
const ANTHROPIC_STREAM_TEXT = 'Hello there!'; // anthropic/message-stream.sse
const CHAT_TEXT = fixture('openai/chat-completion.json').choices[0].message.content as string;
const CHAT_STREAM_TEXT = 'The capital of the UK is London.'; // openai/chat-completion-stream.sse
/** The stub's tool-use script: this phrase makes it call `Bash` with the rest of the line; a tool result gets the final text. */
const BASH_MARKER = 'Run this command with Bash: ';
const FINAL_PREFIX = 'The command printed: ';

/** The model of each way: passed through to Anthropic, or translated to OpenAI's chat completions. */
const WAYS = [
  { how: 'passthrough', model: 'claude-sonnet-4-5', url: '/v1/messages', text: ANTHROPIC_TEXT, streamText: ANTHROPIC_STREAM_TEXT },
  { how: 'translation', model: 'openai/gpt-4o-mini', url: '/v1/chat/completions', text: CHAT_TEXT, streamText: CHAT_STREAM_TEXT },
] as const;

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  stubbed = await startStubbedStack('test/support/claude-code-stub.ts', (stub) => ({
    providers: { anthropic: { 'base-url': `${stub}/v1` }, openai: { 'base-url': `${stub}/v1` } },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** What reached the stub since the last {@link clearUpstream}. */
const upstream = (): Promise<Json[]> => stubRequests(stubbed.stubUrl);
const clearUpstream = (): Promise<void> => clearStubRequests(stubbed.stubUrl);

/** The `count` requests that reached the stub for `way`, checked to have gone where it sends them, with the provider's key and model. */
async function sentBy(way: (typeof WAYS)[number], count: number): Promise<Json[]> {
  const sent = await upstream();
  assert.deepEqual(
    sent.map((r) => `${r.method} ${r.url}`),
    Array(count).fill(`POST ${way.url}`),
  );
  for (const r of sent) {
    if (way.how === 'passthrough') assert.equal(r.headers['x-api-key'], PROVIDER_KEYS.ANTHROPIC_API_KEY, "the gateway's Anthropic key, not the service key");
    else assert.equal(r.headers.authorization, `Bearer ${PROVIDER_KEYS.OPENAI_API_KEY}`);
    assert.equal(r.body.model, way.how === 'passthrough' ? way.model : 'gpt-4o-mini');
  }
  return sent;
}

/** The text of the tool result the second request carried back, in the provider's format. */
function toolResultSent(way: (typeof WAYS)[number], second: Json): string {
  const last = second.body.messages.at(-1);
  if (way.how === 'translation') {
    assert.equal(last.role, 'tool');
    return typeof last.content === 'string' ? last.content : last.content.map((p: Json) => p.text).join('');
  }
  const result = last.content.find((b: Json) => b.type === 'tool_result');
  return typeof result.content === 'string' ? result.content : result.content.map((b: Json) => b.text).join('');
}

describe("the Vercel AI SDK's Anthropic provider through the gateway", () => {
  const anthropic = () => createAnthropic({ baseURL: `${stack.gatewayUrl}/v1`, apiKey: stack.apiKey });

  for (const way of WAYS) {
    test(`generateText and streamText, ${way.how}`, async () => {
      await clearUpstream();
      const generated = await generateText({ model: anthropic()(way.model), prompt: 'say hi', maxOutputTokens: 64 });
      assert.equal(generated.text, way.text);
      assert.ok(generated.usage.inputTokens! > 0 && generated.usage.outputTokens! > 0, JSON.stringify(generated.usage));
      const streamed = streamText({ model: anthropic()(way.model), prompt: 'say hi', maxOutputTokens: 64 });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      assert.equal(text, way.streamText);
      assert.equal(await streamed.finishReason, 'stop');
      const [first, second] = await sentBy(way, 2);
      assert.notEqual(first!.body.stream, true, 'generateText does not stream');
      assert.equal(second!.body.stream, true);
    });

    test(`a tool the SDK runs between two steps, ${way.how}`, async () => {
      await clearUpstream();
      const secret = `out-${randomUUID()}`;
      const ran: string[] = [];
      const result = await generateText({
        model: anthropic()(way.model),
        prompt: `${BASH_MARKER}echo hi`,
        maxOutputTokens: 256,
        tools: {
          Bash: tool({
            description: 'Runs a shell command',
            inputSchema: z.object({ command: z.string(), description: z.string().optional() }),
            execute: async ({ command }) => {
              ran.push(command);
              return secret;
            },
          }),
        },
        stopWhen: stepCountIs(3),
      });
      assert.deepEqual(ran, ['echo hi'], 'the SDK ran the call the provider made');
      // The stub's final answer quotes the tool result it received.
      assert.ok(result.text.startsWith(FINAL_PREFIX) && result.text.includes(secret), result.text);
      const [, second] = await sentBy(way, 2);
      assert.ok(toolResultSent(way, second!).includes(secret), 'the tool result reached the provider');
    });
  }
});

describe("LangChain's ChatAnthropic through the gateway", () => {
  const chat = (model: string) => new ChatAnthropic({ model, anthropicApiUrl: stack.gatewayUrl, apiKey: stack.apiKey, maxTokens: 64, maxRetries: 0 });

  for (const way of WAYS) {
    test(`invoke and stream, ${way.how}`, async () => {
      await clearUpstream();
      const answer = await chat(way.model).invoke('say hi');
      assert.equal(answer.text, way.text);
      assert.ok((answer.usage_metadata?.input_tokens ?? 0) > 0, JSON.stringify(answer.usage_metadata));
      let text = '';
      for await (const chunk of await chat(way.model).stream('say hi')) text += chunk.text;
      assert.equal(text, way.streamText);
      await sentBy(way, 2);
    });

    test(`a tool call bound with bindTools is read back, ${way.how}`, async () => {
      await clearUpstream();
      const bash = { name: 'Bash', description: 'Runs a shell command', schema: z.object({ command: z.string(), description: z.string().optional() }) };
      const answer = await chat(way.model).bindTools([bash]).invoke(`${BASH_MARKER}ls -la`);
      assert.equal(answer.tool_calls?.length, 1, JSON.stringify(answer.content));
      assert.equal(answer.tool_calls![0]!.name, 'Bash');
      assert.equal(answer.tool_calls![0]!.args.command, 'ls -la');
      const [sent] = await sentBy(way, 1);
      const tools = sent!.body.tools as Json[];
      assert.ok(tools.some((t) => (t.name ?? t.function?.name) === 'Bash'), 'the tool reached the provider');
    });
  }
});
