/**
 * Paths in `npm run bench:insights`: the legacy insights/path/ answer for page views and custom
 * events over January 2–31 2024 against the shortest hand-written ClickHouse query of the same
 * rules (posthog/hogql_queries/insights/paths_query_runner.py): per person the sorted items,
 * split at 30-minute gaps, repeats dropped, the first steps paired into edges.
 */
import { FROM, PDI, PERSON, TO } from './analytics-data';
import type { InsightBenchKind } from './insights-kind';

const STEPS = 5;
const PATHS = { insight: 'PATHS', include_event_types: ['$pageview', 'custom_event'], date_from: '2024-01-02', date_to: '2024-01-31', step_limit: STEPS };

/** The hand-written query: per person the sorted items, split at gaps, repeats dropped, the first steps paired. */
const BASELINE = `SELECT concat(toString(i - 1), '_', path[i - 1]) AS source, concat(toString(i), '_', path[i]) AS target,
    count() AS value, avg(times[i] - times[i - 1]) AS seconds
  FROM (
    SELECT arraySlice(arrayFilter((x, next) -> x.2 != next, s, arrayPushBack(arrayMap(x -> x.2, arrayPopFront(s)), '')), 1, ${STEPS}) AS kept,
      arrayMap(x -> x.2, kept) AS path, arrayMap(x -> x.1, kept) AS times
    FROM (
      SELECT arraySort(groupArray((toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1e6,
          if(e.event = '$pageview', replaceRegexpAll(JSONExtractString(e.properties, '$current_url'), '(.)/$', '\\\\1'), e.event)))) AS evs
      FROM events AS e ${PDI}
      WHERE e.team_id = 1 AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} AND (e.event = '$pageview' OR NOT startsWith(e.event, '$'))
      GROUP BY ${PERSON}
    )
    ARRAY JOIN arraySplit((x, gap) -> gap >= 1800, evs, arrayDifference(arrayMap(x -> x.1, evs))) AS s
  )
  ARRAY JOIN arrayEnumerate(path) AS i
  WHERE i > 1
  GROUP BY source, target
  ORDER BY value DESC, source, target
  LIMIT 50`;

export const PATHS_KINDS: InsightBenchKind[] = [
  {
    name: 'paths',
    ours: async (b) =>
      (
        await b.post<{ result: { source: string; target: string; value: number; average_conversion_time: number }[] }>('/api/projects/1/insights/path/', PATHS)
      ).result.flatMap((e) => [e.source, e.target, e.value, Math.round(e.average_conversion_time)]),
    baseline: BASELINE,
    numbers: (rows) => rows.flatMap((r) => [String(r['source']), String(r['target']), Number(r['value']), Math.round(Number(r['seconds']) * 1000)]),
  },
];
