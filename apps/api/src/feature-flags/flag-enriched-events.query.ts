import { EVENTS_TABLE, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';

/**
 * Whether the flag has enriched analytics: PostHog sets has_enriched_analytics when
 * `$feature_view` / `$feature_interaction` events name the flag; Sightline looks for them.
 */
export async function hasEnrichedEvents(ch: ClickHouseClient, teamId: number, flagKey: string): Promise<boolean> {
  const rows = await queryClickhouse(ch, {
    kind: 'feature_flags.enriched_events',
    teamId,
    sql: `SELECT 1 FROM ${EVENTS_TABLE}
           WHERE team_id = {team:Int64} AND event IN ('$feature_view', '$feature_interaction')
             AND JSONExtractString(properties, 'feature_flag') = {key:String}
           LIMIT 1`,
    params: { team: teamId, key: flagKey },
  });
  return rows.length > 0;
}
