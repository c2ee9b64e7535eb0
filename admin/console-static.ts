/**
 * The web console's files, served by admin at `/` from `dist/console/` (built by scripts/build.ts's
 * `buildConsole`, which `npm start` runs): GET and HEAD of any path outside `/v1`, `/health` and
 * `/metrics`. A file is sent with @koa/send; a path that names no file and has no extension is a
 * client-side route and gets index.html; a missing file with an extension falls through (the
 * API's 404). Without a build, a page says to run `npm run build` (503).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { send } from '@koa/send';
import type { Context, Middleware, Next } from 'koa';

/** Where the built console lies by default (the repository's `dist/console`). */
export const CONSOLE_DIR = path.resolve(import.meta.dirname, '../dist/console');

/**
 * What the console may load: only its own files and admin's API (it works offline, nothing from
 * elsewhere), inline styles (chart.js sizes its canvas that way), and images of any origin or
 * `data:` (a logged message may carry one).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  'img-src * data: blob:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title>
<style>body{font-family:system-ui,sans-serif;background:#0d1014;color:#d7dde6;max-width:40em;margin:15vh auto;padding:0 1em}code{background:#191e26;padding:2px 6px;border-radius:3px}</style>
</head><body><h1>The console is not built</h1>
<p>Admin serves the web console from <code>dist/console/</code>, which does not exist yet.
Run <code>npm run build</code> (or start everything with <code>npm start</code>, which builds it), then reload.</p>
<p>The REST API is up at <code>/v1</code>.</p></body></html>
`;

/** @koa/send's options (the package exports the function, not its options type). */
type SendOptions = NonNullable<Parameters<typeof send>[2]>;

/** True for paths the console never answers: the API, health and metrics. */
function isApiPath(p: string): boolean {
  return p === '/v1' || p.startsWith('/v1/') || p === '/health' || p === '/metrics';
}

/** True when the last segment of `p` has no extension: a client-side route, not a file. */
function isRoutePath(p: string): boolean {
  const last = p.slice(p.lastIndexOf('/') + 1);
  return !last.includes('.');
}

function setHeaders(ctx: Context): void {
  ctx.set('content-security-policy', CSP);
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('referrer-policy', 'no-referrer');
}

/**
 * Koa middleware serving the console from `root` (default {@link CONSOLE_DIR}). Mount it before
 * the routers; it passes every other request on untouched.
 */
export function consoleStatic(root: string = CONSOLE_DIR): Middleware {
  const index = path.join(root, 'index.html');
  return async (ctx: Context, next: Next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    // Checked per request, so a build made while admin runs is served without a restart.
    if (!existsSync(index)) {
      ctx.status = 503;
      ctx.type = 'html';
      ctx.set('cache-control', 'no-store');
      ctx.body = NOT_BUILT_PAGE;
      return;
    }
    setHeaders(ctx);
    // The bundles keep fixed names (app.js, app.css), so the browser revalidates each load; a
    // precompressed copy (.br, .gz, written by the build) goes to a browser that accepts it.
    const options: SendOptions = {
      root,
      index: 'index.html',
      setHeaders: (res) => {
        res.setHeader('cache-control', 'no-cache');
        res.setHeader('vary', 'accept-encoding');
      },
    };
    try {
      await send(ctx, ctx.path, options);
      return;
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status !== 404) throw err;
    }
    if (!isRoutePath(ctx.path)) return next();
    await send(ctx, '/index.html', options);
  };
}
