/**
 * Admin's Koa application: health, the error envelope, API-key authentication and the `/v1` routes,
 * assembled in one visible place. Each resource's routes live in `routes/<resource>.ts`.
 */
import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../shared/config.ts';
import type { Sql } from './db.ts';
import { authenticate, errorEnvelope } from './http.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { requestRoutes } from './routes/requests.ts';

/** What the app needs: the database, config, logger, and a health reporter for the control plane. */
export interface AppDeps {
  sql: Sql;
  config: GatewayConfig;
  logger: Logger;
  health: () => Record<string, unknown>;
}

/** Builds the Koa app. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(errorEnvelope(deps.logger));

  const open = new Router();
  open.get('/health', (ctx) => {
    ctx.body = { status: 'ok', ...deps.health() };
  });
  app.use(open.routes());

  const v1 = new Router();
  v1.use(authenticate(deps.sql));
  requestRoutes(v1, deps.sql);
  apiKeyRoutes(v1, deps.sql, deps.config.admin.maxBodyBytes);
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}
