/**
 * The proxy's end of the control plane: one WebSocket to admin, authenticated with
 * `SVC_CONTROL_PLANE_API_KEY`. It holds the authorized key hashes (lru-cache) so authentication
 * needs no network call per request, ships log records from the {@link LogQueue}, and fetches
 * managed prompt versions (cached, invalidated by admin).
 *
 * The link reconnects by itself, forever, with exponential backoff and full jitter (start 0.5 s,
 * cap 30 s, reset after a minute connected) — AWS Architecture Blog, "Exponential Backoff And
 * Jitter" (Marc Brooker, 2015). Cached keys stay valid while the link is down for any other reason
 * (admin down, network); until the first snapshot arrives, {@link ControlPlaneClient.ready} is false
 * and the proxy answers 503.
 *
 * The proxy's own key gone: when admin ends the link because that key was revoked or deleted
 * (`KEY_GONE_CLOSE_CODE`, 4001), or refuses a connection with 401 (revoked while admin was away,
 * or never valid), the proxy can no longer learn of revocations, so it stops trusting the keys it
 * holds: it drops them ({@link ControlPlaneClient.keyRevoked} true, `ready` false: every request is
 * answered 503 `control_plane_key_revoked`, and /health 503), logs one error telling the operator
 * to give it a new key (`SVC_CONTROL_PLANE_API_KEY`, then restart), and keeps reconnecting: a link
 * admin accepts again delivers a snapshot, which ends that state. /health's `downReason` says why
 * the link is down, and the records the full log queue then drops are logged at error level,
 * one line per `dropReportIntervalMs` with their number, not one per record. A link on
 * which nothing arrives (admin pings every 15 s) for `livenessTimeoutMs` is considered dead and
 * replaced, so a silent network partition is detected too.
 *
 * Keys authenticated are marked used ({@link ControlPlaneClient.markUsed}, O(1), nothing allocated
 * once a key is marked) and their ids reported to admin every `usageReportIntervalMs` (`keys.used`),
 * which writes `api_key.last_used_at`; while the link is down the marks are kept for the next link.
 *
 * `wss://` URLs use TLS (certificate verification always on); `caFile` adds a private CA (PEM).
 * Every message received is validated (superstruct, see shared/controlplane.ts); a malformed one is
 * logged and dropped. Only the control-plane API key and log records travel on the link: provider
 * keys never do.
 *
 * `ws` is imported on the first connection attempt, not when this module is: a proxy with
 * `svc.features: none` (no control plane) never loads it.
 */
import { readFileSync } from 'node:fs';
import { randomUUID, X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { LRUCache } from 'lru-cache';
import type WebSocket from 'ws';
import type { Logger } from 'pino';
import { hashesEqual } from '../shared/apikey.ts';
import { ConfigError } from '../shared/config.ts';
import { AdminMessageSchema, KEY_GONE_CLOSE_CODE, MAX_KEYS_USED_PER_MESSAGE, parseMessage, type AdminMessage, type KeyEntry } from '../shared/controlplane.ts';
import { LogQueue, type LogQueueOptions } from './log-queue.ts';
import { loadOnce } from '../shared/lazy.ts';

/** Imports `ws` once (see the module docstring); a failed import is retried on the next attempt. */
const loadWebSocket = loadOnce(() => import('ws').then((mod) => mod.default));

/**
 * WebSocket close code "message too big" (RFC 6455 §7.4.1): admin refused a message above its bound
 * (shared/controlplane.ts MAX_CONTROL_PLANE_MESSAGE_BYTES).
 */
const MESSAGE_TOO_BIG_CLOSE_CODE = 1009;

/** Most API keys a proxy holds (one organization's live keys). */
const MAX_KEYS = 100_000;

/** A prompt version as fetched from admin. */
export interface PromptVersion {
  promptId: string;
  versionId: string;
  version: string;
  body: Record<string, unknown>;
}

/** Result of a prompt lookup: the version, or an HTTP-like status with an error. */
export type PromptLookup = { ok: true; version: PromptVersion } | { ok: false; status: number; error: string };

/** Link state for /health. */
export interface LinkHealth {
  connected: boolean;
  /** ISO time since when the link is in its current state. */
  since: string;
  reconnectAttempts: number;
  keysHeld: number;
  ready: boolean;
  /**
   * True while the proxy's own control-plane key is refused (admin closed the link with KEY_GONE,
   * 4001, or answered a connection 401): the held keys were dropped and every request is refused
   * until a link admin accepts delivers a snapshot.
   */
  keyRevoked: boolean;
  /**
   * Why the link is down (null while it is up): admin closed it because its key was revoked or
   * deleted (KEY_GONE, 4001: kept until a link opens again, since every retry is refused for it),
   * refused it (the HTTP status), a link error, or the close code.
   */
  downReason: string | null;
}

/** Options of the client. Times in ms. */
export interface ControlPlaneOptions {
  /** `ws://` or `wss://` URL of admin's control-plane endpoint, e.g. `ws://127.0.0.1:8585/v1/control-plane`. */
  url: string;
  /** The API key the link authenticates with (`SVC_CONTROL_PLANE_API_KEY`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** PEM file of a private CA (or several) to trust for `wss://`, in addition to Node's bundled root CAs. */
  caFile?: string | null;
  queue: LogQueueOptions;
  flushIntervalMs: number;
  logger: Logger;
  /** Backoff: first delay (default 500), cap (default 30,000), and how long a link must stay up to reset the attempt count (default 60,000). */
  backoffStartMs?: number;
  backoffCapMs?: number;
  stableAfterMs?: number;
  /** A link on which nothing (message or ping) arrives for this long is closed and re-established. Default 45,000 (admin pings every 15,000). */
  livenessTimeoutMs?: number;
  /** WebSocket opening handshake timeout. Default 10,000. */
  handshakeTimeoutMs?: number;
  /** Prompt lookup timeout. Default 5,000 ms. */
  promptTimeoutMs?: number;
  /** How often the ids of the keys used since the last report go to admin (`keys.used`). Default 3,000 ms. */
  usageReportIntervalMs?: number;
  /** How often log records the full queue dropped since the last report are logged (one error line). Default 10,000 ms. */
  dropReportIntervalMs?: number;
}

/** The control-plane client. Create with {@link ControlPlaneClient.start}. */
export class ControlPlaneClient {
  private ws: WebSocket | null = null;
  // lru-cache preallocates its index for `max` entries, and the GC marks it on every full collection:
  // size it for the organization's keys, not for a million (a snapshot larger than this is logged).
  private readonly keys = new LRUCache<string, KeyEntry>({ max: MAX_KEYS });
  private snapshotReceived = false;
  private connected = false;
  private since = new Date();
  private attempts = 0;
  private stableTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private livenessTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Why the link is down, for /health; null while it is up. */
  private downReason: string | null = 'not connected yet';
  /** Admin closed the link with KEY_GONE: its reason stands over the refusals that follow, until a link opens. */
  private keyGone = false;
  /** The proxy's own key was refused (KEY_GONE or a 401): keys dropped until the next snapshot. */
  private revoked = false;
  private readonly flushTimer: NodeJS.Timeout;
  private readonly dropTimer: NodeJS.Timeout;
  /** The queue's drop count at the last report. */
  private droppedReported = 0;
  /**
   * True once the current link delivered its key snapshot, false again when it closes: admin
   * accepted the link. Until then a `keys.used` report could go out on a link admin is refusing
   * (it closes unauthenticated or failing links at once) and its ids would be lost.
   */
  private linkSynced = false;
  /** Ids of the keys authenticated since the last `keys.used` report. */
  private readonly usedKeyIds = new Set<string>();
  private readonly usageTimer: NodeJS.Timeout;
  private readonly prompts = new LRUCache<string, PromptVersion>({ max: 10_000 });
  private readonly pendingPrompts = new Map<string, { resolve: (r: PromptLookup) => void; timer: NodeJS.Timeout }>();
  private readonly ca: Array<string | Buffer> | undefined;
  /** Records waiting for admin. */
  readonly queue: LogQueue;

  /**
   * Creates the client without connecting; see {@link ControlPlaneClient.start}.
   * @throws {ConfigError} when `caFile` is given but cannot be read or holds no PEM certificate.
   */
  constructor(private readonly options: ControlPlaneOptions) {
    this.ca = options.caFile ? [...tls.rootCertificates, readCaFile(options.caFile)] : undefined;
    this.queue = new LogQueue(options.queue, (message) => {
      if (!this.ws || this.ws.readyState !== this.ws.OPEN) return false;
      this.ws.send(message);
      return true;
    });
    this.flushTimer = setInterval(() => this.queue.flush(), options.flushIntervalMs);
    this.flushTimer.unref();
    this.usageTimer = setInterval(() => this.reportUsage(), options.usageReportIntervalMs ?? 3_000);
    this.usageTimer.unref();
    // Drops are reported on a timer of their own: a full queue drops a record per request, and one
    // line per interval says how many without flooding the log.
    this.dropTimer = setInterval(() => this.reportDrops(), options.dropReportIntervalMs ?? 10_000);
    this.dropTimer.unref();
  }

  /**
   * Creates the client and starts connecting. It never throws or exits for an unreachable admin: it
   * keeps reconnecting until {@link ControlPlaneClient.close}.
   * @throws {ConfigError} only when `caFile` cannot be read or holds no PEM certificate.
   */
  static start(options: ControlPlaneOptions): ControlPlaneClient {
    const client = new ControlPlaneClient(options);
    client.connect();
    return client;
  }

  /**
   * True while the proxy holds a key set it trusts: from the first key snapshot on, across plain
   * outages; false again while its own key is refused ({@link ControlPlaneClient.keyRevoked}).
   */
  get ready(): boolean {
    return this.snapshotReceived;
  }

  /**
   * True while the proxy's own control-plane key is refused (see the module docstring): the held
   * keys were dropped, and requests are answered 503 `control_plane_key_revoked`, not `auth_not_ready`.
   */
  get keyRevoked(): boolean {
    return this.revoked;
  }

  /**
   * Looks up an API key by its hex SHA-256.
   * @returns the key's entry, or undefined when the key is not authorized.
   */
  lookup(hash: string): KeyEntry | undefined {
    const entry = this.keys.get(hash);
    // The map lookup found the entry by hash; compare in constant time all the same.
    return entry && hashesEqual(entry.hash, hash) ? entry : undefined;
  }

  /**
   * Marks a key just authenticated as used, for admin's `api_key.last_used_at`. O(1) on the request
   * path: adding an id the set already holds allocates nothing; the report goes out on a timer.
   */
  markUsed(entry: KeyEntry): void {
    this.usedKeyIds.add(entry.keyId);
  }

  /** Sends the ids of the keys used since the last report, when the link is up and synced (else keeps them). */
  private reportUsage(): void {
    if (this.usedKeyIds.size === 0 || !this.linkSynced || !this.ws || this.ws.readyState !== this.ws.OPEN) return;
    const ids = [...this.usedKeyIds];
    this.usedKeyIds.clear();
    for (let i = 0; i < ids.length; i += MAX_KEYS_USED_PER_MESSAGE) {
      this.ws.send(JSON.stringify({ type: 'keys.used', keyIds: ids.slice(i, i + MAX_KEYS_USED_PER_MESSAGE) }));
    }
  }

  /** Link state for /health. */
  health(): LinkHealth {
    return { connected: this.connected, since: this.since.toISOString(), reconnectAttempts: this.attempts, keysHeld: this.keys.size, ready: this.ready, keyRevoked: this.revoked, downReason: this.downReason };
  }

  /** Logs, at error level, the records the full queue dropped since the last report (nothing when none). */
  private reportDrops(): void {
    const dropped = this.queue.dropped;
    if (dropped === this.droppedReported) return;
    this.options.logger.error(
      { dropped: dropped - this.droppedReported, droppedTotal: dropped, oversizeTotal: this.queue.getStats().oversize, linkConnected: this.connected, linkDownReason: this.downReason },
      'log records dropped: the log queue was full (the control-plane link is down or admin is not keeping up), or a record was larger than admin accepts in one message (oversizeTotal)',
    );
    this.droppedReported = dropped;
  }

  /**
   * The proxy's own key is refused (`how` says how admin said so): drops the held keys, so that no
   * key revoked from now on, which the proxy could not learn of, is served; logs once what the
   * operator must do. The next snapshot admin sends ends this state.
   */
  private dropKeys(how: string): void {
    if (this.revoked) return;
    const dropped = this.keys.size;
    this.keys.clear();
    this.snapshotReceived = false;
    this.revoked = true;
    this.options.logger.error(
      { how, keysDropped: dropped },
      'control plane: this proxy\'s control-plane API key (SVC_CONTROL_PLANE_API_KEY) was revoked or is unknown to admin, so the proxy can no longer learn of key revocations: it dropped the keys it held and answers every request 503 control_plane_key_revoked. Give the proxy a new API key of the organization in SVC_CONTROL_PLANE_API_KEY and restart it; it keeps retrying meanwhile',
    );
  }

  /** Records why the link is down, unless admin's KEY_GONE already says why (the refusals follow from it). */
  private noteDown(reason: string): void {
    if (!this.keyGone) this.downReason = reason;
  }

  private connect(): void {
    if (this.closed) return;
    loadWebSocket().then(
      (WebSocketClass) => this.open(WebSocketClass),
      (err: unknown) => {
        this.options.logger.error({ err: (err as Error)?.message ?? String(err) }, 'control plane: cannot load the ws module');
        this.scheduleReconnect();
      },
    );
  }

  private open(WebSocketClass: typeof WebSocket): void {
    if (this.closed) return;
    const ws = new WebSocketClass(this.options.url, {
      headers: { authorization: `Bearer ${this.options.apiKey}` },
      ca: this.ca,
      handshakeTimeout: this.options.handshakeTimeoutMs ?? 10_000,
      maxPayload: 256 * 1024 * 1024,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.downReason = null;
      this.keyGone = false;
      this.alive(ws);
      this.setConnected(true);
      this.stableTimer = setTimeout(() => (this.attempts = 0), this.options.stableAfterMs ?? 60_000);
      this.stableTimer.unref();
      this.options.logger.info({ url: this.options.url }, 'control plane connected');
    });
    ws.on('ping', () => this.alive(ws));
    ws.on('message', (data, isBinary) => {
      this.alive(ws);
      if (isBinary) {
        this.options.logger.warn('dropped a binary control-plane message');
        return;
      }
      const msg = parseMessage<AdminMessage>(data.toString(), AdminMessageSchema);
      if (msg instanceof Error) {
        this.options.logger.warn({ reason: msg.message }, 'dropped a malformed control-plane message');
        return;
      }
      try {
        this.onMessage(msg);
      } catch (err) {
        this.options.logger.error({ err, type: msg.type }, 'handling a control-plane message failed; dropped');
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      this.options.logger.error({ status: res.statusCode }, 'control plane refused the link (check SVC_CONTROL_PLANE_API_KEY)');
      // 401 is admin's answer to a key it does not know or that is revoked (admin/controlplane.ts);
      // anything else (503: its database is down) is an outage the held keys ride out.
      if (res.statusCode === 401) {
        this.noteDown('admin refused the link (HTTP 401): the control-plane API key (SVC_CONTROL_PLANE_API_KEY) is revoked, deleted or unknown; the keys held were dropped and every request is answered 503 until the proxy has a live key');
        this.dropKeys('admin refused the link with 401');
      } else this.noteDown(`admin refused the link (HTTP ${res.statusCode}): check SVC_CONTROL_PLANE_API_KEY`);
      ws.terminate();
    });
    ws.on('error', (err) => {
      this.options.logger.warn({ err: err.message }, 'control plane link error');
      this.noteDown(`link error: ${err.message}`);
    });
    ws.on('close', (code, reason) => {
      if (this.ws !== ws) return;
      if (code === KEY_GONE_CLOSE_CODE) {
        this.options.logger.error({ reason: reason.toString() }, 'control plane closed the link: its control-plane API key (SVC_CONTROL_PLANE_API_KEY) was revoked or deleted');
        this.downReason = `the control-plane API key (SVC_CONTROL_PLANE_API_KEY) was revoked or deleted: admin closed the link (${code}: ${reason.toString()}) and refuses it until a live key is configured; the keys held were dropped and every request is answered 503; log records wait in the queue, the oldest dropped when it is full`;
        this.keyGone = true;
        this.dropKeys(`admin closed the link with ${code}`);
      } else if (this.downReason === null) this.noteDown(`link closed (code ${code})`);
      this.ws = null;
      this.linkSynced = false;
      if (this.stableTimer) clearTimeout(this.stableTimer);
      if (this.livenessTimer) clearTimeout(this.livenessTimer);
      if (this.connected) this.setConnected(false);
      if (code === MESSAGE_TOO_BIG_CLOSE_CODE) {
        this.options.logger.error(
          { code, reason: reason.toString() },
          'control plane closed the link: a log record batch was larger than admin accepts (is admin of another version?); the largest batch in flight is dropped, not re-sent',
        );
      }
      this.queue.linkLost(code === MESSAGE_TOO_BIG_CLOSE_CODE);
      for (const [reqId, pending] of this.pendingPrompts) {
        clearTimeout(pending.timer);
        pending.resolve({ ok: false, status: 503, error: 'control plane unavailable' });
        this.pendingPrompts.delete(reqId);
      }
      this.prompts.clear();
      this.scheduleReconnect();
    });
  }

  /** Something arrived on `ws`: restart its liveness deadline. */
  private alive(ws: WebSocket): void {
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    const timeoutMs = this.options.livenessTimeoutMs ?? 45_000;
    this.livenessTimer = setTimeout(() => {
      if (this.ws !== ws) return;
      this.options.logger.warn({ timeoutMs }, 'control plane link silent; reconnecting');
      ws.terminate();
    }, timeoutMs);
    this.livenessTimer.unref();
  }

  private setConnected(connected: boolean): void {
    this.connected = connected;
    this.since = new Date();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const start = this.options.backoffStartMs ?? 500;
    const cap = this.options.backoffCapMs ?? 30_000;
    const ceiling = Math.min(cap, start * 2 ** Math.min(this.attempts, 30));
    const delay = Math.random() * ceiling; // full jitter
    this.attempts++;
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private onMessage(msg: AdminMessage): void {
    switch (msg.type) {
      case 'keys.snapshot':
        if (msg.keys.length > MAX_KEYS) this.options.logger.error({ keys: msg.keys.length, max: MAX_KEYS }, 'more API keys than the proxy holds; some will be refused');
        this.keys.clear();
        for (const k of msg.keys) this.keys.set(k.hash, k);
        this.snapshotReceived = true;
        this.revoked = false;
        this.linkSynced = true;
        this.queue.flush();
        break;
      case 'keys.upsert':
        for (const k of msg.keys) this.keys.set(k.hash, k);
        break;
      case 'keys.revoke':
        for (const h of msg.hashes) this.keys.delete(h);
        break;
      case 'records.ack':
        this.queue.ack(msg.batchId);
        this.queue.flush(true);
        break;
      case 'records.nack':
        this.queue.nack(msg.batchId);
        break;
      case 'prompt.result': {
        const pending = this.pendingPrompts.get(msg.reqId);
        if (!pending) return;
        this.pendingPrompts.delete(msg.reqId);
        clearTimeout(pending.timer);
        if (msg.status === 200 && msg.version) pending.resolve({ ok: true, version: msg.version });
        else pending.resolve({ ok: false, status: msg.status, error: msg.error ?? 'prompt not found' });
        break;
      }
      case 'prompts.invalidate':
        for (const key of this.prompts.keys()) if (key.startsWith(msg.promptId + '|')) this.prompts.delete(key);
        break;
    }
  }

  /**
   * Fetches a prompt version (cached until admin invalidates it): `versionId` if given, else the
   * version labelled `environment` (default `production`).
   */
  getPrompt(promptId: string, versionId: string | null, environment: string | null): Promise<PromptLookup> | PromptLookup {
    const cacheKey = `${promptId}|${versionId ?? ''}|${environment ?? 'production'}`;
    const cached = this.prompts.get(cacheKey);
    if (cached) return { ok: true, version: cached };
    if (!this.ws || this.ws.readyState !== this.ws.OPEN) return { ok: false, status: 503, error: 'control plane unavailable; cannot resolve the prompt' };
    const reqId = randomUUID();
    return new Promise<PromptLookup>((resolve) => {
      const timer = setTimeout(() => {
        this.pendingPrompts.delete(reqId);
        resolve({ ok: false, status: 504, error: 'prompt lookup timed out' });
      }, this.options.promptTimeoutMs ?? 5_000);
      this.pendingPrompts.set(reqId, {
        resolve: (r) => {
          if (r.ok) this.prompts.set(cacheKey, r.version);
          resolve(r);
        },
        timer,
      });
      this.ws!.send(JSON.stringify({ type: 'prompt.get', reqId, promptId, versionId, environment }));
    });
  }

  /** Flushes queued records for up to `timeoutMs`, then closes the link. */
  async close(timeoutMs: number): Promise<boolean> {
    this.reportUsage();
    this.queue.flush();
    const drained = await this.queue.drained(timeoutMs);
    this.closed = true;
    clearInterval(this.flushTimer);
    clearInterval(this.usageTimer);
    clearInterval(this.dropTimer);
    this.reportDrops();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.stableTimer) clearTimeout(this.stableTimer);
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    this.ws?.close(1001, 'proxy shutting down');
    return drained;
  }
}

/**
 * The private CA file's PEM text, read once at start.
 * @throws {ConfigError} naming `control-plane.ca-file` when the file cannot be read or holds no PEM
 *   certificate: TLS would otherwise skip what it cannot parse and fail every connection later, far from the cause.
 */
function readCaFile(file: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new ConfigError(`control-plane.ca-file: cannot read ${file} (${(err as Error).message})`);
  }
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "-----BEGIN CERTIFICATE-----" line');
    new X509Certificate(pem);
  } catch (err) {
    throw new ConfigError(`control-plane.ca-file: ${file} holds no PEM certificate (${(err as Error).message})`);
  }
  return pem;
}
