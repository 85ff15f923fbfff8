import type { ClickHouseClient } from '@clickhouse/client';
import { EVENTS_TABLE, toClickHouseDateTime } from '@sightline/clickhouse';
import { formatDay, formatDayLabel, resolveDayRange } from '../common/date-range';
import { compilePropertyGroup, eventsTablePropertiesColumn, QueryParams } from '@sightline/properties';
import type { ParsedTrendFilter } from './trend-filter';

export interface TrendSeries {
  data: number[];
  labels: string[];
  days: string[];
  count: number;
  label: string;
  filter: Record<string, unknown>;
  action: Record<string, unknown>;
}

export interface TrendResult {
  result: TrendSeries[];
  next: null;
  timezone: string;
  is_cached: boolean;
  last_refresh: string;
}

function seriesSql(entity: ParsedTrendFilter['events'][number], filterSql: string): string {
  const aggregate = (entity.math ?? 'total') === 'dau' ? 'uniqExact(person_id)' : 'count()';
  const eventClause = entity.id === null ? '' : 'AND event = {event:String}';
  // FINAL: a redelivered event (same uuid) must never be counted twice.
  return `SELECT toString(toDate(timestamp)) AS day, ${aggregate} AS value
            FROM ${EVENTS_TABLE} FINAL
           WHERE team_id = {team:Int64} ${eventClause}
             AND timestamp >= {from:DateTime64(6, 'UTC')} AND timestamp <= {to:DateTime64(6, 'UTC')}
             ${filterSql}
           GROUP BY day`;
}

/** Runs a validated trend filter for one project: one zero-filled daily series per entity. */
export async function runTrendQuery(ch: ClickHouseClient, teamId: number, filter: ParsedTrendFilter, nowMs: number): Promise<TrendResult> {
  const range = resolveDayRange(filter.date_from, filter.date_to, nowMs);
  const days = range.days.map(formatDay);
  const labels = range.days.map(formatDayLabel);
  // Every series carries the query's filter, series list included, as the legacy trend answer
  // does: the answer grows with the square of the series count, which MAX_SERIES bounds.
  const responseFilter = {
    insight: 'TRENDS',
    events: filter.events,
    actions: filter.actions ?? [],
    properties: filter.properties,
    filter_test_accounts: filter.filter_test_accounts ?? false,
    date_from: filter.date_from ?? '-7d',
    date_to: filter.date_to ?? null,
    interval: 'day',
    display: filter.display ?? 'ActionsLineGraph',
    entity_type: 'events',
  };
  const result = await Promise.all(
    filter.events.map(async (entity, order) => {
      // Query-wide and series filters, ANDed, through the one property-filter compiler.
      const params = new QueryParams();
      const where = compilePropertyGroup(
        { type: 'AND', values: [...filter.properties, ...entity.properties] },
        { params, propertiesColumn: eventsTablePropertiesColumn, nowMs },
      );
      const rows = await (
        await ch.query({
          query: seriesSql(entity, `AND ${where}`),
          query_params: {
            team: teamId,
            event: entity.id ?? '',
            from: toClickHouseDateTime(range.fromMs),
            to: toClickHouseDateTime(range.toMs),
            ...params.values,
          },
          format: 'JSONEachRow',
        })
      ).json<{ day: string; value: string | number }>();
      const byDay = new Map(rows.map((r) => [r.day, Number(r.value)]));
      const data = days.map((d) => byDay.get(d) ?? 0);
      const name = entity.id ?? 'All events';
      return {
        data,
        labels,
        days,
        count: data.reduce((a, b) => a + b, 0),
        label: entity.custom_name ?? name,
        filter: responseFilter,
        action: {
          id: entity.id,
          type: 'events',
          order: entity.order ?? order,
          name,
          custom_name: entity.custom_name ?? null,
          math: entity.math ?? 'total',
          math_property: null,
          math_hogql: null,
          math_group_type_index: null,
          properties: {},
          days: range.days.map((d) => new Date(d).toISOString()),
        },
      };
    }),
  );
  return { result, next: null, timezone: 'UTC', is_cached: false, last_refresh: new Date(nowMs).toISOString() };
}
