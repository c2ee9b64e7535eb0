/**
 * Admin's Koa application: health, the error envelope, API-key authentication and the `/v1` routes,
 * assembled in one visible place. Each resource's routes live in `routes/<resource>.ts`; the API's
 * OpenAPI description is `openapi.ts` (a test holds it and the registered routes to each other).
 */
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../shared/config.ts';
import type { Sql } from './db.ts';
import { authenticate, errorEnvelope } from './http.ts';
import { openApiRoutes } from './openapi.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { datasetRoutes } from './routes/datasets.ts';
import { evalRoutes } from './routes/evals.ts';
import { prompt2025Routes } from './routes/prompts-2025.ts';
import { promptRoutes } from './routes/prompts.ts';
import { requestRoutes } from './routes/requests.ts';

/** What the app needs: the database, config, logger, and a health reporter for the control plane. */
export interface AppDeps {
  sql: Sql;
  config: GatewayConfig;
  logger: Logger;
  health: () => Record<string, unknown>;
}

/**
 * The app's routers: `open` (no key: `/health`) and `v1` (every route behind {@link authenticate}).
 * Exposed so tests can enumerate the registered routes.
 */
export function buildRouters(deps: AppDeps): { open: Router; v1: Router } {
  const open = new Router();
  open.get('/health', (ctx) => {
    ctx.body = { status: 'ok', ...deps.health() };
  });

  const maxBody = deps.config.admin.maxBodyBytes;
  const v1 = new Router();
  v1.use(authenticate(deps.sql));
  requestRoutes(v1, deps.sql, maxBody);
  apiKeyRoutes(v1, deps.sql, maxBody);
  evalRoutes(v1, deps.sql, maxBody);
  promptRoutes(v1, deps.sql, maxBody);
  prompt2025Routes(v1, deps.sql, maxBody);
  datasetRoutes(v1, deps.sql, maxBody);
  openApiRoutes(v1);
  return { open, v1 };
}

/** Builds the Koa app. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(errorEnvelope(deps.logger));
  const { open, v1 } = buildRouters(deps);
  app.use(open.routes());
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}
