import { Router, type RequestHandler } from 'express';
import type { Project } from '@sightline/accounts';
import { requireScope, type Scope } from '@sightline/auth';
import { ApiError } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { csvListResponder } from './csv-response';
import { organizationAccess, refuseProjectRestrictedKeys } from './organization-access';
import { projectAccess } from './project-access';
import { requestBodyValidator, type RequestBodySchema } from './request-body-schema';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Which throttle class a route counts against: `clickhouse` for endpoints that query ClickHouse
 * (insights, persons, query), as PostHog's ClickHouseBurst/SustainedRateThrottle; `general` for the rest.
 */
export type ThrottleClass = 'general' | 'clickhouse';

/** What a management route declares once; everything around its handlers is derived from it. */
export interface RouteMeta {
  /** The scope (or all of the scopes) a personal key needs. A route without one cannot be mounted. */
  scope: Scope | readonly Scope[];
  /** One line for the API document. */
  summary: string;
  /** JSON schema of the body (ajv); a body failing it is a DRF 400 naming the field before the handler runs. */
  body?: RequestBodySchema;
  /** A body that the route accepts, for the API document and the generated tests. */
  example?: () => unknown;
  /** Default `general`. */
  throttle?: ThrottleClass;
  /** A list endpoint: `format=csv` answers its `results` as CSV. */
  list?: boolean;
  /**
   * For a route outside any project: `narrowed` when what it answers and does is narrowed to the
   * projects of a key restricted to some (`scoped_teams`), so such a key may use it. Any other
   * route outside a project acts on the organisation and refuses such a key (403).
   */
  projectRestrictedKeys?: 'narrowed';
  /** Query parameters the route reads, for the API document; the required ones' examples are sent by the generated tests. */
  query?: readonly QueryParameter[];
}

export interface QueryParameter {
  name: string;
  description: string;
  required?: boolean;
  /** A value the route accepts. */
  example?: string;
}

/** The required query parameters of a route with their examples, as a query string ('' when none). */
export function exampleQueryString(route: Pick<RouteMeta, 'query'>): string {
  const required = (route.query ?? []).filter((p) => p.required && p.example !== undefined);
  return required.length === 0 ? '' : `?${new URLSearchParams(required.map((p): [string, string] => [p.name, p.example!])).toString()}`;
}

export interface RouteDefinition extends RouteMeta {
  method: HttpMethod;
  /** An Express path; `:project_id` makes the route resolve and check the project. */
  path: string;
  handlers: readonly RequestHandler[];
}

/**
 * Both prefixes PostHog serves a project's resources under (`environments` is the newer name of
 * the same project), in the order each route is registered under them. No URL matches a path
 * under both, so the order between the two never decides which route answers.
 */
export const PROJECT_PREFIXES = ['/api/projects/:project_id', '/api/environments/:project_id'] as const;

/** The routes of one resource, declared in order (Express matches in declaration order). */
export class RouteTable {
  readonly routes: RouteDefinition[] = [];

  get(path: string, meta: RouteMeta, ...handlers: RequestHandler[]): this {
    return this.add('get', path, meta, handlers);
  }
  post(path: string, meta: RouteMeta, ...handlers: RequestHandler[]): this {
    return this.add('post', path, meta, handlers);
  }
  put(path: string, meta: RouteMeta, ...handlers: RequestHandler[]): this {
    return this.add('put', path, meta, handlers);
  }
  patch(path: string, meta: RouteMeta, ...handlers: RequestHandler[]): this {
    return this.add('patch', path, meta, handlers);
  }
  delete(path: string, meta: RouteMeta, ...handlers: RequestHandler[]): this {
    return this.add('delete', path, meta, handlers);
  }

  /**
   * Declares routes of a project's resource, each once: `project.get('/actions', …)` registers
   * `/api/projects/:project_id/actions` and `/api/environments/:project_id/actions`. The routes
   * declared in `declare` are registered in their order under the first prefix, then under the
   * second, so the table (and the API document) reads one prefix at a time.
   */
  inProject(declare: (project: RouteTable) => void): this {
    // The callback declares into a table of its own, with paths relative to the prefixes.
    const project = new RouteTable();
    declare(project);
    for (const prefix of PROJECT_PREFIXES) {
      for (const route of project.routes) this.routes.push({ ...route, path: `${prefix}${route.path}` });
    }
    return this;
  }

  /** Appends other tables' routes, keeping their order. */
  include(...tables: readonly RouteTable[]): this {
    for (const table of tables) this.routes.push(...table.routes);
    return this;
  }

  private add(method: HttpMethod, path: string, meta: RouteMeta, handlers: RequestHandler[]): this {
    this.routes.push({ ...meta, method, path, handlers });
    return this;
  }
}

export const requiredScopes = (route: Pick<RouteMeta, 'scope'>): readonly Scope[] =>
  typeof route.scope === 'string' ? [route.scope] : (route.scope as readonly Scope[]);

export const isProjectRoute = (route: Pick<RouteDefinition, 'path'>) => route.path.includes(':project_id');
export const isOrganizationRoute = (route: Pick<RouteDefinition, 'path'>) => route.path.includes(':organization_id');

export class RouteDeclarationError extends Error {}

/** Refuses a route that declares no scope, so none can reach a handler unchecked. */
export function checkRouteDeclaration(route: RouteDefinition): void {
  const scopes = (route.scope as unknown) === undefined ? [] : requiredScopes(route);
  if (scopes.length === 0 || scopes.some((s) => typeof s !== 'string' || !/^[a-z_]+:(read|write)$/.test(s)))
    throw new RouteDeclarationError(`${route.method.toUpperCase()} ${route.path} declares no valid scope`);
  if (!route.summary) throw new RouteDeclarationError(`${route.method.toUpperCase()} ${route.path} has no summary`);
}

export interface MountOptions {
  db: Sql;
  /** Personal-key authentication; it passes a request an outer layer authenticated already. */
  authenticate: RequestHandler;
  /** Reads a project by id for `:project_id` routes (the process's project cache); default the metadata store. */
  findProject?: (id: number) => Promise<Project | null>;
  /** Runs after the scope and project checks, as DRF checks permissions before throttles. */
  throttle?: (kind: ThrottleClass) => RequestHandler;
}

/** An Express router for the table: each route's chain (routeChains), and 405 for a declared path's other methods. */
export function mountRoutes(table: RouteTable, options: MountOptions): Router {
  return mountRouteChains(routeChains(table, options), options.authenticate);
}

/** One declared route with everything that runs for it, in order: its checks, then its handlers. */
export interface RouteChain {
  route: RouteDefinition;
  handlers: readonly RequestHandler[];
}

/**
 * Per route, authentication, the scope check, the project (for `:project_id` paths; any other
 * route refuses keys restricted to projects unless it narrows to them) or organisation
 * (`:organization_id`), the throttle and the CSV answer of list routes, then its handlers, the
 * body validated before the last. Built once: the Express router and the routes answered before
 * Express (pre-routed.ts) run these same handler instances.
 */
export function routeChains(table: RouteTable, options: MountOptions): RouteChain[] {
  const project = projectAccess(options.db, options.findProject);
  return table.routes.map((route) => {
    checkRouteDeclaration(route);
    const chain: RequestHandler[] = [options.authenticate, requireScope(...requiredScopes(route))];
    if (isProjectRoute(route)) chain.push(project);
    else if (route.projectRestrictedKeys !== 'narrowed') chain.push(refuseProjectRestrictedKeys);
    if (isOrganizationRoute(route)) chain.push(organizationAccess);
    if (options.throttle) chain.push(options.throttle(route.throttle ?? 'general'));
    if (route.list) chain.push(csvListResponder);
    // The body is checked right before the last handler: after the route's own middleware (the
    // object it names, the caller's access to it), as DRF looks the object up before the serializer.
    const handlers = route.body ? [...route.handlers.slice(0, -1), requestBodyValidator(route.body), ...route.handlers.slice(-1)] : route.handlers;
    return { route, handlers: [...chain, ...handlers] };
  });
}

/** An Express router for chains made by routeChains (each route's path and method), and the 405s of their paths. */
export function mountRouteChains(chains: readonly RouteChain[], authenticate: RequestHandler): Router {
  const router = Router();
  for (const { route, handlers } of chains) router[route.method](route.path, ...handlers);
  // A declared path with an undeclared method: 405 naming the allowed ones, as DRF answers.
  const methodsByPath = new Map<string, Set<string>>();
  for (const { route } of chains) {
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, 'OPTIONS'].join(', ');
    router.all(path, authenticate, (req, _res, next) => {
      next(new ApiError(405, 'invalid_request', 'method_not_allowed', `Method "${req.method}" not allowed.`, null, { Allow: allow }));
    });
  }
  return router;
}
