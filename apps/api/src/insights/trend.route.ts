import { Router, type Request, type Response } from 'express';
import { requireScope } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import {
  createTrendsService,
  DateRangeError,
  FormulaError,
  parseTrendFilter,
  trendFilterFromQuery,
  TrendFilterError,
  QueryInputError,
  type TrendResult,
  SelectorError,
  UnknownCohortError,
} from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { PropertyCompileError } from '@sightline/properties';
import { projectAccess } from '../http/project-access';
import { trendResultCsv } from './trend.csv';

export interface InsightsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
  /** How long a trend answer is served from the cache (0: never). */
  insightCacheTtlMs?: number;
}

/** Every way a trend request can be wrong, as the DRF-shaped 400 naming the field. */
function asValidationError(error: unknown): unknown {
  if (error instanceof TrendFilterError || error instanceof QueryInputError) return errors.validation(error.message, error.attr, error.code);
  if (error instanceof DateRangeError) return errors.validation(error.message, error.attr, 'invalid_date');
  if (error instanceof FormulaError) return errors.validation(error.message, 'formula', 'invalid_formula');
  if (error instanceof SelectorError) return errors.validation(error.message, 'properties', 'invalid_value');
  if (error instanceof UnknownCohortError) return errors.validation(error.message, 'properties', 'cohort_does_not_exist');
  if (error instanceof PropertyCompileError) return errors.validation(error.message, 'properties', 'not_supported');
  return error;
}

const truthy = (value: unknown) => value === true || value === 'true' || value === '1';

/** Trends under both prefixes: environments (current) and projects (legacy). */
export function createTrendRouter(deps: InsightsDeps): Router {
  const router = Router();
  const trends = createTrendsService({ db: deps.db, ch: deps.ch, cacheTtlMs: deps.insightCacheTtlMs ?? 60_000 });
  const trend = async (req: Request, input: Record<string, unknown>): Promise<TrendResult> => {
    try {
      // GET or POST with no series answers an empty result, as PostHog does.
      const filter = parseTrendFilter(input);
      if (filter.series.length === 0) {
        return { result: [], next: null, timezone: req.project!.timezone, is_cached: false, last_refresh: new Date(deps.now()).toISOString() };
      }
      return await trends.run(req.project!, filter, deps.now(), { refresh: truthy(input['refresh']) || truthy(req.query['refresh']) });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  const send = (req: Request, res: Response, result: TrendResult) => {
    if (req.query['format'] === 'csv') {
      res.type('text/csv').send(trendResultCsv(result));
      return;
    }
    res.json(result);
  };
  for (const prefix of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const path = `${prefix}/insights/trend`;
    router.post(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
      send(req, res, await trend(req, body));
    });
    router.get(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      let input;
      try {
        input = trendFilterFromQuery(req.query as Record<string, unknown>);
        // The JSON inside query parameters is parsed only here, after the input guard saw plain strings.
        const problem = findInputProblem(input);
        if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
      } catch (error) {
        throw asValidationError(error);
      }
      send(req, res, await trend(req, input));
    });
  }
  return router;
}
