import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { ApiError, errors } from './api-error';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Request id (kept from X-Request-Id when sane), a child logger, and per-route metrics.
 * Deliberately not pino-http: a log line per request costs more than the ingest path itself.
 * Kept cheap because it runs on every capture request: the child logger is built on first
 * use (most requests never log; see defineLazyRequestLogger), and the labelled metric children are
 * cached instead of prom-client hashing the label object on every observation.
 */
export function requestContext(app: string, metrics: Metrics): RequestHandler {
  const observe = createRequestObserver(app, metrics);
  return (req, res, next) => {
    req.id = observe(req, res, () => routeLabel(req));
    next();
  };
}

/**
 * What requestContext does, on a bare node:http request (for handlers that answer before
 * Express sees the request): the request id (kept from X-Request-Id when sane, set on the
 * answer) and the request's count and duration under `route()`, read when it finishes.
 */
export function createRequestObserver(app: string, metrics: Metrics): (req: IncomingMessage, res: ServerResponse, route: () => string) => string {
  const counters = new Map<string, { inc(): void }>();
  const durations = new Map<string, { observe(value: number): void }>();
  const countFor = (route: string, method: string, status: number) => {
    const key = `${route} ${method} ${status}`;
    let child = counters.get(key);
    if (!child) counters.set(key, (child = metrics.httpRequests.labels({ app, route, method, status: String(status) })));
    return child;
  };
  const durationFor = (route: string) => {
    let child = durations.get(route);
    if (!child) durations.set(route, (child = metrics.httpDuration.labels({ app, route })));
    return child;
  };
  return (req, res, route) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const label = route();
      countFor(label, req.method ?? 'GET', res.statusCode).inc();
      durationFor(label).observe(Number(process.hrtime.bigint() - started) / 1e9);
    });
    return id;
  };
}

/**
 * `req.log`: a child logger with the request id, built on first use. Defined once per app as a
 * getter on the app's request prototype rather than per request: a pino child per request
 * costs more than most of the capture path, and most requests never log.
 */
export function defineLazyRequestLogger(app: Express, logger: Logger): void {
  const built = new WeakMap<object, Logger>();
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request) {
      let log = built.get(this);
      if (!log) built.set(this, (log = logger.child({ reqId: this.id })));
      return log;
    },
    set(this: Request, value: Logger) {
      built.set(this, value);
    },
  });
}

/** Set by a router that matches paths itself (no Express route object) to label its metrics. */
export const ROUTE_LABEL_LOCAL = 'routeLabel';

function routeLabel(req: Request): string {
  const own = req.res?.locals[ROUTE_LABEL_LOCAL];
  if (typeof own === 'string') return own;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return req.baseUrl + path;
  if (Array.isArray(path)) return req.baseUrl + String(path[0]);
  return 'unmatched';
}

export function sendError(res: Response, error: ApiError): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(error.toBody());
}

/** Unknown routes: JSON 404, never Express's HTML page. */
export const notFoundHandler: RequestHandler = (_req, res) => sendError(res, errors.notFound());

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  message?: string;
}

/** The last middleware: maps every error to the DRF envelope; only real bugs become 500. */
export function errorHandler(): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof ApiError) return sendError(res, err);
    const e = err as BodyParserError;
    // Errors raised by express.json() / raw-body.
    if (e?.type === 'entity.parse.failed') return sendError(res, errors.parse(`Malformed request data: ${e.message ?? 'invalid JSON'}`));
    if (e?.type === 'entity.too.large') return sendError(res, errors.payloadTooLarge(e.limit ?? 0));
    if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported')
      return sendError(res, errors.unsupportedMediaType(e.message ?? 'unsupported encoding'));
    if (e?.type === 'request.aborted') return; // the client went away
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      return sendError(res, new ApiError(e.status, 'invalid_request', 'invalid_request', e.message ?? 'Invalid request.'));
    }
    (req.log ?? console).error({ err }, 'unhandled error');
    sendError(res, errors.server());
  };
}
