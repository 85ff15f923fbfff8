import { EVENTS_TABLE, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';

/** PostHog's `LIMIT 10` (posthog/models/event/sql.py SELECT_PROP_VALUES_SQL_WITH_FILTER): a picker's page, searched server-side. */
export const EVENT_PROPERTY_VALUES_LIMIT = 10;
/** PostHog reads the last 7 days (`relative_date_parse("-7d")` in posthog/queries/property_values.py), so the work is bounded. */
const WINDOW_DAYS = 7;

/**
 * Values of one event property over the project's events of the last 7 days (from the start of
 * that day, UTC), most common first, with how many events carry each (FINAL: an event delivered
 * twice counts once): what a value picker offers.
 * `value` keeps the values containing it (any case), `eventNames` the events of those names.
 */
export async function eventPropertyValues(
  ch: ClickHouseClient,
  query: { teamId: number; key: string; value: string | null; eventNames: readonly string[]; nowMs: number },
): Promise<{ name: string; count: number }[]> {
  const rows = await queryClickhouse<{ name: string; count: string }>(ch, {
    kind: 'events.values',
    teamId: query.teamId,
    sql: `SELECT JSONExtractString(properties, {key:String}) AS name, count() AS count FROM ${EVENTS_TABLE} FINAL
          WHERE team_id = {team:Int64}
            AND timestamp >= toStartOfDay(toDateTime64({now:Float64}, 6, 'UTC') - INTERVAL {days:UInt32} DAY)
            AND timestamp <= toDateTime64({now:Float64}, 6, 'UTC') + INTERVAL 1 DAY
            AND JSONHas(properties, {key:String})
            AND (empty({events:Array(String)}) OR has({events:Array(String)}, event))
            AND (isNull({value:Nullable(String)}) OR positionCaseInsensitiveUTF8(name, assumeNotNull({value:Nullable(String)})) > 0)
          GROUP BY name ORDER BY count DESC, name LIMIT {limit:UInt32}`,
    params: {
      team: query.teamId,
      key: query.key,
      value: query.value,
      events: query.eventNames,
      now: query.nowMs / 1000,
      days: WINDOW_DAYS,
      limit: EVENT_PROPERTY_VALUES_LIMIT,
    },
  });
  return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
}
