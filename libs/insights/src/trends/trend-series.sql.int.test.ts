import type { ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { compileActionMatch } from '../actions/action-match.sql';
import { cohortMembershipSql, type CohortDefinition } from '../cohorts/cohort-membership.sql';
import { resolveQueryDateRange, type Interval } from '../common/date-range';
import { parseTrendFilter } from './trend-filter';
import { SeriesSqlBuilder } from './trend-series.sql';
import { MATHS } from '../common/series';
import { type QuerySqlPorts } from '../common/query-ports';

/**
 * Every math with every breakdown shape, display kind and interval, with action series and
 * cohort, session and element filters: ClickHouse must accept each generated query (EXPLAIN
 * plans it against the real schema without running it).
 */
const COHORTS = new Map<number, CohortDefinition>([
  [1, { id: 1, name: 'static', isStatic: true, properties: null }],
  [
    2,
    {
      id: 2,
      name: 'pro',
      isStatic: false,
      properties: {
        type: 'OR',
        values: [
          { key: 'plan', value: 'pro', type: 'person' },
          { key: 'id', value: 1, type: 'cohort' },
        ],
      },
    },
  ],
]);
const ports: QuerySqlPorts = {
  teamId: 1,
  nowMs: Date.parse('2024-01-10T15:00:00Z'),
  actionMatch: (_id, ctx) =>
    compileActionMatch(
      {
        id: 1,
        name: 'a',
        steps: [
          {
            event: 'click',
            url: 'x',
            url_matching: 'contains',
            selector: 'div .btn',
            text: 'Buy',
            text_matching: 'exact',
            href: null,
            href_matching: null,
            tag_name: null,
            properties: [{ key: 'plan', value: 'pro', type: 'person' }],
          },
        ],
      },
      { event: 'e.event', properties: 'e.properties', elementsChain: 'e.elements_chain' },
      ctx,
    ),
  cohortMembership: (id, personIdSql, params) => cohortMembershipSql(id, COHORTS, personIdSql, { params, teamParam: params.add(1, 'Int64'), nowMs: 0 }),
  // Stands in for the HogQL compiler: an aggregate where the math needs one, a condition elsewhere.
  hogql: (_expression, _params, options) => (options.allowAggregations ? 'count()' : "toString(e.event) != ''"),
};

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
      const range = resolveQueryDateRange({ interval: interval as Interval, timezone: 'Europe/Berlin', weekStartDay: 1, nowMs: ports.nowMs });
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
      const query = new SeriesSqlBuilder(input, ports).build();
      await expect(ch.query({ query: `EXPLAIN ${query.sql}`, query_params: query.params, format: 'JSONEachRow' }).then((r) => r.json())).resolves.toBeDefined();
    }
  });
});
