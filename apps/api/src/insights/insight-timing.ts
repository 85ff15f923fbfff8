import { errors } from '@sightline/http';
import type { InsightTimingRow } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';

/** Who reports, and when. */
export interface TimingReporter {
  teamId: number;
  userId: number;
  now: number;
}

/**
 * The row a timing report is stored as. Every field is optional, as PostHog's timing action takes
 * whatever the client reports: texts are cut to 2,000 characters, counts to UInt32, and an absent
 * or null time is stored as NULL; only a time that is not a non-negative number is refused.
 */
export function parseInsightTiming(input: unknown, reporter: TimingReporter): InsightTimingRow {
  const body = input ?? {};
  if (!isJsonObject(body)) throw errors.validation('The report must be a JSON object.', null, 'parse_error');
  const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string).slice(0, 2_000) : '');
  const count = (key: string) => (Number.isFinite(Number(body[key])) && Number(body[key]) >= 0 ? Math.min(Math.floor(Number(body[key])), 4_294_967_295) : 0);
  const rawMs = body['time_to_see_data_ms'];
  const ms = rawMs === undefined || rawMs === null ? null : Number(rawMs);
  if (ms !== null && (!Number.isFinite(ms) || ms < 0))
    throw errors.validation('time_to_see_data_ms must be a number of milliseconds.', 'time_to_see_data_ms', 'invalid');
  return {
    team_id: reporter.teamId,
    user_id: reporter.userId,
    created_at: new Date(reporter.now).toISOString().replace('T', ' ').replace('Z', ''),
    type: text('type'),
    context: text('context'),
    status: text('status') || 'success',
    time_to_see_data_ms: ms,
    insights_fetched: count('insights_fetched'),
    insights_fetched_cached: count('insights_fetched_cached'),
    api_response_bytes: count('api_response_bytes'),
    query_id: text('query_id'),
    session_id: text('session_id'),
    current_url: text('current_url'),
    report: JSON.stringify(body).slice(0, 65_536),
  };
}
