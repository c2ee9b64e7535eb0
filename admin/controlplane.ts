/**
 * The control plane: a WebSocket endpoint (`/v1/control-plane`) that proxies keep open. A proxy
 * authenticates with an API key (`Authorization: Bearer`); admin then sends the organization's
 * authorized key hashes, pushes every key change, answers prompt lookups, stores the log record
 * batches the proxy sends (binary messages of shared/record-batch.ts; older proxies' JSON
 * `records` messages), acknowledging each batch only after its transaction committed, and hands
 * the proxy's reports of the keys it authenticated to admin/key-usage.ts (`last_used_at`).
 *
 * Key and prompt changes reach every admin process through PostgreSQL LISTEN/NOTIFY, so with several
 * admins on one database each pushes the change to the proxies connected to it.
 *
 * A link lives only as long as the key it authenticated with: a revocation of that key reaches the
 * link (its `keys.revoke`, so the proxy drops the key too) and then closes it with
 * {@link KEY_GONE_CLOSE_CODE}; the proxy's reconnect with the key is refused (401). Unable to learn
 * of revocations from then on, the proxy drops the keys it holds and refuses every request until it
 * is given a live key (proxy/controlplane.ts); only a plain outage (admin down) leaves it serving on
 * the keys it holds. Every heartbeat also checks each link's key in the
 * database, which catches what sends no notification (the organization deleted, a key row deleted,
 * a notification missed): such a link gets a fresh snapshot of its organization's keys (empty for a
 * deleted organization), then the same close. Any live key of the organization opens a link (keys
 * have no kind or scope); `npm start` gives its proxy one named `control-plane`.
 *
 * Consistency: a change notified while a link's snapshot is being loaded is held back and sent
 * after the snapshot (so a revocation can never be overwritten by an older snapshot). Notifications
 * are lost while the LISTEN connection is down, so whenever it is re-established every proxy link is
 * closed (code 1012): each proxy reconnects by itself, receives a fresh snapshot and drops its prompt
 * cache, keeping its cached keys meanwhile. A watchdog (a NOTIFY to itself every
 * {@link LISTEN_CHECK_INTERVAL_MS}) re-subscribes when the subscription was lost for good
 * (postgres.js gives up re-listening if the database is down at that moment).
 *
 * Bounds of what a link can make admin hold: a message above {@link MAX_CONTROL_PLANE_MESSAGE_BYTES}
 * closes the link with 1009 (`ws` refuses it as it arrives, before buffering it); a `keys.used`
 * report marks only keys of the link's organization that the link's snapshot and the changes since
 * hold (ids of other organizations, revoked or made-up ids are ignored and counted in
 * `keysUsedIgnored`), so admin/key-usage.ts holds at most the organization's keys.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, hashApiKey, hashesEqual } from '../shared/apikey.ts';
import { KEY_GONE_CLOSE_CODE, MAX_CONTROL_PLANE_MESSAGE_BYTES, parseMessage, ProxyMessageSchema, type AdminMessage, type KeyEntry, type ProxyMessage } from '../shared/controlplane.ts';
import { decodeBatch, readBatchHeader, RECORD_BATCH_VERSION } from '../shared/record-batch.ts';
import type { Sql } from './db.ts';
import { ingestDecodedRecords, ingestRecords, type IngestResult } from './ingest.ts';
import type { KeyUsage } from './key-usage.ts';
import { PROMPTS_CHANNEL, resolvePromptVersion } from './prompt-store.ts';
import { findKey, keyEntries, keyStates, KEYS_CHANNEL, type KeyChange } from './resources/api-keys/store.ts';

/** Path of the control-plane WebSocket. */
export const CONTROL_PLANE_PATH = '/v1/control-plane';

interface Link {
  ws: WebSocket;
  organizationId: string;
  /** The API key the link authenticated with: its id and hex SHA-256. */
  keyId: string;
  keyHash: string;
  alive: boolean;
  /** Key changes held back while a snapshot for this link is being loaded; null once synced. */
  pending: AdminMessage[] | null;
  /** True once its key is gone: nothing more is sent to it or accepted from it. */
  ended: boolean;
  /**
   * The organization's live keys as sent to this link (snapshot, then upserts and revocations):
   * hex SHA-256 → key id. Revocations name hashes, hence the map.
   */
  keys: Map<string, string>;
  /** The ids of `keys`: what a `keys.used` report may mark. */
  keyIds: Set<string>;
}

/** How often admin checks that its LISTEN subscription still delivers, in ms. */
export const LISTEN_CHECK_INTERVAL_MS = 10_000;
/** How long the watchdog's own notification may take to come back before re-subscribing, in ms. */
const LISTEN_CHECK_TIMEOUT_MS = 5_000;

/** Counters of the control plane, for /health and /metrics. */
export interface ControlPlaneStats {
  connections: number;
  recordsStored: number;
  recordsDuplicate: number;
  recordsRejected: number;
  /** Records stored with their API key id cleared: not a key of the link's organization (admin/ingest-key-scope.ts). */
  recordsKeyIdCleared: number;
  batchesFailed: number;
  /** Ids in proxies' `keys.used` reports that are no live key of the link's organization: ignored. */
  keysUsedIgnored: number;
}

/** A running control plane. */
export interface ControlPlane {
  stats(): ControlPlaneStats;
  /** Closes every link and stops listening for notifications. */
  close(): Promise<void>;
}

/**
 * Attaches the control plane to admin's HTTP server (upgrade requests on {@link CONTROL_PLANE_PATH}).
 * @param sql the database; LISTEN uses one dedicated connection of it.
 * @param keyUsage where the link's own key and the keys in proxies' `keys.used` reports are marked
 *   used (for `api_key.last_used_at`); absent, they are not recorded.
 */
export async function startControlPlane(server: Server, sql: Sql, logger: Logger, keyUsage?: Pick<KeyUsage, 'mark'>): Promise<ControlPlane> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CONTROL_PLANE_MESSAGE_BYTES });
  const links = new Links(sql, logger, keyUsage);
  // Subscribed before accepting proxies, so no link can miss a change made after its snapshot.
  const listener = new ChangeListener(sql, logger, links);
  await listener.subscribe();
  listener.startWatchdog();

  const onUpgrade = upgradeHandler(wss, links);
  server.on('upgrade', onUpgrade);

  const heartbeat = setInterval(() => {
    links.heartbeat();
    void links.checkKeys();
  }, 15_000);
  heartbeat.unref();

  return {
    stats: () => ({ ...links.stats }),
    async close() {
      listener.stop();
      clearInterval(heartbeat);
      server.off('upgrade', onUpgrade);
      for (const link of links.all) link.ws.close(1001, 'admin shutting down');
      wss.close();
      await listener.unlisten();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Links: the connected proxies, what is pushed to them, and what they send
// ---------------------------------------------------------------------------------------------

/** The proxies connected to this admin process, and the counters of their traffic. */
class Links {
  readonly all = new Set<Link>();
  readonly stats: ControlPlaneStats = { connections: 0, recordsStored: 0, recordsDuplicate: 0, recordsRejected: 0, recordsKeyIdCleared: 0, batchesFailed: 0, keysUsedIgnored: 0 };

  constructor(
    readonly sql: Sql,
    readonly logger: Logger,
    readonly keyUsage: Pick<KeyUsage, 'mark'> | undefined,
  ) {}

  /** Sends `msg` if the link is open; a closing link's proxy gets a fresh snapshot when it reconnects. */
  send(link: Link, msg: AdminMessage): void {
    if (link.ws.readyState === link.ws.OPEN) link.ws.send(JSON.stringify(msg));
  }

  /** Sends `msg` to every link of the organization. */
  broadcast(organizationId: string, msg: AdminMessage): void {
    for (const link of this.all) if (link.organizationId === organizationId) this.send(link, msg);
  }

  /** Sends a key change, or holds it back while the link's snapshot is being loaded. */
  pushKeys(organizationId: string, msg: AdminMessage): void {
    for (const link of this.all) {
      if (link.organizationId !== organizationId || link.ended) continue;
      if (link.pending) link.pending.push(msg);
      else this.deliver(link, msg);
    }
  }

  /** Sends a key change to a synced link; one revoking the link's own key then ends the link. */
  private deliver(link: Link, msg: AdminMessage): void {
    this.send(link, msg);
    if (msg.type === 'keys.upsert') learnKeys(link, msg.keys);
    else if (msg.type === 'keys.revoke') forgetKeys(link, msg.hashes);
    if (msg.type === 'keys.revoke' && msg.hashes.some((h) => hashesEqual(h, link.keyHash))) this.end(link, 'API key revoked');
  }

  /**
   * Closes a link whose key no longer authenticates, after whatever was just sent to it (the proxy
   * reads the revocation before the close). Batches still arriving on it are dropped unstored.
   */
  private end(link: Link, reason: string): void {
    if (link.ended) return;
    link.ended = true;
    this.logger.warn({ organizationId: link.organizationId, keyId: link.keyId, reason }, 'closed a control-plane link: the API key it logged in with is gone');
    link.ws.close(KEY_GONE_CLOSE_CODE, reason);
  }

  /**
   * Checks every synced link's key in the database (one query) and ends the links whose key is
   * revoked or deleted, after a fresh snapshot of their organization's keys: this covers what sends
   * no notification (see module doc). A database error leaves the links as they are until the next check.
   */
  async checkKeys(): Promise<void> {
    const synced = [...this.all].filter((link) => !link.ended && link.pending === null);
    if (synced.length === 0) return;
    try {
      const states = await keyStates(this.sql, [...new Set(synced.map((link) => link.keyId))]);
      for (const link of synced) {
        const state = states.get(link.keyId);
        if (state === 'live' || link.ended) continue;
        const keys = await keyEntries(this.sql, link.organizationId);
        this.send(link, { type: 'keys.snapshot', keys });
        this.end(link, state === 'revoked' ? 'API key revoked' : 'API key deleted (or its organization)');
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'cannot check the control-plane links\' keys: database unavailable');
    }
  }

  /** Closes every link: notifications may have been missed, so each proxy reconnects and resyncs. */
  resyncAll(why: string): void {
    if (this.all.size === 0) return;
    this.logger.info({ links: this.all.size }, `${why}; asking every proxy to reconnect and resync`);
    for (const link of this.all) link.ws.close(1012, 'resync');
  }

  /**
   * Registers an authenticated proxy's socket, then sends it its organization's key snapshot.
   * @param key the API key the link authenticated with (id and organization as `findKey` found them, hex SHA-256).
   */
  async open(ws: WebSocket, key: { keyId: string; organizationId: string; hash: string }): Promise<void> {
    const { organizationId } = key;
    const link: Link = { ws, organizationId, keyId: key.keyId, keyHash: key.hash, alive: true, pending: [], ended: false, keys: new Map(), keyIds: new Set() };
    this.all.add(link);
    this.stats.connections = this.all.size;
    this.logger.info({ organizationId }, 'proxy connected to the control plane');
    ws.on('pong', () => (link.alive = true));
    ws.on('close', () => {
      this.all.delete(link);
      this.stats.connections = this.all.size;
    });
    // A frame above maxPayload arrives here (ws then closes the link with 1009).
    ws.on('error', (err) => this.logger.warn({ err, organizationId, keyId: key.keyId }, 'control-plane link error'));
    ws.on('message', (data, isBinary) => {
      if (link.ended) return;
      if (isBinary) {
        void storeBinaryBatch(this, link, data as Buffer);
        return;
      }
      const msg = parseMessage<ProxyMessage>(data.toString(), ProxyMessageSchema);
      if (msg instanceof Error) {
        this.logger.warn({ reason: msg.message }, 'dropped a malformed control-plane message');
        return;
      }
      void handleMessage(this, link, msg);
    });
    await this.sync(link);
  }

  /**
   * Loads the organization's keys and sends `keys.snapshot`, then the changes held back meanwhile.
   * A link whose own key is missing from the snapshot (revoked after it authenticated, before it was
   * registered for notifications) is ended. On a database error the link is closed (the proxy keeps
   * its cached keys and reconnects).
   */
  private async sync(link: Link): Promise<void> {
    try {
      const keys = await keyEntries(this.sql, link.organizationId);
      this.send(link, { type: 'keys.snapshot', keys });
      learnKeys(link, keys);
      const held = link.pending ?? [];
      link.pending = null;
      if (!keys.some((k) => k.keyId === link.keyId)) {
        this.end(link, 'API key revoked');
        return;
      }
      for (const msg of held) if (!link.ended) this.deliver(link, msg);
    } catch (err) {
      link.pending = null;
      this.logger.error({ err }, 'could not load keys for a proxy; closing its link');
      link.ws.close(1011, 'database unavailable');
    }
  }

  /** One heartbeat round: drops links that did not answer the previous ping, pings the others. */
  heartbeat(): void {
    for (const link of this.all) {
      if (!link.alive) {
        link.ws.terminate();
        continue;
      }
      link.alive = false;
      link.ws.ping();
    }
  }
}

/** Answers one message of a proxy. */
async function handleMessage(links: Links, link: Link, msg: ProxyMessage): Promise<void> {
  if (msg.type === 'keys.used') return markUsed(links, link, msg.keyIds);
  if (msg.type === 'records') return storeRecords(links, link, msg);
  if (msg.type === 'prompt.get') return lookUpPrompt(links, link, msg);
}

/**
 * Hands the ids of a `keys.used` report that are live keys of the link's organization (as the link
 * knows them: {@link Link.keyIds}) to the key-usage recorder; the others are counted in
 * `keysUsedIgnored` and logged at debug. A key revoked before its report arrives is not marked.
 */
function markUsed(links: Links, link: Link, keyIds: readonly string[]): void {
  const known: string[] = [];
  for (const id of keyIds) {
    // Ids are compared as PostgreSQL writes UUIDs (lowercase); the proxy echoes them as sent.
    if (link.keyIds.has(id)) known.push(id);
    else if (link.keyIds.has(id.toLowerCase())) known.push(id.toLowerCase());
  }
  const ignored = keyIds.length - known.length;
  if (ignored > 0) {
    links.stats.keysUsedIgnored += ignored;
    links.logger.debug({ organizationId: link.organizationId, keyId: link.keyId, ignored }, "ignored key ids in keys.used: not live keys of the link's organization");
  }
  if (known.length > 0) links.keyUsage?.mark(link.organizationId, known);
}

/** Adds keys of the link's organization to what it may report used (entries of other organizations are skipped). */
function learnKeys(link: Link, keys: readonly KeyEntry[]): void {
  for (const k of keys) {
    if (k.organizationId !== link.organizationId) continue;
    link.keys.set(k.hash, k.keyId);
    link.keyIds.add(k.keyId);
  }
}

/** Removes revoked keys (by hash) from what the link may report used. */
function forgetKeys(link: Link, hashes: readonly string[]): void {
  for (const h of hashes) {
    const id = link.keys.get(h);
    if (id === undefined) continue;
    link.keys.delete(h);
    link.keyIds.delete(id);
  }
}

/** Stores a JSON batch of log records (proxies before binary batches), as {@link storeBatch}. */
function storeRecords(links: Links, link: Link, msg: Extract<ProxyMessage, { type: 'records' }>): Promise<void> {
  return storeBatch(links, link, msg.batchId, () => ingestRecords(links.sql, link.organizationId, msg.records));
}

/** A UUID as a batch id is written (36 characters); anything else is no readable id. */
const BATCH_ID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Stores a binary record batch (shared/record-batch.ts), as {@link storeBatch}. A batch of a
 * layout version this admin does not read (a newer proxy's) is refused with `records.nack`: the
 * proxy keeps it and retries, with backoff, until an admin that reads it is up (no record lost). A
 * message of a version it reads (shared/record-batch.ts) that does not decode is logged and, when its batch id is readable,
 * acknowledged with 0 stored and its records counted rejected: a nack would have the proxy re-send
 * the same broken bytes forever.
 */
function storeBinaryBatch(links: Links, link: Link, message: Buffer): Promise<void> {
  const header = readBatchHeader(message);
  const batchId = header.batchId;
  if (header.version !== null && header.version > RECORD_BATCH_VERSION && BATCH_ID_RE.test(batchId)) {
    links.logger.error({ version: header.version, supported: RECORD_BATCH_VERSION }, 'a proxy sent a record batch of a newer layout; upgrade admin (the proxy keeps the records and retries)');
    links.send(link, { type: 'records.nack', batchId, error: `record batch version ${header.version} not supported` });
    return Promise.resolve();
  }
  let batch: ReturnType<typeof decodeBatch>;
  try {
    batch = decodeBatch(message);
  } catch (err) {
    const readable = BATCH_ID_RE.test(batchId);
    const records = readable ? header.count : 0;
    links.logger.warn({ reason: (err as Error).message, bytes: message.length, batchId: readable ? batchId : null, records }, 'dropped a malformed record batch');
    if (readable) {
      links.stats.recordsRejected += records;
      links.send(link, { type: 'records.ack', batchId, stored: 0 });
    }
    return Promise.resolve();
  }
  return storeBatch(links, link, batch.batchId, () => ingestDecodedRecords(links.sql, link.organizationId, batch.records));
}

/**
 * Stores a batch of log records with `ingest`; `records.ack` only once committed, `records.nack`
 * on a storage failure so the proxy retries the batch.
 */
async function storeBatch(links: Links, link: Link, batchId: string, ingest: () => Promise<IngestResult>): Promise<void> {
  const { stats, logger } = links;
  try {
    const result = await ingest();
    stats.recordsStored += result.stored;
    stats.recordsDuplicate += result.duplicates;
    stats.recordsRejected += result.rejected;
    stats.recordsKeyIdCleared += result.keyIdsCleared.count;
    if (result.rejected > 0) logger.warn({ rejected: result.rejected, errors: result.errors }, 'rejected invalid log records');
    if (result.keyIdsCleared.count > 0) {
      logger.warn(
        { organizationId: link.organizationId, linkKeyId: link.keyId, records: result.keyIdsCleared.count, keyIds: result.keyIdsCleared.keyIds },
        "stored log records with their api key id cleared: the id is not a key of the link's organization",
      );
    }
    links.send(link, { type: 'records.ack', batchId, stored: result.stored });
  } catch (err) {
    stats.batchesFailed++;
    logger.error({ err }, 'storing a batch of log records failed; the proxy will retry');
    links.send(link, { type: 'records.nack', batchId, error: 'storage failed' });
  }
}

/** Answers a managed-prompt lookup: 200 with the version, 404, or 503 when the store is unreachable. */
async function lookUpPrompt(links: Links, link: Link, msg: Extract<ProxyMessage, { type: 'prompt.get' }>): Promise<void> {
  try {
    const version = await resolvePromptVersion(links.sql, link.organizationId, msg.promptId, msg.versionId ?? null, msg.environment ?? null);
    if ('error' in version) links.send(link, { type: 'prompt.result', reqId: msg.reqId, status: 404, error: version.error });
    else links.send(link, { type: 'prompt.result', reqId: msg.reqId, status: 200, version });
  } catch (err) {
    links.logger.error({ err }, 'prompt lookup failed');
    links.send(link, { type: 'prompt.result', reqId: msg.reqId, status: 503, error: 'prompt store unavailable' });
  }
}

// ---------------------------------------------------------------------------------------------
// Upgrade: authenticating a proxy's link
// ---------------------------------------------------------------------------------------------

/**
 * The server's `upgrade` listener: accepts a WebSocket on {@link CONTROL_PLANE_PATH} whose bearer
 * key is a live API key, as a link of that key's organization that ends with the key; an unknown or
 * revoked key is answered 401 `invalid API key`.
 */
function upgradeHandler(wss: WebSocketServer, links: Links): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== CONTROL_PLANE_PATH) {
      socket.destroy();
      return;
    }
    const key = bearerToken(req.headers.authorization);
    if (!key) return rejectUpgrade(socket, 401, 'missing Authorization: Bearer <API key>');
    const hash = hashApiKey(key);
    findKey(links.sql, hash).then(
      (found) => {
        if (!found) return rejectUpgrade(socket, 401, 'invalid API key');
        links.keyUsage?.mark(found.organizationId, [found.keyId]);
        wss.handleUpgrade(req, socket, head, (ws) => links.open(ws, { ...found, hash }));
      },
      (err) => {
        links.logger.warn({ err }, 'control-plane authentication failed: database unavailable');
        rejectUpgrade(socket, 503, 'database unavailable');
      },
    );
  };
}

/** Answers a refused upgrade with a plain HTTP response in the REST API's error shape. */
function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ data: null, error: message });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Service Unavailable'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

// ---------------------------------------------------------------------------------------------
// Change notifications: LISTEN, and the watchdog that re-subscribes
// ---------------------------------------------------------------------------------------------

type Subscription = Awaited<ReturnType<Sql['listen']>>;
type KeyNotification = KeyChange | { op: 'ping'; nonce: string };

/**
 * The LISTEN subscriptions that turn key and prompt changes into pushes to the links, and the
 * watchdog that notices when they stopped delivering (see module doc).
 */
class ChangeListener {
  /** Tells this process's own watchdog pings apart from other admins'. */
  private readonly nonce = randomUUID();
  private seen = true;
  /** After the first (re)subscription, a further one means notifications may have been missed. */
  private listenedOnce = false;
  private checking = false;
  private closed = false;
  private keySub!: Subscription;
  private promptSub!: Subscription;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    private readonly links: Links,
  ) {}

  /** Subscribes to both channels (keys first). */
  async subscribe(): Promise<void> {
    this.keySub = await this.sql.listen(KEYS_CHANNEL, this.onKeyNotification, this.onKeysListen);
    this.promptSub = await this.sql.listen(PROMPTS_CHANNEL, this.onPromptNotification);
  }

  /** Checks the subscription every {@link LISTEN_CHECK_INTERVAL_MS}. */
  startWatchdog(): void {
    this.watchdog = setInterval(() => void this.checkListen(), LISTEN_CHECK_INTERVAL_MS);
    this.watchdog.unref();
  }

  /** Stops the watchdog, including a check under way. */
  stop(): void {
    this.closed = true;
    clearInterval(this.watchdog);
  }

  /** Ends both subscriptions; failures are ignored (the connection may already be gone). */
  async unlisten(): Promise<void> {
    await Promise.allSettled([this.keySub.unlisten(), this.promptSub.unlisten()]);
  }

  private readonly onKeyNotification = (payload: string): void => {
    let change: KeyNotification;
    try {
      change = JSON.parse(payload) as KeyNotification;
    } catch {
      return;
    }
    if (change.op === 'ping') {
      if (change.nonce === this.nonce) this.seen = true;
    } else if (change.op === 'upsert') this.links.pushKeys(change.organizationId, { type: 'keys.upsert', keys: change.keys });
    else if (change.op === 'revoke') this.links.pushKeys(change.organizationId, { type: 'keys.revoke', hashes: change.hashes });
  };

  /** Called by postgres.js on every (re)subscription. */
  private readonly onKeysListen = (): void => {
    if (this.listenedOnce) this.links.resyncAll('key notifications re-subscribed');
    this.listenedOnce = true;
  };

  private readonly onPromptNotification = (payload: string): void => {
    try {
      const { organizationId, promptId } = JSON.parse(payload) as { organizationId: string; promptId: string };
      this.links.broadcast(organizationId, { type: 'prompts.invalidate', promptId });
    } catch {
      /* malformed notification: ignore */
    }
  };

  /**
   * NOTIFYs a ping to itself and waits for it; when it does not come back in time, re-subscribes
   * (postgres.js may have given up re-listening) and has every proxy resync.
   */
  private async checkListen(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      this.seen = false;
      await this.sql.notify(KEYS_CHANNEL, JSON.stringify({ op: 'ping', nonce: this.nonce }));
      const deadline = Date.now() + LISTEN_CHECK_TIMEOUT_MS;
      while (!this.seen && !this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (this.seen || this.closed) return;
      this.logger.warn('key notifications stopped arriving; re-subscribing');
      await this.unlisten();
      // The resync below covers the loss; the new subscription's first callback must not add one.
      this.listenedOnce = false;
      await this.subscribe();
      this.links.resyncAll('key notifications re-subscribed after a loss');
    } catch (err) {
      // The database is unreachable: NOTIFY itself failed, or re-subscribing did. Try again later.
      this.seen = true;
      this.logger.warn({ err: (err as Error).message }, 'cannot check key notifications: database unavailable');
    } finally {
      this.checking = false;
    }
  }
}
