/**
 * The control plane: a WebSocket endpoint (`/v1/control-plane`) that proxies keep open. A proxy
 * authenticates with an API key (`Authorization: Bearer`); admin then sends the organization's
 * authorized key hashes, pushes every key change, answers prompt lookups, and stores the log record
 * batches the proxy sends, acknowledging each batch only after its transaction committed.
 *
 * Key and prompt changes reach every admin process through PostgreSQL LISTEN/NOTIFY, so with several
 * admins on one database each pushes the change to the proxies connected to it.
 */
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
}

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

  const keySub = await sql.listen(KEYS_CHANNEL, (payload) => {
    let change: KeyChange;
    try {
      change = JSON.parse(payload) as KeyChange;
    } catch {
      return;
    }
    if (change.op === 'upsert') broadcast(change.organizationId, { type: 'keys.upsert', keys: change.keys });
    else broadcast(change.organizationId, { type: 'keys.revoke', hashes: change.hashes });
  });
  const promptSub = await sql.listen(PROMPTS_CHANNEL, (payload) => {
    try {
      const { organizationId, promptId } = JSON.parse(payload) as { organizationId: string; promptId: string };
      broadcast(organizationId, { type: 'prompts.invalidate', promptId });
    } catch {
      /* malformed notification: ignore */
    }
  });

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
    const link: Link = { ws, organizationId, alive: true };
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
    try {
      send(link, { type: 'keys.snapshot', keys: await keyEntries(sql, organizationId) });
    } catch (err) {
      logger.error({ err }, 'could not load keys for a proxy; closing its link');
      ws.close(1011, 'database unavailable');
    }
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
      clearInterval(heartbeat);
      server.off('upgrade', onUpgrade);
      for (const link of links) link.ws.close(1001, 'admin shutting down');
      wss.close();
      await Promise.allSettled([keySub.unlisten(), promptSub.unlisten()]);
    },
  };
}
