/**
 * Proxy process entry: config, the control-plane link, the gateway on `GATEWAY_PORT` (default
 * 8080), and a clean stop on SIGINT/SIGTERM/SIGHUP (in-flight requests finish within the shutdown timeout
 * or are cut and logged as such, then the queued log records are flushed, then exit); under
 * `npm start`, when start.ts says so or is gone (shared/supervised.ts).
 *
 * Env: `GATEWAY_PORT`, `GATEWAY_HOST` (default 0.0.0.0), `SVC_CONTROL_PLANE_API_KEY`, provider keys
 * (`OPENAI_API_KEY`, ...), `GATEWAY_CONFIG` / `--config FILE`, `SVC_SUPERVISED` (set by `npm start`).
 */
import { configPathFrom, ConfigError, loadConfig } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { applyModelOverrides } from '../shared/models.ts';
import { onStopRequest } from '../shared/supervised.ts';
import { ControlPlaneClient } from './controlplane.ts';
import { createGateway } from './gateway.ts';
import { createMetrics } from './metrics.ts';
import { warmUpEstimator } from './tokenlimit/index.ts';

/**
 * `make()`'s result; on a {@link ConfigError} (the configuration, or a file it names, is wrong) one
 * line on stderr and exit code 2, which `npm start` does not restart (scripts/start.ts).
 */
function orExitOnConfigError<T>(make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`proxy: invalid configuration: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

function main(): void {
  const config = orExitOnConfigError(() => loadConfig(configPathFrom(process.argv.slice(2))));
  // gateway.yaml's `models:` prices and limits, for every model lookup of this process.
  applyModelOverrides(config.models);
  const logger = createLogger('proxy', config.logLevel);
  let controlPlane: ControlPlaneClient | null = null;
  if (config.features !== 'none') {
    const apiKey = process.env.SVC_CONTROL_PLANE_API_KEY;
    if (!apiKey) {
      console.error(`proxy: svc.features is "${config.features}", which needs SVC_CONTROL_PLANE_API_KEY (an API key of your organization)`);
      process.exit(2);
    }
    controlPlane = orExitOnConfigError(() =>
      ControlPlaneClient.start({
        url: config.controlPlane.url,
        apiKey,
        caFile: config.controlPlane.caFile,
        queue: { maxRecords: config.logQueue.maxRecords, maxBytes: config.logQueue.maxBytes, batchSize: config.logQueue.batchSize },
        flushIntervalMs: config.logQueue.flushIntervalMs,
        logger,
      }),
    );
  }
  // The tokenizer tables cost ~75 MB; most requests never need a count (their size in bytes already
  // fits the context window), so they load on first need unless `token-limit.preload` asks otherwise.
  if (config.tokenLimit.preload) warmUpEstimator();
  // metrics.enabled: false: no registry, so GET /metrics is not a route (404) and nothing is counted.
  const metrics = config.metrics.enabled ? createMetrics(controlPlane) : null;
  const gateway = createGateway({ config, logger, controlPlane, metrics });
  const port = Number(process.env.GATEWAY_PORT ?? 8080);
  const host = process.env.GATEWAY_HOST ?? '0.0.0.0';
  void gateway.ready().then(() => {
    if (stopping) return; // asked to stop while the store connected: never start listening
    gateway.server.listen(port, host, () => {
      const boundPort = (gateway.server.address() as { port: number }).port;
      logger.info({ port: boundPort, host, features: config.features }, 'gateway listening');
      if (process.send) process.send({ type: 'proxy.ready', port: boundPort });
    });
  });
  gateway.server.on('error', (err) => {
    logger.fatal({ err }, 'gateway server error (if its port is taken: set GATEWAY_PORT to a free one)');
    process.exit(1);
  });

  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'proxy stopping: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), config.server.shutdownTimeoutMs * 2 + 5_000);
    force.unref();
    await gateway.close();
    if (controlPlane) {
      const flushed = await controlPlane.close(config.server.shutdownTimeoutMs);
      const stats = controlPlane.queue.getStats();
      if (flushed) logger.info({ flushed, ...stats }, 'log queue flushed');
      else logger.warn({ flushed, lost: stats.queued + stats.inFlight, ...stats }, 'admin did not acknowledge every queued record before the shutdown timeout; these records are lost');
    }
    logger.info('proxy stopped');
    process.exit(0);
  };
  onStopRequest((reason) => void stop(reason));
}

main();
