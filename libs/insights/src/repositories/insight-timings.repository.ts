import type { ClickHouseClient } from '@sightline/clickhouse';

/** One row of insight_timings: how long an insight took to load, as the client reported it. */
export interface InsightTimingRow {
  team_id: number;
  user_id: number;
  /** ClickHouse DateTime64 text, UTC. */
  created_at: string;
  type: string;
  context: string;
  status: string;
  time_to_see_data_ms: number | null;
  insights_fetched: number;
  insights_fetched_cached: number;
  api_response_bytes: number;
  query_id: string;
  session_id: string;
  current_url: string;
  report: string;
}

export async function insertInsightTiming(ch: ClickHouseClient, row: InsightTimingRow): Promise<void> {
  await ch.insert({ table: 'insight_timings', format: 'JSONEachRow', values: [row] });
}
