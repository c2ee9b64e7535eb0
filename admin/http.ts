/**
 * Admin's HTTP plumbing: the `{data, error}` envelope, the error middleware that turns every
 * failure into a status and an envelope (never a 500 for a caller's mistake), and API-key
 * authentication. Reading and validating what the caller sends is admin/validation.ts.
 */
import type { Context, Next } from 'koa';
import { bearerToken, hashApiKey } from '../shared/apikey.ts';
import type { Sql } from './db.ts';
import type { KeyUsage } from './key-usage.ts';
import { findKey } from './resources/api-keys/store.ts';

/** An error with an HTTP status for the caller (4xx) or the service (5xx). */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Authenticated caller: the key's organization and id, set by {@link authenticate} on `ctx.state`. */
export interface AuthState {
  organizationId: string;
  keyId: string;
}

/** Sets `ctx.body` to the success envelope `{data, error: null}` with status 200. */
export function ok(ctx: Context, data: unknown): void {
  ctx.status = 200;
  ctx.body = { data, error: null };
}

function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'CONNECTION_CLOSED' ||
    code === 'CONNECTION_ENDED' ||
    code === 'CONNECTION_DESTROYED' ||
    code === 'CONNECT_TIMEOUT' ||
    code === '57P01' || // admin_shutdown
    code === '57P03' // cannot_connect_now
  );
}

/**
 * The error message of a status the routers set without a body (no route, or the router's
 * `allowedMethods()`: 405 with `Allow` for a method the path has not, 501 for a method no route
 * implements), or null for any other status.
 */
function unroutedMessage(ctx: Context): string | null {
  const allow = ctx.response.get('Allow');
  switch (ctx.status) {
    case 404:
      return `no route for ${ctx.method} ${ctx.path}`;
    case 405:
      return `method ${ctx.method} not allowed on ${ctx.path}; allowed: ${allow}`;
    case 501:
      return `method ${ctx.method} not implemented${allow ? `; ${ctx.path} allows ${allow}` : ''}`;
    default:
      return null;
  }
}

/**
 * PostgreSQL errors (SQLSTATE, https://www.postgresql.org/docs/15/errcodes-appendix.html) that only a
 * value sent by the caller causes here: invalid_text_representation (22P02), invalid_datetime_format
 * (22007), datetime_field_overflow (22008), invalid_time_zone_displacement_value (22009),
 * character_not_in_repertoire (22021, e.g. U+0000 in text), numeric_value_out_of_range (22003).
 * A 400 naming PostgreSQL's complaint, not a 500.
 */
const CALLER_VALUE_ERRORS: ReadonlySet<string> = new Set(['22P02', '22007', '22008', '22009', '22021', '22003']);

/**
 * Replaces a JSON body (a plain object or array) by its text, as Koa would write it. Here, inside
 * {@link errorEnvelope}, a body that cannot be serialized (a string longer than V8's longest,
 * RangeError "Invalid string length"; a BigInt; a cycle) is an error the middleware answers and logs;
 * left to Koa it would fail after every middleware, as a text/plain 500 that nothing logs.
 * The Content-Type stays the `application/json` Koa set when the object was assigned.
 */
function serializeJsonBody(ctx: Context): void {
  const body: unknown = ctx.body;
  if (body === null || typeof body !== 'object') return;
  const proto = Object.getPrototypeOf(body);
  if (Array.isArray(body) || proto === Object.prototype || proto === null) ctx.body = JSON.stringify(body);
}

/**
 * Koa middleware answering every thrown error with the envelope `{"data": null, "error": "..."}`:
 * HttpError → its status; body-parser errors → 400/413; database unreachable → 503; anything else → 500
 * (logged), a JSON body that cannot be serialized too ({@link serializeJsonBody}). Unknown routes → 404;
 * a method the route has not → 405 (its `Allow` header kept); a method no route implements → 501.
 */
export function errorEnvelope(logger: { error(obj: object, msg?: string): void }) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      const message = ctx.body === undefined ? unroutedMessage(ctx) : null;
      if (message !== null) {
        // Koa would answer these with its text/plain status text; REST callers parse the envelope.
        const status = ctx.status;
        ctx.body = { data: null, error: message };
        ctx.status = status;
      }
      serializeJsonBody(ctx);
    } catch (err) {
      const e = err as { status?: number; expose?: boolean; message?: string; type?: string };
      let status: number;
      let message: string;
      if (err instanceof HttpError) {
        status = err.status;
        message = err.message;
      } else if (isDatabaseUnavailable(err)) {
        status = 503;
        message = 'database unavailable, try again shortly';
      } else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
        status = e.status;
        message = e.message ?? 'bad request';
      } else if (CALLER_VALUE_ERRORS.has((err as { code?: string }).code ?? '')) {
        // A value from the caller PostgreSQL refused that no check before it caught: the caller's mistake.
        status = 400;
        message = `invalid value: ${(err as Error).message}`;
      } else {
        status = 500;
        message = 'internal error';
        logger.error({ err }, 'unhandled admin error');
      }
      ctx.status = status;
      ctx.body = { data: null, error: message };
    }
  };
}

/**
 * Koa middleware: `Authorization: Bearer <API key>` → `ctx.state.auth` ({@link AuthState}); the key
 * is marked used in `keyUsage` (written later, off the response path).
 * @throws {HttpError} 401 when the header is missing or malformed, or the key is unknown or revoked.
 */
export function authenticate(sql: Sql, keyUsage?: Pick<KeyUsage, 'mark'>) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const key = bearerToken(ctx.get('authorization') || undefined);
    if (!key) throw new HttpError(401, 'missing or malformed Authorization header; expected "Bearer <API key>"');
    const found = await findKey(sql, hashApiKey(key));
    if (!found) throw new HttpError(401, 'invalid API key');
    keyUsage?.mark(found.organizationId, [found.keyId]);
    ctx.state.auth = found satisfies AuthState;
    await next();
  };
}

/** The authenticated caller of a request (after {@link authenticate}). */
export function auth(ctx: Context): AuthState {
  return ctx.state.auth as AuthState;
}
