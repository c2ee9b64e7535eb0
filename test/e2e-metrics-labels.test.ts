/**
 * End-to-end: what the proxy's Prometheus metrics (proxy/metrics.ts, read at `GET /metrics`) count, through the
 * running processes. `svc_proxy_requests_total` counts each request once (a router's retries are counted apart, in
 * `svc_proxy_router_retries_total`, and no longer as `route="router:retry"` requests), with the router's name as its
 * `router` label; the time-to-first-token histogram observes streamed 2xx answers only; and a cache hit's latency
 * is observed under `provider="cache"`, not under the provider whose answer was stored.
 *
 * Real processes: stub upstream (test/support/stub-upstream.ts: `error-500`, streams, the recorded answers), admin
 * on PostgreSQL, the proxy. Each case reads the counters before and after its requests (deltas).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { defaultConfig, startStack, uniq, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => {
      const base = defaultConfig(stubUrl);
      return {
        ...base,
        routers: {
          ...(base.routers as object),
          retrying: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai', 'groq'] } }, retries: { 'max-retries': 1, 'min-delay': '10ms', 'max-delay': '50ms' } },
        },
      };
    },
  });
});
after(() => stack?.stop());

/** The sum of the series of metric `name` whose labels include `labels` (0 when none). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const has = new Map([...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).every(([k, v]) => has.get(k) === v)) sum += Number(m[3]);
  }
  return sum;
}

/** Posts `body` to `path` and reads the whole answer; its status and headers. */
async function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
  });
  await res.arrayBuffer();
  return res;
}

const messages = (text: string) => [{ role: 'user', content: text }];

test('a router request with a retry: counted once as a request (router label), its retry in svc_proxy_router_retries_total', async () => {
  const requestsBefore = await metric('svc_proxy_requests_total', { route: 'router:chat', router: 'retrying' });
  const retriesBefore = await metric('svc_proxy_router_retries_total', { router: 'retrying', status: '500' });
  const res = await post('/router/retrying/chat/completions', { model: 'error-500', messages: messages('retry') });
  assert.equal(res.status, 500);
  await waitFor(async () => (await metric('svc_proxy_requests_total', { route: 'router:chat', router: 'retrying' })) > requestsBefore);
  assert.equal((await metric('svc_proxy_requests_total', { route: 'router:chat', router: 'retrying' })) - requestsBefore, 1, 'one request');
  assert.equal((await metric('svc_proxy_router_retries_total', { router: 'retrying', status: '500' })) - retriesBefore, 1, 'one retry');
  assert.equal(await metric('svc_proxy_requests_total', { route: 'router:retry' }), 0, 'no retry counted as a request');
});

test('time to first token: observed for a streamed 2xx answer only, not for a non-streamed one nor a streamed error', async () => {
  const ttft = (provider: string) => metric('svc_proxy_time_to_first_token_seconds_count', { provider });
  const done = (provider: string) => metric('svc_proxy_request_duration_seconds_count', { provider });

  const deepseekTtft = await ttft('deepseek');
  const deepseekDone = await done('deepseek');
  assert.equal((await post('/ai/chat/completions', { model: 'deepseek/deepseek-chat', messages: messages(`plain ${uniq()}`) })).status, 200);
  await waitFor(async () => (await done('deepseek')) > deepseekDone);
  assert.equal(await ttft('deepseek'), deepseekTtft, 'a non-streamed answer has no time to first token');

  const openaiTtft = await ttft('openai');
  const openaiDone = await done('openai');
  assert.equal((await post('/ai/chat/completions', { model: 'openai/error-500', stream: true, messages: messages(`error ${uniq()}`) })).status, 500);
  await waitFor(async () => (await done('openai')) > openaiDone);
  assert.equal(await ttft('openai'), openaiTtft, 'an error answered to a streamed request has no time to first token');

  const groqTtft = await ttft('groq');
  assert.equal((await post('/ai/chat/completions', { model: 'groq/llama-3.1-8b-instant', stream: true, messages: messages(`stream ${uniq()}`) })).status, 200);
  await waitFor(async () => (await ttft('groq')) > groqTtft);
  assert.equal((await ttft('groq')) - groqTtft, 1, 'a streamed 2xx answer is observed once');
});

test('a cache hit’s latency is observed under provider="cache", not under the provider of the stored answer', async () => {
  const body = { model: 'deepseek/deepseek-chat', messages: messages(`cached ${uniq()}`) };
  const headers = { 'svc-cache-enabled': 'true' };
  const deepseekBefore = await metric('svc_proxy_request_duration_seconds_count', { provider: 'deepseek' });
  const cacheBefore = await metric('svc_proxy_request_duration_seconds_count', { provider: 'cache' });
  const first = await post('/ai/chat/completions', body, headers);
  assert.equal(first.headers.get('svc-cache'), 'MISS');
  let hit: Response | null = null;
  await waitFor(async () => {
    const res = await post('/ai/chat/completions', body, headers);
    if (res.headers.get('svc-cache') === 'HIT') hit = res;
    return hit !== null;
  });
  assert.equal(hit!.status, 200);
  await waitFor(async () => (await metric('svc_proxy_request_duration_seconds_count', { provider: 'cache' })) > cacheBefore);
  const deepseekCount = await metric('svc_proxy_request_duration_seconds_count', { provider: 'deepseek' });
  const cacheCount = await metric('svc_proxy_request_duration_seconds_count', { provider: 'cache' });
  // Misses (the first, and any sent before the answer was stored) are the provider's; the hit is the cache's.
  assert.equal(cacheCount - cacheBefore, 1, 'the hit under provider="cache"');
  assert.ok(deepseekCount - deepseekBefore >= 1, 'the miss under its provider');
});
