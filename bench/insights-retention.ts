/**
 * Retention in `npm run bench:insights`: daily recurring retention (signup, back with a
 * purchase) over January 2024 and weekly first-time retention, against the shortest hand-written
 * ClickHouse query of the same rule (posthog/hogql_queries/insights/retention_query_runner.py):
 * per person the days (weeks) with a target event and those with a returning one, then per start
 * interval and offset the persons back.
 */
import { PDI, PERSON } from './analytics-data';
import type { InsightBenchKind } from './insights-kind';

const DAYS = 30;
/** 2024-01-02 as ClickHouse's day number. */
const FIRST_DAY = `toRelativeDayNum(toDate('2024-01-02'))`;
const RANGE = `e.timestamp >= toDateTime64('2024-01-02 00:00:00', 6, 'UTC') AND e.timestamp < toDateTime64('2024-02-01 00:00:00', 6, 'UTC')`;
const DAILY = {
  kind: 'RetentionQuery',
  dateRange: { date_from: '2024-01-02', date_to: '2024-01-31' },
  retentionFilter: {
    period: 'Day',
    totalIntervals: DAYS,
    targetEntity: { id: 'signup', type: 'events' },
    returningEntity: { id: 'purchase', type: 'events' },
  },
};
/** Weeks from Sunday 2023-12-31 to the week of 2024-01-31, first-time pageview cohorts. */
const WEEKS = 5;
const WEEKLY = {
  kind: 'RetentionQuery',
  dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' },
  retentionFilter: { period: 'Week', totalIntervals: WEEKS, retentionType: 'retention_first_time', targetEntity: { id: '$pageview', type: 'events' } },
};

/** Our answer's counts, row after row. */
const cells = (r: { results: { values: { count: number }[] }[] }) => r.results.flatMap((row) => row.values.map((v) => v.count));

/** Rows of (s, o, n) as the same matrix, zeros included. */
const matrix = (rows: Record<string, unknown>[], starts: number, width: number) => {
  const out = Array<number>(starts * width).fill(0);
  for (const r of rows) out[Number(r['s']) * width + Number(r['o'])] = Number(r['n']);
  return out;
};

/** Per (start, offset): the persons whose returns (`rs`) put them back `o` intervals after a start in `ss`. */
const cellsSql = (perPerson: string, width: number) => `SELECT s, o, count() AS n FROM (
    SELECT s, arrayJoin(arrayConcat([0], arrayFilter(o -> o > 0 AND o < ${width}, arrayMap(r -> r - s, rs)))) AS o
    FROM (${perPerson}) ARRAY JOIN ss AS s)
  GROUP BY s, o`;

export const RETENTION_KINDS: InsightBenchKind[] = [
  {
    name: 'retention, daily',
    ours: async (b) => cells(await b.post('/api/projects/1/query/', { query: DAILY })),
    baseline: cellsSql(
      `SELECT ${PERSON} AS p, groupUniqArrayIf(toRelativeDayNum(e.timestamp) - ${FIRST_DAY}, e.event = 'signup') AS ss,
         groupUniqArrayIf(toRelativeDayNum(e.timestamp) - ${FIRST_DAY}, e.event = 'purchase') AS rs
       FROM events AS e ${PDI} WHERE e.team_id = 1 AND e.event IN ('signup', 'purchase') AND ${RANGE} GROUP BY p`,
      DAYS,
    ),
    numbers: (rows) => matrix(rows, DAYS, DAYS),
  },
  {
    name: 'retention, weekly first time',
    ours: async (b) => cells(await b.post('/api/projects/1/query/', { query: WEEKLY })),
    // A person's first pageview ever (before the range too) starts its cohort, when in the range.
    baseline: cellsSql(
      `SELECT p, if(first >= toDateTime64('2023-12-31 00:00:00', 6, 'UTC'), [intDiv(toRelativeDayNum(toStartOfWeek(first)) - toRelativeDayNum(toDate('2023-12-31')), 7)], []) AS ss, rs
       FROM (SELECT ${PERSON} AS p, min(e.timestamp) AS first,
               groupUniqArrayIf(intDiv(toRelativeDayNum(toStartOfWeek(e.timestamp)) - toRelativeDayNum(toDate('2023-12-31')), 7), e.timestamp >= toDateTime64('2023-12-31 00:00:00', 6, 'UTC')) AS rs
             FROM events AS e ${PDI} WHERE e.team_id = 1 AND e.event = '$pageview' AND e.timestamp < toDateTime64('2024-02-04 00:00:00', 6, 'UTC') GROUP BY p)`,
      WEEKS,
    ),
    numbers: (rows) => matrix(rows, WEEKS, WEEKS),
  },
];
