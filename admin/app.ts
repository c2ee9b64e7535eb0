/**
 * Admin's Koa application: health, the error envelope, the web console's files (console-static.ts),
 * API-key authentication and the `/v1` routes, assembled in one visible place. Each resource lives
 * in `resources/<resource>/` (its routes, body schemas and SQL); the API's OpenAPI description is
 * `openapi.ts` (a test holds it and the registered routes to each other).
 */
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../shared/config.ts';
import { consoleStatic } from './console-static.ts';
import type { Sql } from './db.ts';
import { authenticate, errorEnvelope } from './http.ts';
import type { KeyUsage } from './key-usage.ts';
import { openApiRoutes } from './openapi.ts';
import { apiKeyRoutes } from './resources/api-keys/routes.ts';
import { dashboardRoutes } from './resources/dashboard/routes.ts';
import { datasetRoutes } from './resources/datasets/routes.ts';
import { evalRoutes } from './resources/evals/routes.ts';
import { prompt2025Routes } from './resources/prompts-2025/routes.ts';
import { promptRoutes } from './resources/prompts/routes.ts';
import { requestRoutes } from './resources/requests/routes.ts';
import { sessionRoutes } from './resources/sessions/routes.ts';

/**
 * What the app needs: the database, config, logger, a health reporter for the control plane, and
 * where REST key uses are marked for `last_used_at` (none: not recorded, as in tests of other things).
 */
export interface AppDeps {
  sql: Sql;
  config: GatewayConfig;
  logger: Logger;
  health: () => Record<string, unknown>;
  keyUsage?: KeyUsage;
  /** Where the built web console lies (default `dist/console`, see console-static.ts). */
  consoleDir?: string;
}

/**
 * The app's routers: `open` (no key: `/health` and `/v1/openapi.json`, which describes the API and
 * holds no data) and `v1` (every other route, behind {@link authenticate}).
 * Exposed so tests can enumerate the registered routes.
 */
export function buildRouters(deps: AppDeps): { open: Router; v1: Router } {
  const open = new Router();
  open.get('/health', (ctx) => {
    ctx.body = { status: 'ok', ...deps.health() };
  });
  openApiRoutes(open);

  const maxBody = deps.config.admin.maxBodyBytes;
  const v1 = new Router();
  v1.use(authenticate(deps.sql, deps.keyUsage));
  requestRoutes(v1, deps.sql, maxBody, deps.config.admin.maxPageBodyBytes);
  apiKeyRoutes(v1, deps.sql, maxBody);
  evalRoutes(v1, deps.sql, maxBody);
  promptRoutes(v1, deps.sql, maxBody);
  prompt2025Routes(v1, deps.sql, maxBody);
  datasetRoutes(v1, deps.sql, maxBody, deps.config.admin.maxPageBodyBytes);
  dashboardRoutes(v1, deps.sql, maxBody);
  sessionRoutes(v1, deps.sql, maxBody);
  return { open, v1 };
}

/**
 * Logs a failure Koa met after errorEnvelope had returned (a streamed body failing mid-way, when the
 * status is sent and no envelope can follow); `app.silent` keeps Koa from printing it itself. A
 * client that goes away mid-stream is a warning, not an error of admin.
 */
function logOutsideEnvelope(logger: Logger, err: { expose?: boolean; code?: string }, ctx?: Koa.Context): void {
  if (err.expose) return;
  const where = { err, method: ctx?.method, path: ctx?.path };
  if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') logger.warn(where, 'admin response cut: the client went away');
  else logger.error(where, 'admin response failed after the error middleware');
}

/** Builds the Koa app. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(errorEnvelope(deps.logger));
  app.on('error', (err: { expose?: boolean; code?: string }, ctx?: Koa.Context) => logOutsideEnvelope(deps.logger, err, ctx));
  // The web console at `/`: GET/HEAD outside /v1, /health and /metrics, ahead of the routers.
  app.use(consoleStatic(deps.consoleDir));
  const { open, v1 } = buildRouters(deps);
  app.use(open.routes());
  app.use(v1.routes());
  // 405 (with Allow) and 501 bodies come from errorEnvelope: allowedMethods sets only status and header.
  app.use(v1.allowedMethods());
  return app;
}
