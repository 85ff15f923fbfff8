import type { Request } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import {
  existingDashboardIds,
  findInsight,
  funnelsQueryToFilter,
  insertInsight,
  lastViewedInsights,
  listInsights,
  parseFunnelFilter,
  parseTrendFilter,
  recordInsightView,
  setInsightDashboards,
  setInsightRefreshed,
  trendsQueryToFilter,
  updateInsight,
  type InsightInput,
  type InsightRow,
  type TrendsService,
} from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import type { Metrics } from '@sightline/metrics';
import type { Sql } from '@sightline/postgres';
import { csvText } from '../http/csv-response';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { booleanField, charField, listField, nullable, objectBody } from '../http/body-fields';
import { loadById } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { serializeBasicInsights, serializeInsights } from './insight.serializer';
import { asValidationError, truthy } from '../http/insight-request';
import { trendResultCsv } from './trend.csv';

declare module 'express-serve-static-core' {
  interface Request {
    insight?: InsightRow;
  }
}

export interface SavedInsightsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
  metrics?: Metrics;
}

/** What parseInsightInput reads, in its order; it words a wrong filters, query, order or dashboard itself. */
const insightFields = {
  name: nullable(charField()),
  derived_name: nullable(charField()),
  description: nullable(charField()),
  filters: { description: 'The legacy filter object the insight runs (insight: TRENDS, FUNNELS, …)' },
  query: { description: 'A query node (InsightVizNode, TrendsQuery, FunnelsQuery, …), or its JSON text' },
  saved: booleanField,
  deleted: booleanField,
  favorited: booleanField,
  tags: listField(charField()),
  order: { type: ['integer', 'null'] },
  dashboards: listField(undefined, 'Ids of dashboards of the project to put the insight on'),
};

/** How many insights my_last_viewed lists (PostHog's). */
const LAST_VIEWED = 5;
const MAX_NAME = 400;

function parseInsightInput(body: Record<string, unknown>): InsightInput & { dashboards?: number[] } {
  const input: InsightInput & { dashboards?: number[] } = {};
  const text = (key: 'name' | 'derived_name') => (body[key] === null ? null : parseString(body[key], key, { allowBlank: true, maxLength: MAX_NAME }));
  if (body['name'] !== undefined) input.name = text('name');
  if (body['derived_name'] !== undefined) input.derived_name = text('derived_name');
  if (body['description'] !== undefined)
    input.description = body['description'] === null ? '' : parseString(body['description'], 'description', { allowBlank: true, maxLength: 65_535 });
  if (body['filters'] !== undefined) {
    if (!isJsonObject(body['filters'])) throw errors.validation('filters must be an object.', 'filters', 'invalid');
    input.filters = body['filters'];
  }
  if (body['query'] !== undefined) {
    let query: unknown = body['query'];
    if (typeof query === 'string') {
      try {
        query = JSON.parse(query) as unknown;
      } catch {
        throw errors.validation('query is not valid JSON.', 'query', 'parse_error');
      }
    }
    if (query !== null && !isJsonObject(query)) throw errors.validation('query must be a query node object.', 'query', 'invalid');
    input.query = query;
  }
  for (const key of ['saved', 'deleted', 'favorited'] as const) if (body[key] !== undefined) input[key] = parseBoolean(body[key], key);
  if (body['tags'] !== undefined) input.tags = [...new Set(parseList(body['tags'], 'tags').map((t, i) => parseString(t, `tags__${i}`, { maxLength: 255 })))];
  if (body['order'] !== undefined) {
    const order = body['order'];
    if (order !== null && !(Number.isInteger(order) && Math.abs(order as number) <= 2_147_483_647))
      throw errors.validation('A valid integer is required.', 'order', 'invalid');
    input.order = order as number | null;
  }
  if (body['dashboards'] !== undefined) {
    input.dashboards = parseList(body['dashboards'], 'dashboards').map((d, i) => {
      if (!Number.isInteger(d) || (d as number) < 1 || (d as number) > 2_147_483_647)
        throw errors.validation(`Invalid pk "${String(d).slice(0, 40)}" - object does not exist.`, `dashboards__${i}`, 'does_not_exist');
      return d as number;
    });
  }
  return input;
}

/** The legacy filter an insight runs: its `filters`, or its TrendsQuery / FunnelsQuery node. */
function runnable(row: Pick<InsightRow, 'filters' | 'query'>): { kind: 'trend' | 'funnel'; filter: Record<string, unknown> } | null {
  let query = row.query as Record<string, unknown> | null;
  if (isJsonObject(query) && query['kind'] === 'InsightVizNode') query = query['source'] as Record<string, unknown>;
  if (isJsonObject(query) && query['kind'] === 'TrendsQuery') return { kind: 'trend', filter: trendsQueryToFilter(query) };
  if (isJsonObject(query) && query['kind'] === 'FunnelsQuery') return { kind: 'funnel', filter: funnelsQueryToFilter(query) };
  const filters = row.filters ?? {};
  const hasSeries = (Array.isArray(filters['events']) && filters['events'].length > 0) || (Array.isArray(filters['actions']) && filters['actions'].length > 0);
  if (!hasSeries) return null;
  if (filters['insight'] === 'FUNNELS') return { kind: 'funnel', filter: filters };
  if (filters['insight'] === undefined || filters['insight'] === 'TRENDS') return { kind: 'trend', filter: filters };
  return null;
}

/**
 * An insight's filter is parsed as every read of it will parse it, so a filter no read could run
 * (a number past Int64 in a property filter, say) is refused when saved, not on each read.
 */
function checkRunnable(insight: Pick<InsightRow, 'filters' | 'query'>): void {
  const target = runnable(insight as InsightRow);
  if (!target) return;
  try {
    if (target.kind === 'trend') parseTrendFilter(target.filter);
    else parseFunnelFilter(target.filter);
  } catch (error) {
    throw asValidationError(error);
  }
}

/** Saved insights, my_last_viewed and timing under both prefixes. */
export function createSavedInsightsRoutes(deps: SavedInsightsDeps, service: TrendsService): RouteTable {
  const routes = new RouteTable();
  const { db } = deps;

  const loadInsight = loadById('insight_id', 'insight', (teamId, id) => findInsight(db, teamId, id));

  const checkDashboards = async (req: Request, ids: number[] | undefined) => {
    if (!ids) return;
    const known = await existingDashboardIds(db, req.project!.id, ids);
    const missing = ids.findIndex((id) => !known.has(id));
    if (missing >= 0) throw errors.validation(`Invalid pk "${ids[missing]}" - object does not exist.`, `dashboards__${missing}`, 'does_not_exist');
  };

  /**
   * A saved insight's query is checked when it is written, as reading it would check it: it must
   * parse, and the actions and cohorts it names must exist in the project (live). Otherwise it
   * would be saved (201) and then answer 400 on every read.
   */
  const checkQuery = async (req: Request, row: Pick<InsightRow, 'filters' | 'query'>) => {
    try {
      const target = runnable(row);
      if (target?.kind === 'trend') await service.checkReferences(req.project!, { kind: 'trend', filter: parseTrendFilter(target.filter) });
      if (target?.kind === 'funnel') await service.checkReferences(req.project!, { kind: 'funnel', filter: parseFunnelFilter(target.filter) });
    } catch (error) {
      throw asValidationError(error);
    }
  };

  /** The insight's answer, computed through the shared cache (`refresh` recomputes). */
  const resultOf = async (req: Request, row: InsightRow) => {
    const target = runnable(row);
    if (!target)
      return {
        result: null,
        is_cached: false,
        last_refresh: row.last_refresh ? new Date(row.last_refresh).toISOString() : null,
        timezone: req.project!.timezone,
      };
    const refresh = truthy(req.query['refresh']);
    try {
      const answer =
        target.kind === 'trend'
          ? await service.run(req.project!, parseTrendFilter(target.filter), deps.now(), { refresh })
          : await service.runFunnel(req.project!, parseFunnelFilter(target.filter), deps.now(), { refresh });
      if (!answer.is_cached) await setInsightRefreshed(db, row.id, new Date(answer.last_refresh));
      return { result: answer.result, is_cached: answer.is_cached, last_refresh: answer.last_refresh, timezone: answer.timezone };
    } catch (error) {
      throw asValidationError(error);
    }
  };

  routes.inProject((project) => {
    const base = '/insights';
    const read = { scope: 'insight:read' } as const;
    const write = { scope: 'insight:write' } as const;

    project.get(`${base}/my_last_viewed`, { ...read, summary: 'The insights the caller viewed last', throttle: 'clickhouse' }, async (req, res) => {
      res.json(await serializeBasicInsights(db, await lastViewedInsights(db, req.project!.id, req.principal!.userId, LAST_VIEWED)));
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
        const body = req.body ?? {};
        if (!isJsonObject(body)) throw errors.validation('The report must be a JSON object.', null, 'parse_error');
        const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string).slice(0, 2_000) : '');
        const count = (key: string) =>
          Number.isFinite(Number(body[key])) && Number(body[key]) >= 0 ? Math.min(Math.floor(Number(body[key])), 4_294_967_295) : 0;
        // Optional, as PostHog's timing action takes whatever the client reports: absent or null is stored as NULL.
        const rawMs = body['time_to_see_data_ms'];
        const ms = rawMs === undefined || rawMs === null ? null : Number(rawMs);
        if (ms !== null && (!Number.isFinite(ms) || ms < 0))
          throw errors.validation('time_to_see_data_ms must be a number of milliseconds.', 'time_to_see_data_ms', 'invalid');
        const status = text('status') || 'success';
        if (ms !== null)
          deps.metrics?.insightTimeToSeeData.observe({ type: text('type') || 'unknown', context: text('context') || 'unknown', status }, ms / 1000);
        await deps.ch.insert({
          table: 'insight_timings',
          format: 'JSONEachRow',
          values: [
            {
              team_id: req.project!.id,
              user_id: req.principal!.userId,
              created_at: new Date(deps.now()).toISOString().replace('T', ' ').replace('Z', ''),
              type: text('type'),
              context: text('context'),
              status,
              time_to_see_data_ms: ms,
              insights_fetched: count('insights_fetched'),
              insights_fetched_cached: count('insights_fetched_cached'),
              api_response_bytes: count('api_response_bytes'),
              query_id: text('query_id'),
              session_id: text('session_id'),
              current_url: text('current_url'),
              report: JSON.stringify(body).slice(0, 65_536),
            },
          ],
        });
        res.status(200).end();
      },
    );

    project.get(base, { ...read, summary: 'List saved insights', list: true, throttle: 'clickhouse' }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const flag = (key: string) => (req.query[key] === undefined ? undefined : truthy(req.query[key]));
      const text = (key: string) => (typeof req.query[key] === 'string' && req.query[key] !== '' ? (req.query[key] as string) : undefined);
      let tags: string[] | undefined;
      if (text('tags')) {
        try {
          const parsed = JSON.parse(text('tags')!) as unknown;
          tags = Array.isArray(parsed) ? parsed.map(String) : [String(parsed)];
        } catch {
          tags = [text('tags')!];
        }
      }
      const createdBy = text('created_by') && /^\d{1,9}$/.test(text('created_by')!) ? Number(text('created_by')) : undefined;
      const { rows, count } = await listInsights(db, req.project!.id, {
        limit,
        offset,
        saved: flag('saved'),
        favorited: flag('favorited'),
        createdBy,
        search: text('search'),
        tags,
        shortId: text('short_id'),
      });
      const results = await serializeInsights(db, rows);
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
      res.json(limitOffsetPage(req, { count, limit, offset, results }));
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
        const input = parseInsightInput(parseBody(req.body ?? {}));
        checkRunnable({ filters: input.filters ?? {}, query: input.query ?? null });
        await checkDashboards(req, input.dashboards);
        await checkQuery(req, { filters: input.filters ?? {}, query: input.query ?? null });
        const row = await insertInsight(db, req.project!.id, input, req.principal!.userId);
        if (input.dashboards) await setInsightDashboards(db, req.project!.id, row.id, input.dashboards);
        res.status(201).json((await serializeInsights(db, [row]))[0]);
      },
    );

    project.get(
      `${base}/:insight_id`,
      { ...read, summary: 'Retrieve a saved insight (refresh computes it)', throttle: 'clickhouse' },
      loadInsight,
      async (req, res) => {
        const row = req.insight!;
        await recordInsightView(db, row.team_id, req.principal!.userId, row.id, new Date(deps.now()));
        const answer = await resultOf(req, row);
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
        res.json((await serializeInsights(db, [row], () => answer))[0]);
      },
    );

    project.patch(
      `${base}/:insight_id`,
      { ...write, summary: 'Update a saved insight', throttle: 'clickhouse', body: objectBody(insightFields), example: () => ({ description: 'changed' }) },
      loadInsight,
      async (req, res) => {
        const input = parseInsightInput(parseBody(req.body ?? {}));
        if (input.filters !== undefined || input.query !== undefined)
          checkRunnable({ filters: input.filters ?? req.insight!.filters, query: input.query === undefined ? req.insight!.query : input.query });
        await checkDashboards(req, input.dashboards);
        // Only a new query is checked: an update of other fields never fails on a stored one.
        if (input.filters !== undefined || input.query !== undefined)
          await checkQuery(req, { filters: input.filters ?? req.insight!.filters, query: input.query === undefined ? req.insight!.query : input.query });
        const row = (await updateInsight(db, req.project!.id, req.insight!.id, input, req.principal!.userId))!;
        if (input.dashboards) await setInsightDashboards(db, req.project!.id, row.id, input.dashboards);
        res.json((await serializeInsights(db, [row]))[0]);
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
