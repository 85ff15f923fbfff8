import type { ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, formatWithClickHouse, type TestStores } from '@sightline/testkit';
import { SQL_TEST_PORTS } from '../testing/sql-test-ports';
import { resolveRetentionDateRange } from './retention-date-range';
import { parseRetentionFilter, RETENTION_PERIODS, RETENTION_TYPES } from './retention-filter';
import { RetentionSqlBuilder } from './retention.sql';

/**
 * Every retention type, period and breakdown shape, cumulative or not, with an action entity
 * and cohort, session and element filters: ClickHouse must accept each generated statement, the
 * table's and a start interval's actors' (EXPLAIN plans it against the real schema without
 * running it).
 */
const ports = SQL_TEST_PORTS;

const SHAPES: [string, Record<string, unknown>][] = [
  ['no breakdown', {}],
  ['event breakdown, minimum occurrences', { breakdown: '$browser', minimum_occurrences: 2 }],
  ['person breakdown, groups', { breakdown: 'plan', breakdown_type: 'person', aggregation_group_type_index: 1 }],
  ['cohorts', { breakdown: [2, 'all'], breakdown_type: 'cohort' }],
];

function builderOf(type: string, period: string, shape: Record<string, unknown>, cumulative: boolean) {
  const filter = parseRetentionFilter({
    target_entity: { id: 1, type: 'actions' },
    returning_entity: { id: '$pageview', type: 'events', properties: [{ key: '$browser', value: 'Chrome' }] },
    retention_type: type,
    period,
    total_intervals: 7,
    cumulative,
    properties: [
      { key: 'id', value: 2, type: 'cohort' },
      { key: '$session_duration', value: 10, operator: 'gt', type: 'session' },
      { key: 'text', value: 'Buy', type: 'element' },
    ],
    ...shape,
  });
  const range = resolveRetentionDateRange({
    dateFrom: null,
    dateTo: null,
    period: filter.period,
    totalIntervals: filter.totalIntervals,
    timezone: 'Europe/Berlin',
    weekStartDay: 1,
    nowMs: ports.nowMs,
  });
  return new RetentionSqlBuilder({ filter, range, properties: filter.properties }, ports);
}

describe('generated retention SQL is valid ClickHouse for every combination', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  beforeAll(async () => {
    stores = await createTestStores('retention-sql');
    ch = stores.ch;
  });
  afterAll(() => stores.close());

  const explain = async (sql: string, params: Record<string, unknown>) =>
    ch.query({ query: `EXPLAIN ${sql}`, query_params: params, format: 'JSONEachRow' }).then((r) => r.json());

  const cases = RETENTION_TYPES.flatMap((type) => SHAPES.map(([name, shape]) => [type, name, shape] as const));
  it.each(cases)('%s, %s', async (type, _name, shape) => {
    for (const period of RETENTION_PERIODS) {
      for (const cumulative of [false, true]) {
        const table = builderOf(type, period, shape, cumulative);
        await expect(explain(table.countsSql(), table.params.values)).resolves.toBeDefined();
      }
      const actors = builderOf(type, period, shape, false);
      const sql = actors.actorsSql({ startIndex: 1, breakdownValue: 'Chrome', search: 'ann', limit: 100, offset: 0 });
      await expect(explain(sql, actors.params.values)).resolves.toBeDefined();
    }
  });
});

/** A few shapes pinned as ClickHouse formats them (formatQuery), with their parameters: a change to the SQL shows in review. */
describe('generated retention SQL keeps its shape', () => {
  it.each([
    ['recurring, by day', 'retention_recurring', 'Day', SHAPES[0]![1], false],
    ['first time, by week, event breakdown, cumulative', 'retention_first_time', 'Week', SHAPES[1]![1], true],
  ] as const)('%s', async (_name, type, period, shape, cumulative) => {
    const builder = builderOf(type, period, shape, cumulative);
    const sql = builder.countsSql();
    expect({ sql: await formatWithClickHouse(sql), params: builder.params.values }).toMatchSnapshot();
  });
});
