import type { Request } from 'express';
import type { RetentionResult } from '@sightline/insights';

/** A legacy filter as query parameters: lists and objects as JSON, as the legacy GET form sends them. */
function filterQueryString(input: Record<string, unknown>, extra: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || value === null || key === 'refresh') continue;
    params.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

/**
 * The legacy retention answer: `{result, timezone, is_cached, last_refresh}`, each row with the
 * people_url of its start interval's actors (persons/retention/ with `selected_interval`, and
 * the row's `breakdown_value`).
 */
export function serializeLegacyRetention(req: Request, input: Record<string, unknown>, answer: RetentionResult): Record<string, unknown> {
  const base = `${req.protocol}://${req.get('host') ?? 'localhost'}/api/projects/${req.project!.id}/persons/retention/`;
  const rowsPerValue = new Map<string | undefined, number>();
  return {
    result: answer.result.map((row) => {
      const interval = rowsPerValue.get(row.breakdown_value) ?? 0;
      rowsPerValue.set(row.breakdown_value, interval + 1);
      const extra: Record<string, string> = { selected_interval: String(interval) };
      if (row.breakdown_value !== undefined) extra['breakdown_value'] = row.breakdown_value;
      return { ...row, people_url: `${base}?${filterQueryString(input, extra)}` };
    }),
    timezone: answer.timezone,
    is_cached: answer.is_cached,
    last_refresh: answer.last_refresh,
    timings: [],
  };
}
