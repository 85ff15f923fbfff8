/**
 * Stickiness and lifecycle in `npm run bench:insights`: StickinessQuery and LifecycleQuery of
 * $pageview by day over January 2–31 2024 against the shortest hand-written ClickHouse queries of
 * the same rules (posthog/hogql_queries/insights/stickiness_query_runner.py,
 * lifecycle_query_runner.py):
 *
 * - stickiness: each person's distinct days with a $pageview, persons counted by that number.
 * - lifecycle: each person's sorted days with a $pageview from the day before the range to the day
 *   after, each day new (the person's creation day and first), returning (the day before active
 *   too) or resurrecting, the day after each active day without activity dormant; counted per day
 *   and status inside the range.
 */
import { FROM, PDI, PERSON, TO } from './analytics-data';
import type { InsightBenchKind } from './insights-kind';

const RANGE = { date_from: '2024-01-02', date_to: '2024-01-31' };
const SERIES = [{ kind: 'EventsNode', event: '$pageview' }];
const DAYS = 30;
const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'];

export const STICKINESS_LIFECYCLE_KINDS: InsightBenchKind[] = [
  {
    name: 'stickiness',
    ours: async (b) =>
      (
        await b.post<{ results: { data: number[] }[] }>('/api/environments/1/query/', {
          query: { kind: 'StickinessQuery', series: SERIES, dateRange: RANGE, interval: 'day' },
        })
      ).results[0]!.data,
    baseline: `SELECT n, count() AS persons FROM (
        SELECT ${PERSON} AS p, uniqExact(toDate(e.timestamp)) AS n FROM events AS e ${PDI}
        WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= ${FROM} AND e.timestamp <= ${TO} GROUP BY p)
      GROUP BY n`,
    numbers: (rows) => {
      const out = Array<number>(DAYS).fill(0);
      for (const r of rows) out[Number(r['n']) - 1] = Number(r['persons']);
      return out;
    },
  },
  {
    name: 'lifecycle',
    // Each status's persons per day, in the answer's order (new, returning, resurrecting, dormant), dormant as a count.
    ours: async (b) =>
      (
        await b.post<{ results: { data: number[] }[] }>('/api/environments/1/query/', {
          query: { kind: 'LifecycleQuery', series: SERIES, dateRange: RANGE, interval: 'day' },
        })
      ).results.flatMap((s) => s.data.map(Math.abs)),
    baseline: `SELECT s.2 AS status, toRelativeDayNum(s.1) - toRelativeDayNum(toDate('2024-01-02')) AS day, count() AS persons FROM (
        SELECT arrayConcat(
                 arrayMap((d, i) -> (d, if(i = 1, if(d = c.created, 'new', 'resurrecting'), if(days[i - 1] = d - 1, 'returning', 'resurrecting'))), days, arrayEnumerate(days)),
                 arrayMap(d -> (d + 1, 'dormant'), arrayFilter((d, i) -> days[i + 1] != d + 1, days, arrayEnumerate(days)))) AS statuses
        FROM (SELECT ${PERSON} AS p, arraySort(groupUniqArray(toDate(e.timestamp))) AS days FROM events AS e ${PDI}
              WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp >= toDateTime64('2024-01-01 00:00:00', 6, 'UTC')
                AND e.timestamp < toDateTime64('2024-02-01 00:00:00', 6, 'UTC') GROUP BY p) AS a
        LEFT JOIN (SELECT id, toDate(argMax(created_at, version)) AS created FROM person WHERE team_id = 1 GROUP BY id) AS c ON c.id = a.p)
      ARRAY JOIN statuses AS s
      WHERE s.1 >= toDate('2024-01-02') AND s.1 <= toDate('2024-01-31')
      GROUP BY status, day`,
    numbers: (rows) => {
      const out = Array<number>(STATUSES.length * DAYS).fill(0);
      for (const r of rows) out[STATUSES.indexOf(String(r['status'])) * DAYS + Number(r['day'])] = Number(r['persons']);
      return out;
    },
  },
];
