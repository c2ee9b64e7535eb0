/**
 * The GET routes, answered without the pipeline: `/health` (200, or 503 when the proxy cannot
 * serve: ./health.ts), `/ai/models` and `/v1/models` (the models the gateway can route to, in
 * OpenAI's list shape), one model at `/ai/models/<id>`, and `/metrics` (Prometheus text). A GET
 * of any other path goes through the pipeline, whose route stage answers it (404, or 405 on an
 * endpoint kind's path, in that kind's error shape), as it answers other methods on these paths.
 */
import type { ServerResponse } from 'node:http';
import { listModels } from '../../shared/models.ts';
import { badRequest, GatewayError, sendError } from '../errors.ts';
import type { GatewayRuntime } from '../pipeline/runtime.ts';
import { hasProvider } from '../providers/index.ts';
import { healthAnswer } from './health.ts';

/** The `/ai/models` list body, and each model's body by id (`<provider>/<model>`). */
export interface ModelBodies {
  list: string;
  byId: ReadonlyMap<string, string>;
}

/** The model bodies, serialized once at start. */
export function buildModelBodies(): ModelBodies {
  const models = listModels()
    .filter((m) => hasProvider(m.provider))
    .map((m) => ({ id: `${m.provider}/${m.model}`, object: 'model', created: 0, owned_by: m.provider }));
  return { list: JSON.stringify({ object: 'list', data: models }), byId: new Map(models.map((m) => [m.id, JSON.stringify(m)])) };
}

function sendBody(res: ServerResponse, body: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Answers a GET of a GET route and returns true; returns false, answering nothing, for any other
 * path (see the file's comment).
 */
export function handleGet(gw: GatewayRuntime, path: string, res: ServerResponse): boolean {
  if (path === '/health') {
    const { httpStatus, body } = healthAnswer(gw);
    sendBody(res, body, httpStatus);
  }
  else if (path === '/ai/models' || path === '/v1/models') sendBody(res, gw.models.list);
  else if (isModelPath(path)) sendModel(gw, path.slice(path.indexOf('/models/') + '/models/'.length), res);
  else if (path === '/metrics' && gw.metrics) sendMetrics(gw, res);
  else return false;
  return true;
}

/** True when `path` is one of the GET routes {@link handleGet} answers (`/metrics` only while metrics are on). */
export function isGetRoute(gw: GatewayRuntime, path: string): boolean {
  return path === '/health' || path === '/ai/models' || path === '/v1/models' || isModelPath(path) || (path === '/metrics' && gw.metrics !== null);
}

function isModelPath(path: string): boolean {
  return path.startsWith('/ai/models/') || path.startsWith('/v1/models/');
}

/** `/metrics`: the registry's text; a collection that fails is a 500 `metrics_unavailable` (and logged). */
function sendMetrics(gw: GatewayRuntime, res: ServerResponse): void {
  const metrics = gw.metrics!;
  metrics.registry.metrics().then(
    (text) => {
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      res.end(text);
    },
    (err: unknown) => {
      gw.logger.error({ err }, 'could not collect the metrics');
      sendError(res, new GatewayError(500, 'could not collect the metrics', 'server_error', 'metrics_unavailable'));
    },
  );
}

/**
 * `GET /ai/models/<id>` (and `/v1/…`): one model in OpenAI's shape. The id may carry its slash
 * as is or encoded (`openai%2Fgpt-4o-mini`, as the openai client sends it).
 * Answers 400 `invalid_model` when the id is not valid percent-encoding, 404 `model_not_found`
 * when the gateway does not list the model.
 */
function sendModel(gw: GatewayRuntime, encoded: string, res: ServerResponse): void {
  let id: string;
  try {
    id = decodeURIComponent(encoded);
  } catch {
    return sendError(res, badRequest(`model id ${JSON.stringify(encoded)} in the path is not valid percent-encoding`, 'model', 'invalid_model'));
  }
  const body = gw.models.byId.get(id);
  if (body === undefined) {
    return sendError(res, new GatewayError(404, `The model ${JSON.stringify(id)} does not exist; GET /ai/models lists the models (written "<provider>/<model>")`, 'invalid_request_error', 'model_not_found', 'model'));
  }
  sendBody(res, body);
}
