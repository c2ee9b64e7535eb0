/**
 * Admin process entry: config, database (embedded unless `DATABASE_URL`), migrations, key
 * bootstrap, the REST API and the control-plane WebSocket on `ADMIN_PORT` (default 8585), the
 * retention job, and a clean stop on SIGINT/SIGTERM/SIGHUP (under `npm start`, when start.ts says so or is
 * gone: shared/supervised.ts). `GET /metrics` (Prometheus) is answered ahead
 * of the Koa app; every other request is counted there and logged (one JSON line: request id,
 * method, route, status, duration — never bodies or keys).
 *
 * Env: `ADMIN_PORT`, `DATABASE_URL`, `SVC_BOOTSTRAP_API_KEY`, `GATEWAY_CONFIG` / `--config FILE`,
 * `SVC_KEY_FILE` (a file that `npm start` uses to hand the proxy its control-plane key, mode 0600),
 * `SVC_SUPERVISED` (set by `npm start`).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { configPathFrom, ConfigError, loadConfig, type GatewayConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { onStopRequest } from '../shared/supervised.ts';
import { lingerAfterAnswer } from '../shared/linger.ts';
import { createApp } from './app.ts';
import { startControlPlane } from './controlplane.ts';
import { openDatabase } from './db.ts';
import { startKeyUsage } from './key-usage.ts';
import { bootstrapKeys, ensureControlPlaneKey } from './resources/api-keys/bootstrap.ts';
import { createAdminMetrics, type AdminMetrics } from './metrics.ts';
import { postgresDriverFault } from './postgres-driver-faults.ts';
import { startRetention } from './retention.ts';

async function main(): Promise<void> {
  // Listen for a stop from the first moment: a signal that arrives while the database is opening
  // is honoured once admin is up (then stopped in order), never by Node's default of dying at once.
  let stopRequested: string | null = null;
  let stop: ((reason: string) => void) | null = null;
  onStopRequest((reason) => (stop ? stop(reason) : (stopRequested ??= reason)));
  const config = loadConfigOrExit();
  // gateway.yaml's `models:` prices and limits, for every model lookup of this process.
  applyModelOverrides(config.models);
  const logger = createLogger('admin', config.logLevel);
  const port = Number(process.env.ADMIN_PORT ?? 8585);
  const host = process.env.ADMIN_HOST ?? '127.0.0.1';

  const db = await openDatabase(process.env, logger);
  logger.info({ database: db.description }, 'database ready');
  const boot = await bootstrapKeys(db.sql, process.env.SVC_BOOTSTRAP_API_KEY, logger);

  const server = createServer();
  server.keepAliveTimeout = 65_000;
  const keyUsage = startKeyUsage(db.sql, logger);
  const controlPlane = await startControlPlane(server, db.sql, logger, keyUsage);
  const app = createApp({ sql: db.sql, config, logger, health: () => ({ controlPlane: controlPlane.stats() }), keyUsage });
  serveRequests(server, app, config.metrics.enabled ? createAdminMetrics(() => controlPlane.stats()) : null, logger);
  const retention = startRetention(db.sql, config.admin.retentionDays, logger);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const boundPort = (server.address() as { port: number }).port;
  logger.info({ port: boundPort, host }, 'admin listening');

  if (process.env.SVC_KEY_FILE) await ensureControlPlaneKey(db.sql, process.env.SVC_KEY_FILE, boot.organizationId);
  if (boot.created) printFirstStart(boot.created, port);
  if (process.send) process.send({ type: 'admin.ready', port: boundPort });

  let stopping = false;
  const stopInOrder = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'admin stopping');
    const force = setTimeout(() => process.exit(1), config.server.shutdownTimeoutMs + 5_000);
    force.unref();
    retention.stop();
    await controlPlane.close();
    await keyUsage.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), config.server.shutdownTimeoutMs).unref();
    });
    await db.close();
    logger.info('admin stopped');
    process.exit(0);
  };
  stop = (reason) => void stopInOrder(reason);
  if (stopRequested !== null) stop(stopRequested);
  process.on('uncaughtException', (err) => {
    const fault = postgresDriverFault(err);
    if (fault !== null) {
      // A known postgres.js fault whose query already failed to its caller (admin/postgres-driver-faults.ts).
      logger.warn({ fault, err: err.message }, 'ignored a PostgreSQL driver fault; the connection reconnects');
      return;
    }
    logger.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });
}

/**
 * The configuration named by `--config`/`GATEWAY_CONFIG` (default gateway.yaml).
 * Exits the process with code 2 (no restart under `npm start`) when it is invalid.
 */
function loadConfigOrExit(): GatewayConfig {
  try {
    return loadConfig(configPathFrom(process.argv.slice(2)), process.env, { checkRouterMembers: false });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`admin: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * Serves `server`'s requests with the Koa `app`: `GET /metrics` apart, every other request with a
 * `svc-request-id` header, its metrics and one `request` log line (route pattern, status, ms).
 * `metrics` null (`metrics.enabled: false`): nothing is counted and `GET /metrics` is the app's 404.
 */
function serveRequests(server: Server, app: Koa, metrics: AdminMetrics | null, logger: Logger): void {
  // The route pattern the router matched, per response (for the metric label and the log line).
  const routes = new WeakMap<ServerResponse, string>();
  app.middleware.unshift(async (ctx: Context, next: Next) => {
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      if (typeof matched === 'string') routes.set(ctx.res, matched);
    }
  });
  const handle = app.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (metrics && req.method === 'GET' && path === '/metrics') return metrics.serve(res);
    const requestId = randomUUID();
    const start = performance.now();
    res.setHeader('svc-request-id', requestId);
    metrics?.observe(req, res, () => routes.get(res) ?? null);
    // An answer sent before the body was read (413, 401, ...): discard the rest so the client sees it.
    res.once('prefinish', () => {
      if (!req.complete) lingerAfterAnswer(req);
    });
    res.once('close', () => {
      const status = res.writableFinished ? res.statusCode : 499;
      logger[status >= 500 ? 'warn' : 'info'](
        { requestId, method: req.method, route: routes.get(res) ?? 'unmatched', status, durationMs: Math.round(performance.now() - start) },
        'request',
      );
    });
    void handle(req, res);
  });
}

/** Prints the bootstrap API key, the only time it is shown, with the two base URLs. */
function printFirstStart(key: string, adminPort: number): void {
  const gatewayPort = process.env.GATEWAY_PORT ?? 8080;
  process.stdout.write(
    [
      '',
      '  Your API key (shown once; store it now):',
      `    ${key}`,
      '',
      `  Gateway:  http://localhost:${gatewayPort}/ai   (OpenAI base URL)`,
      `  REST API: http://localhost:${adminPort}/v1`,
      `  Console:  http://localhost:${adminPort}/`,
      '',
    ].join('\n') + '\n',
  );
}

main().catch((err) => {
  console.error('admin: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
