import { readFileSync } from 'node:fs';
import { startStub, startProcess, stopAll, load, writeConfig } from './lib.ts';
const st = (pid: number) => { const s = readFileSync(`/proc/${pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return [Number(f[11]) * 10, Number(f[12]) * 10]; };
const stub = await startStub();
const stubUrl = `http://127.0.0.1:${stub.port}`;
const withRouter = process.argv[2] === 'router';
const cfg = writeConfig({ svc: { features: 'none' }, providers: { openai: { 'base-url': `${stubUrl}/v1` } }, ...(withRouter ? { routers: { default: { 'load-balance': { chat: { strategy: 'latency', providers: ['openai'] } } } } } : {}) });
const proxy = await startProcess('proxy/main.ts', { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', OPENAI_API_KEY: 'sk-x' }, 'proxy.ready', ['--config', cfg]);
const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Write one sentence about load testing an HTTP proxy.' }], max_tokens: 64, temperature: 0 });
const t = { key: 'c', label: 'c', url: `http://127.0.0.1:${proxy.port}/ai/chat/completions`, headers: { 'content-type': 'application/json' }, body: Buffer.from(body), pid: undefined };
for (let round = 0; round < 4; round++) {
  await load(t, { connections: 50, pipelining: 1, duration: 1 });
  const [u0, s0] = st(proxy.child.pid!);
  const r = await load(t, { connections: 50, pipelining: 1, duration: 5 });
  const [u1, s1] = st(proxy.child.pid!);
  console.log(withRouter ? 'router' : 'plain', Math.round(r.rps), 'user µs/req', ((u1 - u0) * 1000 / r.ok).toFixed(1), 'sys µs/req', ((s1 - s0) * 1000 / r.ok).toFixed(1));
}
await stopAll(proxy, stub);
