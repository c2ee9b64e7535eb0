/**
 * The control plane: a WebSocket endpoint (`/v1/control-plane`) that proxies keep open. A proxy
 * authenticates with an API key (`Authorization: Bearer`); admin then sends the organization's
 * authorized key hashes, pushes every key change, answers prompt lookups, and stores the log record
 * batches the proxy sends, acknowledging each batch only after its transaction committed.
 *
 * Key and prompt changes reach every admin process through PostgreSQL LISTEN/NOTIFY, so with several
 * admins on one database each pushes the change to the proxies connected to it.
 *
 * Consistency: a change notified while a link's snapshot is being loaded is held back and sent
 * after the snapshot (so a revocation can never be overwritten by an older snapshot). Notifications
 * are lost while the LISTEN connection is down, so whenever it is re-established every proxy link is
 * closed (code 1012): each proxy reconnects by itself, receives a fresh snapshot and drops its prompt
 * cache, keeping its cached keys meanwhile. A watchdog (a NOTIFY to itself every
 * {@link LISTEN_CHECK_INTERVAL_MS}) re-subscribes when the subscription was lost for good
 * (postgres.js gives up re-listening if the database is down at that moment).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, hashApiKey } from '../shared/apikey.ts';
import { parseMessage, ProxyMessageSchema, type AdminMessage, type ProxyMessage } from '../shared/controlplane.ts';
import type { Sql } from './db.ts';
import { ingestRecords } from './ingest.ts';
import { findKey, keyEntries, KEYS_CHANNEL, type KeyChange } from './keys.ts';
import { PROMPTS_CHANNEL, resolvePromptVersion } from './prompt-store.ts';

/** Path of the control-plane WebSocket. */
export const CONTROL_PLANE_PATH = '/v1/control-plane';

interface Link {
  ws: WebSocket;
  organizationId: string;
  alive: boolean;
  /** Key changes held back while a snapshot for this link is being loaded; null once synced. */
  pending: AdminMessage[] | null;
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
  batchesFailed: number;
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
 */
export async function startControlPlane(server: Server, sql: Sql, logger: Logger): Promise<ControlPlane> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 * 1024 });
  const links = new Set<Link>();
  const stats: ControlPlaneStats = { connections: 0, recordsStored: 0, recordsDuplicate: 0, recordsRejected: 0, batchesFailed: 0 };

  const send = (link: Link, msg: AdminMessage) => {
    if (link.ws.readyState === link.ws.OPEN) link.ws.send(JSON.stringify(msg));
  };
  const broadcast = (organizationId: string, msg: AdminMessage) => {
    for (const link of links) if (link.organizationId === organizationId) send(link, msg);
  };

  /** Sends a key change, or holds it back while the link's snapshot is being loaded. */
  const pushKeys = (organizationId: string, msg: AdminMessage) => {
    for (const link of links) {
      if (link.organizationId !== organizationId) continue;
      if (link.pending) link.pending.push(msg);
      else send(link, msg);
    }
  };

  /**
   * Loads the organization's keys and sends `keys.snapshot`, then the changes held back meanwhile.
   * On a database error the link is closed (the proxy keeps its cached keys and reconnects).
   */
  const sync = async (link: Link): Promise<void> => {
    try {
      const keys = await keyEntries(sql, link.organizationId);
      send(link, { type: 'keys.snapshot', keys });
      const held = link.pending ?? [];
      link.pending = null;
      for (const msg of held) send(link, msg);
    } catch (err) {
      link.pending = null;
      logger.error({ err }, 'could not load keys for a proxy; closing its link');
      link.ws.close(1011, 'database unavailable');
    }
  };

  const watchdogNonce = randomUUID();
  let watchdogSeen = true;
  const onKeyNotification = (payload: string) => {
    let change: KeyChange | { op: 'ping'; nonce: string };
    try {
      change = JSON.parse(payload) as KeyChange | { op: 'ping'; nonce: string };
    } catch {
      return;
    }
    if (change.op === 'ping') {
      if (change.nonce === watchdogNonce) watchdogSeen = true;
    } else if (change.op === 'upsert') pushKeys(change.organizationId, { type: 'keys.upsert', keys: change.keys });
    else if (change.op === 'revoke') pushKeys(change.organizationId, { type: 'keys.revoke', hashes: change.hashes });
  };
  /** Closes every link: notifications may have been missed, so each proxy reconnects and resyncs. */
  const resyncAll = (why: string) => {
    if (links.size === 0) return;
    logger.info({ links: links.size }, `${why}; asking every proxy to reconnect and resync`);
    for (const link of links) link.ws.close(1012, 'resync');
  };
  let listenedOnce = false;
  /** Called by postgres.js on every (re)subscription: after the first, notifications may have been missed. */
  const onKeysListen = () => {
    if (listenedOnce) resyncAll('key notifications re-subscribed');
    listenedOnce = true;
  };
  let keySub = await sql.listen(KEYS_CHANNEL, onKeyNotification, onKeysListen);
  const onPromptNotification = (payload: string) => {
    try {
      const { organizationId, promptId } = JSON.parse(payload) as { organizationId: string; promptId: string };
      broadcast(organizationId, { type: 'prompts.invalidate', promptId });
    } catch {
      /* malformed notification: ignore */
    }
  };
  let promptSub = await sql.listen(PROMPTS_CHANNEL, onPromptNotification);

  let closed = false;
  let checking = false;
  const checkListen = async () => {
    if (checking || closed) return;
    checking = true;
    try {
      watchdogSeen = false;
      await sql.notify(KEYS_CHANNEL, JSON.stringify({ op: 'ping', nonce: watchdogNonce }));
      const deadline = Date.now() + LISTEN_CHECK_TIMEOUT_MS;
      while (!watchdogSeen && !closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (watchdogSeen || closed) return;
      logger.warn('key notifications stopped arriving; re-subscribing');
      await Promise.allSettled([keySub.unlisten(), promptSub.unlisten()]);
      listenedOnce = false;
      keySub = await sql.listen(KEYS_CHANNEL, onKeyNotification, onKeysListen);
      promptSub = await sql.listen(PROMPTS_CHANNEL, onPromptNotification);
      resyncAll('key notifications re-subscribed after a loss');
    } catch (err) {
      // The database is unreachable: NOTIFY itself failed, or re-subscribing did. Try again later.
      watchdogSeen = true;
      logger.warn({ err: (err as Error).message }, 'cannot check key notifications: database unavailable');
    } finally {
      checking = false;
    }
  };
  const watchdog = setInterval(() => void checkListen(), LISTEN_CHECK_INTERVAL_MS);
  watchdog.unref();

  const reject = (socket: Duplex, status: number, message: string) => {
    const body = JSON.stringify({ data: null, error: message });
    socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Service Unavailable'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== CONTROL_PLANE_PATH) {
      socket.destroy();
      return;
    }
    const key = bearerToken(req.headers.authorization);
    if (!key) return reject(socket, 401, 'missing Authorization: Bearer <API key>');
    findKey(sql, hashApiKey(key)).then(
      (found) => {
        if (!found) return reject(socket, 401, 'invalid API key');
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, found.organizationId));
      },
      (err) => {
        logger.warn({ err }, 'control-plane authentication failed: database unavailable');
        reject(socket, 503, 'database unavailable');
      },
    );
  };
  server.on('upgrade', onUpgrade);

  async function onConnection(ws: WebSocket, organizationId: string): Promise<void> {
    const link: Link = { ws, organizationId, alive: true, pending: [] };
    links.add(link);
    stats.connections = links.size;
    logger.info({ organizationId }, 'proxy connected to the control plane');
    ws.on('pong', () => (link.alive = true));
    ws.on('close', () => {
      links.delete(link);
      stats.connections = links.size;
    });
    ws.on('error', (err) => logger.warn({ err }, 'control-plane link error'));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const msg = parseMessage<ProxyMessage>(data.toString(), ProxyMessageSchema);
      if (msg instanceof Error) {
        logger.warn({ reason: msg.message }, 'dropped a malformed control-plane message');
        return;
      }
      void handle(link, msg);
    });
    await sync(link);
  }

  async function handle(link: Link, msg: ProxyMessage): Promise<void> {
    if (msg.type === 'records') {
      try {
        const result = await ingestRecords(sql, link.organizationId, msg.records);
        stats.recordsStored += result.stored;
        stats.recordsDuplicate += result.duplicates;
        stats.recordsRejected += result.rejected;
        if (result.rejected > 0) logger.warn({ rejected: result.rejected, errors: result.errors }, 'rejected invalid log records');
        send(link, { type: 'records.ack', batchId: msg.batchId, stored: result.stored });
      } catch (err) {
        stats.batchesFailed++;
        logger.error({ err }, 'storing a batch of log records failed; the proxy will retry');
        send(link, { type: 'records.nack', batchId: msg.batchId, error: 'storage failed' });
      }
      return;
    }
    if (msg.type === 'prompt.get') {
      try {
        const version = await resolvePromptVersion(sql, link.organizationId, msg.promptId, msg.versionId ?? null, msg.environment ?? null);
        if ('error' in version) send(link, { type: 'prompt.result', reqId: msg.reqId, status: 404, error: version.error });
        else send(link, { type: 'prompt.result', reqId: msg.reqId, status: 200, version });
      } catch (err) {
        logger.error({ err }, 'prompt lookup failed');
        send(link, { type: 'prompt.result', reqId: msg.reqId, status: 503, error: 'prompt store unavailable' });
      }
    }
  }

  const heartbeat = setInterval(() => {
    for (const link of links) {
      if (!link.alive) {
        link.ws.terminate();
        continue;
      }
      link.alive = false;
      link.ws.ping();
    }
  }, 15_000);
  heartbeat.unref();

  return {
    stats: () => ({ ...stats }),
    async close() {
      closed = true;
      clearInterval(heartbeat);
      clearInterval(watchdog);
      server.off('upgrade', onUpgrade);
      for (const link of links) link.ws.close(1001, 'admin shutting down');
      wss.close();
      await Promise.allSettled([keySub.unlisten(), promptSub.unlisten()]);
    },
  };
}
