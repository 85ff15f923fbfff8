import type { ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, formatWithClickHouse, type TestStores } from '@sightline/testkit';
import { resolveQueryDateRange, type Interval } from '../common/date-range';
import { parseTrendFilter } from './trend-filter';
import { SeriesSqlBuilder } from './trend-series.sql';
import { MATHS } from '../common/series';
import { SQL_TEST_PORTS } from '../testing/sql-test-ports';

/**
 * Every math with every breakdown shape, display kind and interval, with action series and
 * cohort, session and element filters: ClickHouse must accept each generated query (EXPLAIN
 * plans it against the real schema without running it).
 */
const ports = SQL_TEST_PORTS;

const MATH_FIELDS: Record<string, Record<string, unknown>> = {
  unique_group: { math_group_type_index: 1 },
  hogql: { math_hogql: 'count()' },
};

const BREAKDOWNS: [string, Record<string, unknown>][] = [
  ['none', {}],
  ['event', { breakdown: '$browser' }],
  ['person, normalised', { breakdown: '$current_url', breakdown_type: 'person', breakdown_normalize_url: true }],
  [
    'three',
    {
      breakdowns: [
        { property: 'a', type: 'event' },
        { property: '$session_duration', type: 'session' },
        { property: 'name', type: 'group', group_type_index: 2 },
      ],
    },
  ],
  ['hogql', { breakdown: 'event', breakdown_type: 'hogql' }],
];

/** The statement of one series: an action with `math`, the filters above, a breakdown shape, a display and an interval. */
function queryOf(math: string, breakdown: Record<string, unknown>, display: 'ActionsLineGraph' | 'BoldNumber', interval: Interval) {
  const filter = parseTrendFilter({
    actions: [{ id: 1, math, math_property: 'price', ...MATH_FIELDS[math] }],
    properties: [
      { key: 'id', value: 2, type: 'cohort' },
      { key: '$session_duration', value: 10, operator: 'gt', type: 'session' },
      { key: 'text', value: 'Buy', type: 'element' },
    ],
    display,
    interval,
    ...breakdown,
  });
  const range = resolveQueryDateRange({ interval, timezone: 'Europe/Berlin', weekStartDay: 1, nowMs: ports.nowMs });
  const input = {
    series: filter.series[0]!,
    properties: filter.properties,
    range,
    breakdowns: filter.breakdowns,
    cohortId: 1,
    breakdownLimit: 25,
    aggregationGroupTypeIndex: math === 'dau' ? 0 : null,
    totalValue: display === 'BoldNumber',
    histogramBins: filter.breakdowns.map(() => ({ lower: [0, 10], upper: [10, 20.01] })),
  };
  return new SeriesSqlBuilder(input, ports).build();
}

describe('generated trend SQL is valid ClickHouse for every combination', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  beforeAll(async () => {
    stores = await createTestStores('trend-sql');
    ch = stores.ch;
  });
  afterAll(() => stores.close());

  const cases = [...MATHS].flatMap((math) => BREAKDOWNS.map(([name, breakdown]) => [math, name, breakdown] as const));
  it.each(cases)('%s with breakdown %s', async (math, _name, breakdown) => {
    for (const [display, interval] of [
      ['ActionsLineGraph', 'day'],
      ['ActionsLineGraph', 'hour'],
      ['ActionsLineGraph', 'week'],
      ['BoldNumber', 'day'],
    ] as const) {
      const query = queryOf(math, breakdown, display, interval);
      await expect(ch.query({ query: `EXPLAIN ${query.sql}`, query_params: query.params, format: 'JSONEachRow' }).then((r) => r.json())).resolves.toBeDefined();
    }
  });
});

/** A few shapes pinned as ClickHouse formats them (formatQuery), with their parameters: a change to the SQL shows in review. */
describe('generated trend SQL keeps its shape', () => {
  it.each([
    ['total, by day', 'total', BREAKDOWNS[0]![1], 'ActionsLineGraph', 'day'],
    ['dau, event breakdown, by week', 'dau', BREAKDOWNS[1]![1], 'ActionsLineGraph', 'week'],
    ['sum, one number', 'sum', BREAKDOWNS[0]![1], 'BoldNumber', 'day'],
  ] as const)('%s', async (_name, math, breakdown, display, interval) => {
    const { sql, params } = queryOf(math, breakdown, display, interval);
    expect({ sql: await formatWithClickHouse(sql), params }).toMatchSnapshot();
  });
});
