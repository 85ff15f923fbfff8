import type { ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, formatWithClickHouse, type TestStores } from '@sightline/testkit';
import { resolveQueryDateRange } from '../common/date-range';
import { SQL_TEST_PORTS as ports } from '../testing/sql-test-ports';
import { parseFunnelFilter } from './funnel-filter';
import { FunnelSqlBuilder } from './funnel.sql';

/**
 * The funnel builder's statements checked by ClickHouse itself: every order type with and
 * without an exclusion, each breakdown kind and each way of counting actors, as the step
 * counts, the conversion times and the actors' fold (the SQL they share, common/events-sql.ts,
 * with them). EXPLAIN plans each against the real schema
 * without running it. A few shapes are pinned as snapshots of ClickHouse's own formatting
 * (formatQuery) with their parameters, so a change to the SQL shows in review as a diff.
 */
const STEPS = {
  events: [
    { id: '$pageview', type: 'events', order: 0 },
    { id: 'purchase', type: 'events', order: 2, properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] },
  ],
  actions: [{ id: 1, type: 'actions', order: 1 }],
};
const ORDER_TYPES = ['ordered', 'strict', 'unordered'] as const;
/** An exclusion between the first two steps; an unordered funnel only takes one over all of them. */
const EXCLUSIONS: [string, (order: string) => Record<string, unknown>][] = [
  ['no exclusion', () => ({})],
  ['an exclusion', (order) => ({ exclusions: [{ id: 'logout', type: 'events', funnel_from_step: 0, funnel_to_step: order === 'unordered' ? 2 : 1 }] })],
];
const BREAKDOWNS: [string, Record<string, unknown>][] = [
  ['none', {}],
  ['event', { breakdown: '$browser', breakdown_type: 'event' }],
  ['person', { breakdown: 'plan', breakdown_type: 'person' }],
  ['group', { breakdown: 'name', breakdown_type: 'group', breakdown_group_type_index: 0 }],
  ['cohort', { breakdown: [1], breakdown_type: 'cohort' }],
];
const ACTORS: [string, Record<string, unknown>][] = [
  ['persons', {}],
  ['groups', { aggregation_group_type_index: 0 }],
  ['a HogQL expression', { funnel_aggregate_by_hogql: 'properties.$session_id' }],
];

function builderOf(body: Record<string, unknown>): FunnelSqlBuilder {
  const filter = parseFunnelFilter({
    ...STEPS,
    date_from: '-7d',
    properties: [
      { key: 'id', value: 2, type: 'cohort' },
      { key: '$session_duration', value: 10, operator: 'gt', type: 'session' },
    ],
    ...body,
  });
  const range = resolveQueryDateRange({ dateFrom: filter.date_from, interval: 'day', timezone: 'Europe/Berlin', weekStartDay: 1, nowMs: ports.nowMs });
  const cohortId = filter.breakdowns[0]?.type === 'cohort' ? Number(filter.breakdowns[0].property) : null;
  return new FunnelSqlBuilder({ filter, properties: { type: 'AND', values: [filter.properties] }, range, cohortId }, ports);
}

/** Each statement the builder makes for one funnel (a fresh builder each: parameters accumulate). */
const STATEMENTS: [string, (body: Record<string, unknown>) => { sql: string; params: Record<string, unknown> }][] = [
  ['steps', (body) => withParams(builderOf(body), (b) => b.stepsSql())],
  ['conversion times', (body) => withParams(builderOf(body), (b) => b.conversionTimesSql(0, 2))],
  ['actors', (body) => withParams(builderOf(body), (b) => b.actorsSql())],
];

function withParams(builder: FunnelSqlBuilder, sqlOf: (b: FunnelSqlBuilder) => string) {
  const sql = sqlOf(builder);
  return { sql, params: builder.params.values };
}

describe('generated funnel SQL', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  beforeAll(async () => {
    stores = await createTestStores('funnel-sql');
    ch = stores.ch;
  });
  afterAll(() => stores.close());

  const explain = (statement: { sql: string; params: Record<string, unknown> }) =>
    ch.query({ query: `EXPLAIN ${statement.sql}`, query_params: statement.params, format: 'JSONEachRow' }).then((r) => r.json());

  // Every statement without a breakdown; with one, the step counts (the other two share their fold).
  const shapes = ORDER_TYPES.flatMap((order) =>
    EXCLUSIONS.flatMap(([exclusion, e]) =>
      BREAKDOWNS.map(([breakdown, b]) => [order, exclusion, breakdown, { funnel_order_type: order, ...e(order), ...b }] as const),
    ),
  );
  it.each(shapes)('is valid ClickHouse: %s, %s, breakdown %s', async (_order, _exclusion, breakdown, body) => {
    for (const [, statementOf] of breakdown === 'none' ? STATEMENTS : STATEMENTS.slice(0, 1)) await expect(explain(statementOf(body))).resolves.toBeDefined();
  });

  it.each(ACTORS)('is valid ClickHouse counting %s', async (_actors, body) => {
    for (const order of ORDER_TYPES)
      for (const [, statementOf] of STATEMENTS) await expect(explain(statementOf({ funnel_order_type: order, ...body }))).resolves.toBeDefined();
  });

  const PINNED: [string, string, Record<string, unknown>][] = [
    ['steps', 'ordered, no breakdown', {}],
    ['steps', 'strict, an exclusion', { funnel_order_type: 'strict', ...EXCLUSIONS[1]![1]('strict') }],
    ['steps', 'unordered, event breakdown', { funnel_order_type: 'unordered', breakdown: '$browser', breakdown_type: 'event' }],
    ['conversion times', 'ordered', {}],
    ['actors', 'ordered, counting groups', { aggregation_group_type_index: 0 }],
  ];
  it.each(PINNED)('keeps its shape: %s, %s', async (statement, _name, body) => {
    const { sql, params } = STATEMENTS.find(([name]) => name === statement)![1](body);
    expect({ sql: await formatWithClickHouse(sql), params }).toMatchSnapshot();
  });
});
