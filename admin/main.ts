/**
 * Admin process entry: config, database (embedded unless `DATABASE_URL`), migrations, key
 * bootstrap, the REST API and the control-plane WebSocket on `ADMIN_PORT` (default 8585), the
 * retention job, and a clean stop on SIGINT/SIGTERM.
 *
 * Env: `ADMIN_PORT`, `DATABASE_URL`, `SVC_BOOTSTRAP_API_KEY`, `GATEWAY_CONFIG` / `--config FILE`,
 * `SVC_KEY_FILE` (a file that `npm start` uses to hand the proxy its control-plane key, mode 0600).
 */
import { createServer } from 'node:http';
import { configPathFrom, ConfigError, loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { createApp } from './app.ts';
import { startControlPlane } from './controlplane.ts';
import { openDatabase } from './db.ts';
import { bootstrapKeys, ensureControlPlaneKey } from './keys.ts';
import { startRetention } from './retention.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(configPathFrom(process.argv.slice(2)));
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`admin: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger('admin', config.logLevel);
  const port = Number(process.env.ADMIN_PORT ?? 8585);
  const host = process.env.ADMIN_HOST ?? '127.0.0.1';

  const db = await openDatabase(process.env, logger);
  logger.info({ database: db.description }, 'database ready');
  const boot = await bootstrapKeys(db.sql, process.env.SVC_BOOTSTRAP_API_KEY, logger);

  const server = createServer();
  server.keepAliveTimeout = 65_000;
  const controlPlane = await startControlPlane(server, db.sql, logger);
  const app = createApp({ sql: db.sql, config, logger, health: () => ({ controlPlane: controlPlane.stats() }) });
  server.on('request', app.callback());
  const retention = startRetention(db.sql, config.admin.retentionDays, logger);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const boundPort = (server.address() as { port: number }).port;
  logger.info({ port: boundPort, host }, 'admin listening');

  if (process.env.SVC_KEY_FILE) await ensureControlPlaneKey(db.sql, process.env.SVC_KEY_FILE, boot.organizationId);
  if (boot.created) {
    const gatewayPort = process.env.GATEWAY_PORT ?? 8080;
    // Printed once, on purpose, to the terminal: the only time the key is shown.
    process.stdout.write(
      [
        '',
        '  Your API key (shown once; store it now):',
        `    ${boot.created}`,
        '',
        `  Gateway:  http://localhost:${gatewayPort}/ai   (OpenAI base URL)`,
        `  REST API: http://localhost:${port}/v1`,
        '',
      ].join('\n') + '\n',
    );
  }
  if (process.send) process.send({ type: 'admin.ready', port: boundPort });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'admin stopping');
    const force = setTimeout(() => process.exit(1), config.server.shutdownTimeoutMs + 5_000);
    force.unref();
    retention.stop();
    await controlPlane.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), config.server.shutdownTimeoutMs).unref();
    });
    await db.close();
    logger.info('admin stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error('admin: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
