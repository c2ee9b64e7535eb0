/**
 * Stage route: which endpoint kind (and router) the path names. `/ai/…` and `/v1/…` paths are one
 * Map lookup; `/router/<name>/<tail>` looks up the tail, then the router by its decoded name; a
 * stored response's path is matched by prefix after those lookups missed. The kinds found by
 * lookup take POST only; a stored response's methods are checked by its stage
 * (./stored-response.ts), and the GET routes (../server/get-routes.ts) answer other methods here.
 */
import { badRequest, GatewayError } from '../errors.ts';
import { KIND_BY_PATH, KIND_BY_ROUTER_TAIL, MESSAGES_KIND, STORED_RESPONSE_KIND, storedResponsePath, storedResponseTarget } from '../endpoints/index.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { isGetRoute } from '../server/get-routes.ts';

const ROUTER_PREFIX = '/router/';

// Made once: sendError copies them, never writes them.
const ALLOW_POST: Readonly<Record<string, string>> = Object.freeze({ allow: 'POST' });
const ALLOW_GET: Readonly<Record<string, string>> = Object.freeze({ allow: 'GET, HEAD' });

/** 405 `method_not_allowed` for the request's method on its path, with `Allow` (`allow`: its header). */
function methodNotAllowed(ctx: RequestContext, allow: Readonly<Record<string, string>>): GatewayError {
  return new GatewayError(405, `${ctx.req.method} is not allowed on ${ctx.path}; use ${allow.allow}`, 'invalid_request_error', 'method_not_allowed', null, allow as Record<string, string>);
}

/**
 * Sets `ctx.kind`, `ctx.routeLabel` and, on a router path, `ctx.routerName` and `ctx.router`.
 * A stored response's path (`…/responses/{id}`, `…/input_items`, `…/cancel`) is matched by prefix
 * once the exact lookup missed; its label has `{id}` for the id.
 * Errors are answered in the shape of the kind the path names (an unknown router's too); an unknown
 * path in Anthropic's shape when the client looks like an Anthropic one (an `anthropic-version`
 * header, or a path under `/messages`), else OpenAI's.
 * @throws {GatewayError} 404 `not_found` for an unknown path, 404 `router_not_found` for an unknown
 *   router, 400 `invalid_router_name` for a router name that is not valid percent-encoding, 405
 *   `method_not_allowed` (with `Allow`) for a method other than POST on an endpoint kind's path and
 *   other than GET on a GET route's.
 */
export function route(ctx: RequestContext): void {
  const p = ctx.path;
  const kind = KIND_BY_PATH.get(p);
  if (kind !== undefined) {
    ctx.kind = kind;
    ctx.routeLabel = p;
    if (ctx.req.method !== 'POST') throw methodNotAllowed(ctx, ALLOW_POST);
    return;
  }
  if (p.startsWith(ROUTER_PREFIX)) {
    const slash = p.indexOf('/', ROUTER_PREFIX.length);
    const tail = slash < 0 ? '' : p.slice(slash);
    let routed = slash < 0 ? undefined : KIND_BY_ROUTER_TAIL.get(tail);
    let label = routed?.routerLabel;
    if (routed === undefined && slash >= 0) {
      const stored = storedResponseTarget(tail, 'router');
      if (stored !== null) {
        routed = STORED_RESPONSE_KIND;
        label = stored.label;
      }
    }
    if (routed !== undefined) {
      ctx.kind = routed;
      const name = p.slice(ROUTER_PREFIX.length, slash);
      let decoded: string;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        throw badRequest(`router name ${JSON.stringify(name)} in the path is not valid percent-encoding`, null, 'invalid_router_name');
      }
      const router = ctx.gw.routers.get(decoded);
      if (!router) throw new GatewayError(404, `unknown router ${JSON.stringify(decoded)}`, 'invalid_request_error', 'router_not_found');
      ctx.routerName = router.config.name;
      ctx.router = router;
      ctx.routeLabel = label!;
      if (routed !== STORED_RESPONSE_KIND && ctx.req.method !== 'POST') throw methodNotAllowed(ctx, ALLOW_POST);
      return;
    }
  }
  const stored = storedResponsePath(p);
  if (stored !== null) {
    ctx.kind = STORED_RESPONSE_KIND;
    ctx.routeLabel = stored.label;
    return;
  }
  if (isGetRoute(ctx.gw, p)) throw methodNotAllowed(ctx, ALLOW_GET);
  if (ctx.req.headers['anthropic-version'] !== undefined || p.includes('/messages')) ctx.kind = MESSAGES_KIND;
  throw new GatewayError(404, `no route for ${ctx.req.method} ${p}`, 'invalid_request_error', 'not_found');
}
