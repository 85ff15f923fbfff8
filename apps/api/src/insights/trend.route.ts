import type { Request, Response } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { sendJson } from '@sightline/http';
import { legacyTrendKind, type QueryService, type LifecycleResult, type StickinessResult, type TrendResult } from '@sightline/insights';
import type { Metrics } from '@sightline/metrics';
import type { Sql } from '@sightline/postgres';
import { RouteTable } from '../http/route-registry';
import { trendFilterBody } from '../http/legacy-filter-body';
import { asValidationError, insightBody, insightQueryInput, truthy } from '../http/insight-request';
import { trendResultCsv } from './trend.csv';

export interface InsightsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
  /** For the time-to-see-data histogram of POST /insights/timing. */
  metrics?: Metrics;
}

/** Trends under both prefixes: environments (current) and projects (legacy). */
export function createTrendRoutes(deps: InsightsDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const trend = async (req: Request, input: Record<string, unknown>): Promise<TrendResult | StickinessResult | LifecycleResult> => {
    try {
      // `shown_as` (or `insight`) picks the kind: a trend, its stickiness or its lifecycle.
      return await queries.runLegacy(legacyTrendKind(input), req.project!, input, deps.now(), {
        refresh: truthy(input['refresh']) || truthy(req.query['refresh']),
      });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  const send = async (req: Request, res: Response, result: TrendResult | StickinessResult | LifecycleResult) => {
    if (req.query['format'] === 'csv') {
      res.type('text/csv').send(trendResultCsv(result));
      return;
    }
    await sendJson(res, result);
  };
  routes.inProject((project) => {
    const path = '/insights/trend';
    project.post(
      path,
      {
        scope: 'insight:read',
        summary: 'Trends (body)',
        body: trendFilterBody,
        throttle: 'clickhouse',
        example: () => ({ events: [{ id: 'signup', math: 'dau' }], date_from: '-7d', interval: 'day' }),
      },
      async (req, res) => {
        await send(req, res, await trend(req, insightBody(req)));
      },
    );
    project.get(path, { scope: 'insight:read', summary: 'Trends (query parameters; format=csv)', throttle: 'clickhouse' }, async (req, res) => {
      await send(req, res, await trend(req, insightQueryInput(req)));
    });
  });
  return routes;
}
