/**
 * The server's `request` listener: GETs go to the GET routes (but a GET of a stored response of
 * the Responses API, which goes to a provider); any other request, and a GET of a path no GET route
 * serves (answered 404 or 405 by the route stage), gets its context and runs the pipeline from its
 * first stage. No closure and no promise per request: the response's
 * `close` listener and the body handlers are shared functions that find the context on `res`/`req`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createContext } from '../pipeline/context.ts';
import { onResponseClose } from '../pipeline/finish.ts';
import { run } from '../pipeline/pipeline.ts';
import type { GatewayRuntime } from '../pipeline/runtime.ts';
import { handleGet } from './get-routes.ts';

/** What a stored response's path holds (`/v1/responses/{id}`, `/router/<name>/responses/{id}/input_items`). */
const RESPONSES_SEGMENT = '/responses/';

/** Handles one request on `gw` (see the file's comment). */
export function handleRequest(gw: GatewayRuntime, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  // A stored response of the Responses API (GET …/responses/{id}) is a provider call: through the stages.
  // HEAD is GET without the body (RFC 9110 §9.3.2): node:http drops the body of a HEAD's response.
  if ((req.method === 'GET' || req.method === 'HEAD') && !path.includes(RESPONSES_SEGMENT) && handleGet(gw, path, res)) return;
  gw.inFlight++;
  const ctx = createContext(gw, req, res, path);
  res.once('close', onResponseClose);
  gw.deadlines.track(ctx);
  run(ctx, 0);
}
