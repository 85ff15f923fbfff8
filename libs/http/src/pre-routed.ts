import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { FastPathFactory } from './fast-path';
import { createRequestObserver, errorHandler, notFoundHandler } from './middleware';

/** One Express route answered before Express walks its router: the handlers Express would run for it, in order. */
export interface PreRoutedRoute {
  /** Upper case, as req.method. */
  method: string;
  /**
   * The route's Express path: literal segments and `:name` parameters only. A request matches it
   * exactly as written, with or without a trailing slash; any other spelling Express would also
   * route here (another case, an encoded character) is left to Express, which answers the same.
   */
  path: string;
  /** What Express runs for a request of this path before the route's own chain (the middleware mounted in front of it). */
  before: readonly RequestHandler[];
  /** The route's own chain (its checks, then its handlers); its path is its metric label once the chain starts. */
  handlers: readonly RequestHandler[];
  /** What Express runs on an error before the app's error handler (the routers' own error middleware). */
  onError: readonly ErrorRequestHandler[];
}

/** A parameter's text as Express takes it; anything that needs decoding is left to Express. */
const PLAIN_PARAMETER = '([A-Za-z0-9@_.~-]+)';

interface CompiledRoute extends PreRoutedRoute {
  pattern: RegExp;
  names: string[];
}

function compile(route: PreRoutedRoute): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) {
        const name = segment.slice(1);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`pre-routed path ${route.path}: parameter ${segment} is not a plain name`);
        names.push(name);
        return PLAIN_PARAMETER;
      }
      if (!/^[A-Za-z0-9_.~-]*$/.test(segment)) throw new Error(`pre-routed path ${route.path}: segment ${segment} is not literal`);
      return segment.replace(/\./g, '\\.');
    })
    .join('/');
  return { ...route, pattern: new RegExp(`^${source}/?$`), names };
}

/**
 * Runs handlers as Express runs a matched route's layers: each gets `next`; a thrown error or a
 * rejected promise is passed to `next` as an error; an error goes to the error handlers in turn;
 * falling off the end answers Express's final 404 (notFoundHandler).
 */
function dispatch(
  handlers: readonly RequestHandler[],
  onError: readonly ErrorRequestHandler[],
  req: Request,
  res: Response,
  entered: (index: number) => void,
): void {
  let index = 0;
  let errorIndex = 0;
  const next = (err?: unknown): void => {
    const failed = err !== undefined && err !== null && err !== 'route' && err !== 'router';
    if (failed) {
      const handler = onError[errorIndex++];
      if (!handler) return;
      call(() => handler(err, req, res, next));
      return;
    }
    const handler = err === 'route' || err === 'router' || errorIndex > 0 ? undefined : handlers[index];
    if (!handler) return void call(() => notFoundHandler(req, res, next));
    entered(index++);
    call(() => handler(req, res, next));
  };
  const call = (run: () => unknown) => {
    try {
      const returned = run();
      if (returned instanceof Promise) returned.then(null, (error: unknown) => next(error ?? new Error('Rejected promise')));
    } catch (error) {
      next(error);
    }
  };
  next();
}

/**
 * Declared Express routes answered before Express sees the request (a FastPath): the same
 * handler instances Express runs for them (the middleware mounted in front, the route's chain,
 * the error middleware, then the service app's error handler), with Express's request and
 * response prototypes and the request context (id, metrics) requestContext gives; only the walk
 * through the app's routers, and their turns of the event loop between routers, is left out. So
 * a pre-routed route answers exactly as through Express, for less. Requests of any other method
 * or path are left to Express.
 */
export function preRoutedFastPath(routes: readonly PreRoutedRoute[]): FastPathFactory {
  const compiled = routes.map(compile);
  return ({ app, metrics, express }) => {
    const observe = createRequestObserver(app, metrics);
    const finalErrors = (route: CompiledRoute): ErrorRequestHandler[] => [...route.onError, errorHandler()];
    const byRoute = new Map(compiled.map((route) => [route, { handlers: [...route.before, ...route.handlers], onError: finalErrors(route) }]));
    return (incoming: IncomingMessage, response: ServerResponse) => {
      const url = incoming.url ?? '';
      const queryAt = url.indexOf('?');
      const path = queryAt === -1 ? url : url.slice(0, queryAt);
      let route: CompiledRoute | undefined;
      let found: RegExpExecArray | null = null;
      for (const candidate of compiled) {
        if (candidate.method !== incoming.method) continue;
        found = candidate.pattern.exec(path);
        if (found) {
          route = candidate;
          break;
        }
      }
      if (!route || !found) return false;
      const { handlers, onError } = byRoute.get(route)!;
      // As Express's app.handle and router set a request up (express/lib/application.js, router/index.js).
      const req = incoming as Request;
      const res = response as Response;
      req.res = res;
      res.req = req;
      Object.setPrototypeOf(req, express.request);
      Object.setPrototypeOf(res, express.response);
      if (!res.locals) res.locals = Object.create(null) as Response['locals'];
      req.originalUrl = url;
      req.baseUrl = '';
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => (params[name] = found[i + 1]!));
      req.params = params;
      // The metric's route label as requestContext reads it: the route's path once its own chain runs, before that unmatched.
      let matched = false;
      const routeStart = route.before.length;
      req.id = observe(req, res, () => (matched ? route.path : 'unmatched'));
      dispatch(handlers, onError, req, res, (index) => (matched ||= index >= routeStart));
      return true;
    };
  };
}
