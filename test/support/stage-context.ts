/**
 * Stage unit tests without a server: a gateway runtime built from a config document, and request
 * contexts over stand-ins for node:http's request and response (headers, a body stream, and a
 * response that keeps what was written).
 */
import { PassThrough } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { buildConfig } from '../../shared/config.ts';
import type { KeyEntry } from '../../shared/controlplane.ts';
import type { ControlPlaneClient, PromptLookup } from '../../proxy/controlplane.ts';
import { responseObservers, requestPipeline } from '../../proxy/gateway.ts';
import type { Observers } from '../../proxy/observers/types.ts';
import { createContext, type RequestContext } from '../../proxy/pipeline/context.ts';
import type { Pipeline } from '../../proxy/pipeline/pipeline.ts';
import { createRuntime, type GatewayRuntime } from '../../proxy/pipeline/runtime.ts';
import type { RateLimiter } from '../../proxy/ratelimit/index.ts';

/** Provider keys of the test environment (never sent anywhere: no stage test dispatches). */
export const TEST_ENV = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test', GROQ_API_KEY: 'gsk-test', MISTRAL_API_KEY: 'mk-test' };

/** Options of {@link makeRuntime}. */
export interface RuntimeOptions {
  /** The gateway.yaml document (`svc.features` defaults to none). */
  doc?: Record<string, unknown>;
  /** Environment for provider keys (default {@link TEST_ENV}). */
  env?: Record<string, string>;
  controlPlane?: ControlPlaneClient | null;
  rateLimiter?: RateLimiter | null;
  /** Stages to run instead of the gateway's composition (runner tests). */
  pipeline?: Pipeline;
  observers?: Observers;
  /** Log lines written (pino JSON). */
  lines?: string[];
}

/** A runtime like createGateway's, without a server. Close it with {@link closeRuntime}. */
export function makeRuntime(opts: RuntimeOptions = {}): GatewayRuntime {
  const doc = { svc: { features: 'none' }, ...opts.doc };
  const config = buildConfig(doc, opts.env ?? TEST_ENV);
  const lines = opts.lines ?? [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) });
  const rateLimiter = opts.rateLimiter ?? null;
  return createRuntime(
    { config, logger, controlPlane: opts.controlPlane ?? null, metrics: null, rateLimiter },
    opts.pipeline ?? requestPipeline(config.features, rateLimiter),
    opts.observers ?? responseObservers(config.features, false),
  );
}

/** Stops the runtime's sweep timer and upstream pools. */
export async function closeRuntime(gw: GatewayRuntime): Promise<void> {
  gw.deadlines.close();
  await gw.upstreamAgent.destroy();
  await gw.rateLimiter?.close();
}

/** A response stand-in: what the gateway wrote (status, headers, body) and whether it ended. */
export class FakeResponse {
  statusCode = 0;
  headers: Record<string, unknown> = {};
  body = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  private handlers = new Map<string, Array<() => void>>();

  writeHead(status: number, headers: Record<string, unknown> = {}): this {
    this.statusCode = status;
    this.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    this.headersSent = true;
    return this;
  }

  write(chunk: string | Buffer): boolean {
    this.body += chunk.toString();
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (chunk !== undefined) this.body += chunk.toString();
    this.headersSent = true;
    this.writableEnded = true;
    this.writableFinished = true;
    for (const f of this.handlers.get('close') ?? []) f.call(this);
    return this;
  }

  once(event: string, f: () => void): this {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), f]);
    return this;
  }

  /** The JSON body written. */
  json(): any {
    return JSON.parse(this.body);
  }
}

/** A request stand-in: a stream carrying the body, with node:http's header views. */
export type FakeRequest = PassThrough & { headers: Record<string, string>; rawHeaders: string[]; method: string; url: string; complete: boolean };

/** What {@link makeContext} builds a request from. */
export interface RequestSpec {
  path?: string;
  method?: string;
  /** Header names as the client writes them. */
  headers?: Record<string, string>;
  /**
   * The body: an object is sent as JSON, a string or Buffer as it is. It is set as `ctx.rawBody`
   * (as read-body leaves it) unless `stream` is true; then it is left unread on the request stream.
   */
  body?: unknown;
  stream?: boolean;
}

/** A fake request carrying `spec`. */
export function makeRequest(spec: RequestSpec = {}): FakeRequest {
  const req = new PassThrough() as FakeRequest;
  const headers = spec.headers ?? {};
  req.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  req.rawHeaders = Object.entries(headers).flat();
  req.method = spec.method ?? 'POST';
  req.url = spec.path ?? '/ai/chat/completions';
  req.complete = !spec.stream;
  // What lingerAfterAnswer (an answer before the body was read) needs of the connection.
  (req as unknown as { socket: unknown }).socket = Object.assign(new PassThrough(), { destroySoon: undefined });
  return req;
}

/** The body bytes of a spec. */
export function bodyBytes(body: unknown): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}

/** A context on `gw` for `spec`, with a {@link FakeResponse}. */
export function makeContext(gw: GatewayRuntime, spec: RequestSpec = {}): RequestContext & { res: FakeResponse & ServerResponse; req: FakeRequest & IncomingMessage } {
  const req = makeRequest(spec);
  const res = new FakeResponse();
  const ctx = createContext(gw, req as unknown as IncomingMessage, res as unknown as ServerResponse, spec.path ?? '/ai/chat/completions');
  if (spec.body !== undefined && !spec.stream) ctx.rawBody = bodyBytes(spec.body);
  return ctx as RequestContext & { res: FakeResponse & ServerResponse; req: FakeRequest & IncomingMessage };
}

/** A control plane stand-in: a key set, prompts by id, and the keys marked used. */
export function fakeControlPlane(opts: { ready?: boolean; keys?: Record<string, KeyEntry>; prompts?: Record<string, PromptLookup> } = {}): ControlPlaneClient & { used: KeyEntry[] } {
  const used: KeyEntry[] = [];
  const fake = {
    ready: opts.ready ?? true,
    used,
    lookup: (hash: string) => opts.keys?.[hash],
    markUsed: (entry: KeyEntry) => void used.push(entry),
    getPrompt: (promptId: string): PromptLookup => opts.prompts?.[promptId] ?? { ok: false, status: 404, error: `prompt ${promptId} not found` },
    health: () => ({ connected: true, since: new Date(0).toISOString(), reconnectAttempts: 0, keysHeld: Object.keys(opts.keys ?? {}).length }),
    queue: { push: () => undefined, getStats: () => null },
  };
  return fake as unknown as ControlPlaneClient & { used: KeyEntry[] };
}
