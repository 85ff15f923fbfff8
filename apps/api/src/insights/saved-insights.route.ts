import { errors } from '@sightline/http';
import type { InsightRow, QueryService } from '@sightline/insights';
import { csvText } from '../http/csv-response';
import { parseBody } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { objectBody } from '../http/body-fields';
import { loadById } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { truthy } from '../http/insight-request';
import { findInsight } from '@sightline/insights';
import { insightFields, parseInsightInput, parseInsightListQuery } from './insight-input';
import { serializeBasicInsights, serializeInsights } from './insight.serializer';
import { createSavedInsightsService, type SavedInsightsDeps } from './saved-insights.service';
import { trendResultCsv } from './trend.csv';

export type { SavedInsightsDeps } from './saved-insights.service';

declare module 'express-serve-static-core' {
  interface Request {
    insight?: InsightRow;
  }
}

/** Saved insights, my_last_viewed and timing under both prefixes. */
export function createSavedInsightsRoutes(deps: SavedInsightsDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const insights = createSavedInsightsService(deps, queries);
  const loadInsight = loadById('insight_id', 'insight', (teamId, id) => findInsight(deps.db, teamId, id));
  const serialized = async (rows: InsightRow[]) => serializeInsights(rows, await insights.relationsOf(rows));

  routes.inProject((project) => {
    const base = '/insights';
    const read = { scope: 'insight:read' } as const;
    const write = { scope: 'insight:write' } as const;

    project.get(`${base}/my_last_viewed`, { ...read, summary: 'The insights the caller viewed last', throttle: 'clickhouse' }, async (req, res) => {
      const rows = await insights.lastViewed(req.project!, req.principal!.userId);
      res.json(serializeBasicInsights(rows, await insights.relationsOf(rows)));
    });

    project.post(
      `${base}/timing`,
      {
        ...read,
        summary: 'Record how long an insight took to load (Insight fields and the timing report; every field optional)',
        throttle: 'clickhouse',
        body: {
          description:
            'A JSON object: type, context, status, time_to_see_data_ms, insights_fetched, insights_fetched_cached, … (what is absent is stored empty)',
        },
        example: () => ({ name: 'Daily signups', type: 'insight_load', context: 'insight', time_to_see_data_ms: 420, insights_fetched: 1 }),
      },
      async (req, res) => {
        await insights.recordTiming(req.project!, req.principal!.userId, req.body);
        res.status(200).end();
      },
    );

    project.get(base, { ...read, summary: 'List saved insights', list: true, throttle: 'clickhouse' }, async (req, res) => {
      const filter = parseInsightListQuery(req.query);
      const { rows, count } = await insights.list(req.project!, filter);
      const results = await serialized(rows);
      if (req.query['format'] === 'csv') {
        res
          .type('text/csv')
          .send(
            csvText([
              ['id', 'short_id', 'name', 'derived_name', 'description', 'saved', 'favorited'],
              ...results.map((r) => [r.id, r.short_id, r.name, r.derived_name, r.description, r.saved, r.favorited]),
            ]),
          );
        return;
      }
      res.json(limitOffsetPage(req, { count, limit: filter.limit, offset: filter.offset, results }));
    });

    project.post(
      base,
      {
        ...write,
        summary: 'Save an insight',
        throttle: 'clickhouse',
        body: objectBody(insightFields),
        example: () => ({ name: 'Daily signups', filters: { insight: 'TRENDS', events: [{ id: 'signup' }] } }),
      },
      async (req, res) => {
        const row = await insights.create(req.project!, req.principal!.userId, parseInsightInput(parseBody(req.body ?? {})));
        res.status(201).json((await serialized([row]))[0]);
      },
    );

    project.get(
      `${base}/:insight_id`,
      { ...read, summary: 'Retrieve a saved insight (refresh computes it)', throttle: 'clickhouse' },
      loadInsight,
      async (req, res) => {
        const row = req.insight!;
        // A dashboard drawing its tile (PostHog's `from_dashboard`) is not a view of the insight.
        const refresh = truthy(req.query['refresh']);
        const answer =
          req.query['from_dashboard'] === undefined
            ? await insights.open(req.project!, req.principal!.userId, row, refresh)
            : await insights.result(req.project!, row, refresh);
        if (req.query['format'] === 'csv') {
          if (!Array.isArray(answer.result)) throw errors.validation('This insight has no tabular result.', null, 'not_supported');
          res.type('text/csv').send(
            trendResultCsv({
              result: answer.result as never,
              next: null,
              timezone: answer.timezone,
              is_cached: answer.is_cached,
              last_refresh: answer.last_refresh ?? '',
            }),
          );
          return;
        }
        res.json(serializeInsights([row], await insights.relationsOf([row]), () => answer)[0]);
      },
    );

    project.patch(
      `${base}/:insight_id`,
      { ...write, summary: 'Update a saved insight', throttle: 'clickhouse', body: objectBody(insightFields), example: () => ({ description: 'changed' }) },
      loadInsight,
      async (req, res) => {
        const row = await insights.update(req.project!, req.principal!.userId, req.insight!, parseInsightInput(parseBody(req.body ?? {})));
        res.json((await serialized([row]))[0]);
      },
    );

    // As for flags: insights are soft-deleted with PATCH {"deleted": true}.
    project.delete(
      `${base}/:insight_id`,
      { ...write, summary: 'Refused: PATCH {"deleted": true} removes an insight', throttle: 'clickhouse' },
      loadInsight,
      () => {
        throw errors.methodNotAllowed('DELETE');
      },
    );
  });
  return routes;
}
