/**
 * The setup the end-to-end member tests share (what becomes of a request's members on their way to a provider,
 * test/e2e-*-members.test.ts): a stub playing the provider and a stack over it, started before the file's tests and
 * stopped after them; the real clients pointed at the gateway; and the provider calls the stub recorded.
 */
import { after, before } from 'node:test';
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, streamText } from 'ai';
import OpenAI from 'openai';
import type { z } from 'zod';
import { AWS_TEST_ENV, clearStubRequests, startStubbedStack, stubRequests, type Stack, type StubbedStack } from './stack.ts';

type Json = Record<string, any>;

/** A member test file's stubbed stack and the clients calling it; `stack` and `stubUrl` are read once `before` has run. */
export interface MembersStack {
  /** The running stack (admin, the proxy, the stack's own test/support/stub-upstream.ts). */
  readonly stack: Stack;
  /** The URL of the stub playing the provider. */
  readonly stubUrl: string;
  /** An `openai` SDK client of the gateway's `/ai` path (no retries). */
  openai(): OpenAI;
  /** The AI SDK's OpenAI provider of the gateway's `/ai` path. */
  aiSdk(): OpenAIProvider;
  /** The POSTs (the provider calls) that reached the stub since they were last cleared. */
  sent(): Promise<Json[]>;
  /** Forgets the requests the stub recorded. */
  clear(): Promise<void>;
  /** The AI SDK's `generateText` with `Output.object({ schema })` through `openai.chat(model)`: the object it got. */
  aiSdkObject(model: string, schema: z.ZodType): Promise<unknown>;
  /** The AI SDK's `streamText` with `Output.object({ schema })` through `openai.chat(model)`: the object of the stream. */
  aiSdkStreamedObject(model: string, schema: z.ZodType): Promise<unknown>;
  /** LangChain's `ChatOpenAI` `withStructuredOutput(schema, { name })` (its json_schema method): the object it got. */
  langChainObject(model: string, schema: z.ZodType<Record<string, unknown>>, name: string): Promise<unknown>;
}

/**
 * Registers the file's `before` and `after`: starts the stub `entry` and a stack whose config is
 * `config(stubUrl, stackStubUrl)` (test/support/stack.ts `startStubbedStack`), and stops them; returns its helpers.
 */
export function useMembersStack(
  entry: string,
  config: (stubUrl: string, stackStubUrl: string) => Record<string, unknown>,
  proxyEnv?: NodeJS.ProcessEnv,
): MembersStack {
  let stubbed: StubbedStack | undefined;
  before(async () => {
    stubbed = await startStubbedStack(entry, config, proxyEnv);
  });
  after(() => stubbed?.stop());
  const started = (): StubbedStack => {
    if (!stubbed) throw new Error('the members stack is not started (its before has not run)');
    return stubbed;
  };
  const members: MembersStack = {
    get stack() {
      return started().stack;
    },
    get stubUrl() {
      return started().stubUrl;
    },
    openai: () => new OpenAI({ baseURL: `${members.stack.gatewayUrl}/ai`, apiKey: members.stack.apiKey, maxRetries: 0 }),
    aiSdk: () => createOpenAI({ baseURL: `${members.stack.gatewayUrl}/ai`, apiKey: members.stack.apiKey }),
    sent: async () => (await stubRequests(members.stubUrl)).filter((r) => r.method === 'POST'),
    clear: () => clearStubRequests(members.stubUrl),
    async aiSdkObject(model, schema) {
      const result = await generateText({ model: members.aiSdk().chat(model), output: Output.object({ schema }), prompt: 'Where?', maxRetries: 0 });
      return result.output;
    },
    async aiSdkStreamedObject(model, schema) {
      const result = streamText({ model: members.aiSdk().chat(model), output: Output.object({ schema }), prompt: 'Where?', maxRetries: 0 });
      return await result.output;
    },
    langChainObject(model, schema, name) {
      const chat = new ChatOpenAI({ model, apiKey: members.stack.apiKey, configuration: { baseURL: `${members.stack.gatewayUrl}/ai` }, maxRetries: 0 });
      return chat.withStructuredOutput(schema, { name }).invoke('Where?');
    },
  };
  return members;
}

/** {@link useMembersStack} over test/support/bedrock-stub.ts playing Bedrock (region us-east-1), the proxy signing with the test AWS key. */
export function useBedrockMembersStack(): MembersStack {
  return useMembersStack('test/support/bedrock-stub.ts', (stub) => ({ providers: { bedrock: { 'base-url': stub, region: 'us-east-1' } } }), AWS_TEST_ENV);
}
