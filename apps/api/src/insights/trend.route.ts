import { Router, type Request } from 'express';
import { requireScope } from '@sightline/auth';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import { DateRangeError, parseTrendFilter, runTrendQuery, trendFilterFromQuery, TrendFilterError } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { projectAccess } from '../http/project-access';

export interface InsightsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
}

/** Trends under both prefixes: environments (current) and projects (legacy). */
export function createTrendRouter(deps: InsightsDeps): Router {
  const router = Router();
  const trend = async (req: Request, input: unknown) => {
    try {
      return await runTrendQuery(deps.ch, req.project!.id, parseTrendFilter(input), deps.now());
    } catch (error) {
      if (error instanceof TrendFilterError) throw errors.validation(error.message, error.attr, error.code);
      if (error instanceof DateRangeError) throw errors.validation(error.message, error.attr, 'invalid_date');
      throw error;
    }
  };
  for (const prefix of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const path = `${prefix}/insights/trend`;
    router.post(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      res.json(await trend(req, req.body ?? {}));
    });
    router.get(path, requireScope('insight:read'), projectAccess(deps.db), async (req, res) => {
      let input;
      try {
        input = trendFilterFromQuery(req.query as Record<string, unknown>);
        // The JSON inside query parameters is parsed only here, after the input guard saw plain strings.
        const problem = findInputProblem(input);
        if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
      } catch (error) {
        if (error instanceof TrendFilterError) throw errors.validation(error.message, error.attr, error.code);
        throw error;
      }
      res.json(await trend(req, input));
    });
  }
  return router;
}
