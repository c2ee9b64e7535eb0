/**
 * End-to-end: an Azure OpenAI chat stream through /ai/chat/completions. Azure's first chunk is the prompt's
 * content-filter result with an empty `id` and `model` and `created: 0` (and a later content-filter chunk is
 * the same); the client gets Azure's bytes exactly, and the log takes the id, model and created time from the
 * first chunk that has them. Azure is played by test/support/provider-quirks-stub.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fetchRecord, startStubbedStack, type StubbedStack } from './support/stack.ts';

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack(
    'test/support/provider-quirks-stub.ts',
    (stub) => ({ providers: { azure: { 'base-url': stub, deployments: { 'gpt-4o-mini': 'prod-mini' }, 'api-version': '2024-10-21' } } }),
    { AZURE_OPENAI_API_KEY: 'azure-provider-secret' },
  );
});
after(async () => {
  await s?.stop();
});

test("an Azure stream is passed through byte for byte and logged with the model and id of its first chunk that has them", async () => {
  const body = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] };
  const expected = await (await fetch(`${s.stubUrl}/openai/deployments/prod-mini/chat/completions`, { method: 'POST', body: JSON.stringify(body) })).text();
  assert.match(expected, /^data: \{"choices":\[\],"created":0,"id":"","model":""/, "the stub's stream starts with Azure's content-filter chunk");
  const res = await fetch(`${s.stack.gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, model: 'azure/gpt-4o-mini' }),
  });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), expected);
  const rec = await fetchRecord(s.stack, res.headers.get('svc-id')!);
  assert.equal(rec.response_model, 'gpt-4o-mini-2024-07-18');
  assert.equal(rec.model, 'gpt-4o-mini-2024-07-18');
  assert.equal(rec.response_body.id, 'chatcmpl-AZURE1');
  assert.equal(rec.response_body.model, 'gpt-4o-mini-2024-07-18');
  assert.equal(rec.response_body.created, 1729000000);
  assert.equal(rec.response_body.choices[0].message.content, 'Hello there');
  assert.equal(rec.response_body.choices[0].finish_reason, 'stop');
  assert.equal(rec.prompt_tokens, 10);
  assert.equal(rec.completion_tokens, 3);
});
