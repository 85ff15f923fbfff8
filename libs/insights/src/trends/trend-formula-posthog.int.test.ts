import { createTestStores, insertJourneys, journeyTimeMs, type JourneyEvent, type TestStores } from '@sightline/testkit';
import { BREAKDOWN_NULL } from '../common/events-sql';
import { parseTrendFilter } from './trend-filter';
import { trendsQueryToFilter } from './trends-query-node';
import type { TrendSeries } from './trend-result';
import { createQueryService, type QueryService } from '../runners/query-service';

/**
 * Formulas as PostHog's query runner answers them
 * (posthog/hogql_queries/insights/trends/test/test_formula.py): its setUp's events, each case's
 * TrendsQuery and asserted numbers, on the real ClickHouse engine.
 */
const TEAM = 1;

/** test_formula.py setUp: "session start" and "session end" events of one person in one session. */
const event = (name: string, timestamp: string, xyz: number, location: string, extra: Record<string, unknown> = {}): JourneyEvent => ({
  event: name,
  timestamp,
  properties: { xyz, location, $session_id: 's1', $group_0: 'org:5', ...extra },
});
const SETUP = {
  blabla: [
    event('session start', '2020-01-02T13:01:01Z', 200, 'Paris', { $current_url: 'http://example.org' }),
    event('session start', '2020-01-02T13:01:01Z', 300, 'Paris'),
    event('session start', '2020-01-02T13:01:01Z', 400, 'London'),
    event('session start', '2020-01-03T13:01:01Z', 400, 'London'),
    event('session start', '2020-01-03T13:04:01Z', 500, 'London'),
    event('session end', '2020-01-03T13:04:01Z', 500, 'London'),
    event('session end', '2020-01-03T13:04:01Z', 500, 'Belo Horizonte'),
    event('session end', '2020-01-03T13:04:01Z', 400, ''),
  ],
};

const DAYS = ['2019-12-28', '2019-12-29', '2019-12-30', '2019-12-31', '2020-01-01', '2020-01-02', '2020-01-03', '2020-01-04'];
const LABELS = ['28-Dec-2019', '29-Dec-2019', '30-Dec-2019', '31-Dec-2019', '1-Jan-2020', '2-Jan-2020', '3-Jan-2020', '4-Jan-2020'];

describe('trend formulas as PostHog answers them (test_formula.py)', () => {
  let stores: TestStores;
  let trends: QueryService;
  let cohortId: number;

  beforeAll(async () => {
    stores = await createTestStores('trendsformula');
    trends = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await insertJourneys(stores, SETUP, { teamId: TEAM, personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } });
    const properties = { type: 'OR', values: [{ type: 'AND', values: [{ key: '$some_prop', value: 'some_val', type: 'person' }] }] };
    const [row] = await stores.db.query<{ id: number }>(
      "INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, 'cohort1', false, $2) RETURNING id",
      [TEAM, JSON.stringify({ properties })],
    );
    cohortId = row!.id;
  }, 120_000);

  afterAll(async () => {
    await stores?.close();
  });

  /** test_formula.py `_run`: sum and avg of xyz over "session start", formula A + B, overridden by `extra`. */
  const run = async (extra: Record<string, unknown> = {}, runAt = '2020-01-04T13:01:01Z'): Promise<TrendSeries[]> => {
    const query = {
      series: [
        { event: 'session start', math: 'sum', math_property: 'xyz' },
        { event: 'session start', math: 'avg', math_property: 'xyz' },
      ],
      trendsFilter: { formula: 'A + B' },
      ...extra,
    };
    return (await trends.run('TrendsQuery', { id: TEAM, timezone: 'UTC' }, parseTrendFilter(trendsQueryToFilter(query)), journeyTimeMs(runAt))).result;
  };

  it('test_hour_interval_hour_level_relative (test_formula.py)', async () => {
    const r = await run({ dateRange: { date_from: '-24h' }, interval: 'hour' }, '2020-01-03T13:05:01Z');
    expect(r[0]!.data).toEqual([1200, ...Array<number>(23).fill(0), 1350]);
  });

  it('test_hour_interval_day_level_relative (test_formula.py)', async () => {
    const r = await run({ dateRange: { date_from: '-1d' }, interval: 'hour' }, '2020-01-03T13:05:01Z');
    expect(r[0]!.data).toEqual([...Array<number>(13).fill(0), 1200, ...Array<number>(23).fill(0), 1350]);
  });

  it('test_day_interval (test_formula.py)', async () => {
    expect((await run({ dateRange: { date_from: '-3d' } }, '2020-01-03T13:05:01Z'))[0]!.data).toEqual([0, 0, 1200, 1350]);
  });

  it('test_week_interval (test_formula.py)', async () => {
    expect((await run({ dateRange: { date_from: '-2w' }, interval: 'week' }, '2020-01-03T13:05:01Z'))[0]!.data).toEqual([0, 0, 2160]);
  });

  it('test_month_interval (test_formula.py)', async () => {
    expect((await run({ dateRange: { date_from: '-2m' }, interval: 'month' }, '2020-01-03T13:05:01Z'))[0]!.data).toEqual([0, 0, 2160]);
  });

  it('test_formula (test_formula.py)', async () => {
    const points = async (formula: string) => (await run({ trendsFilter: { formula } }))[0]!;
    expect((await points('A - B')).data).toEqual([0, 0, 0, 0, 0, 600, 450, 0]);
    expect((await points('A * B')).data).toEqual([0, 0, 0, 0, 0, 270000, 405000, 0]);
    expect((await points('A / B')).data).toEqual([0, 0, 0, 0, 0, 3, 2, 0]);
    const ratio = await points('(A/3600)/B');
    expect(ratio.data).toEqual([0, 0, 0, 0, 0, 1 / 1200, 1 / 1800, 0]);
    expect(ratio.count).toBeCloseTo(1 / 720, 12);
    const byZero = await points('A/0');
    expect([byZero.data, byZero.count]).toEqual([[0, 0, 0, 0, 0, 0, 0, 0], 0]);
  });

  it('test_formula_with_unique_sessions (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'unique_session' },
        { event: 'session start', math: 'dau' },
      ],
      trendsFilter: { formula: 'A / B' },
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 1, 1, 0]);
  });

  it('test_regression_formula_with_unique_sessions_2x_and_duration_filter (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'unique_session', properties: [{ key: '$session_duration', value: 12, operator: 'gt', type: 'session' }] },
        { event: 'session start', math: 'unique_session' },
      ],
      trendsFilter: { formula: 'A / B' },
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 1, 1, 0]);
  });

  it('test_regression_formula_with_unique_sessions_2x_and_duration_filter_2x (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: '$autocapture', math: 'unique_session', properties: [{ key: '$session_duration', type: 'session', value: 30, operator: 'lt' }] },
        { event: 'session start', math: 'unique_session', properties: [{ key: '$session_duration', type: 'session', value: 500, operator: 'gt' }] },
      ],
      trendsFilter: { formula: 'B' },
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 1, 1, 0]);
  });

  // s1 runs from 2020-01-02 13:01:01 to 2020-01-03 13:04:01 (86580 s); 3 "session end" on Jan 3.
  it('test_regression_formula_with_session_duration_aggregation (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', name: '$pageview', math: 'avg', math_property: '$session_duration' },
        { event: 'session end', name: '$pageview', math: 'total' },
      ],
      trendsFilter: { formula: 'A / B' },
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 28860, 0]);
  });

  it('test_aggregated_one_without_events (test_formula.py)', async () => {
    const r = await run({
      trendsFilter: { display: 'BoldNumber', formula: 'B + A' },
      series: [
        { event: 'session start', name: 'session start', math: 'sum', math_property: 'xyz' },
        { event: 'session error', name: 'session error', math: 'sum', math_property: 'session not here' },
      ],
    });
    expect([r[0]!.aggregated_value, r[0]!.label]).toEqual([1800, 'Formula (B + A)']);
  });

  it('test_breakdown (test_formula.py)', async () => {
    const r = await run({ trendsFilter: { formula: 'A - B' }, breakdownFilter: { breakdown: 'location' } });
    expect(r.map((s) => [s.breakdown_value, s.label, s.data])).toEqual([
      ['London', 'Formula (A - B)', [0, 0, 0, 0, 0, 0, 450, 0]],
      ['Paris', 'Formula (A - B)', [0, 0, 0, 0, 0, 250, 0, 0]],
    ]);
  });

  it('test_breakdown_aggregated (test_formula.py)', async () => {
    const r = await run({ trendsFilter: { formula: 'A - B', display: 'ActionsPie' }, breakdownFilter: { breakdown: 'location' } });
    expect(r.map((s) => [s.breakdown_value, s.label])).toEqual([
      ['London', 'Formula (A - B)'],
      ['Paris', 'Formula (A - B)'],
    ]);
    expect(r[0]!.aggregated_value).toBeCloseTo(866.6666666666667, 9);
    expect(r[1]!.aggregated_value).toBe(250);
  });

  it('test_breakdown_with_different_breakdown_values_per_series (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'sum', math_property: 'xyz' },
        { event: 'session end', math: 'sum', math_property: 'xyz' },
      ],
      trendsFilter: { formula: 'A + B' },
      breakdownFilter: { breakdown: 'location' },
    });
    // Paris and Belo Horizonte tie on their sums: the earlier points decide.
    expect(r.map((s) => [s.breakdown_value, s.label, s.data])).toEqual([
      ['London', 'Formula (A + B)', [0, 0, 0, 0, 0, 400, 1400, 0]],
      ['Paris', 'Formula (A + B)', [0, 0, 0, 0, 0, 500, 0, 0]],
      ['Belo Horizonte', 'Formula (A + B)', [0, 0, 0, 0, 0, 0, 500, 0]],
      [BREAKDOWN_NULL, 'Formula (A + B)', [0, 0, 0, 0, 0, 0, 400, 0]],
    ]);
  });

  it('test_breakdown_counts_of_different_events_one_without_events (test_formula.py)', async () => {
    const r = await run({
      trendsFilter: { display: 'ActionsLineGraph', formula: 'B / A' },
      breakdownFilter: { breakdown: 'location', breakdown_type: 'event' },
      series: [
        { event: 'session start', name: 'session start' },
        { event: 'session error', name: 'session error' },
      ],
    });
    // All ties: by the value, descending.
    expect(
      r.map((s) => ({ data: s.data, count: s.count, labels: s.labels, days: s.days, label: s.label, breakdown_value: s.breakdown_value, action: s.action })),
    ).toEqual(
      ['Paris', 'London'].map((value) => ({
        data: [0, 0, 0, 0, 0, 0, 0, 0],
        count: 0,
        labels: LABELS,
        days: DAYS,
        label: 'Formula (B / A)',
        breakdown_value: value,
        action: null,
      })),
    );
  });

  it('test_breakdown_cohort (test_formula.py)', async () => {
    const r = await run({ breakdownFilter: { breakdown: ['all', cohortId], breakdown_type: 'cohort' } });
    // With "all", each cohort is its own query and keeps its place.
    expect(r.map((s) => [s.breakdown_value, s.label, s.data])).toEqual([
      ['all', 'Formula (A + B)', [0, 0, 0, 0, 0, 1200, 1350, 0]],
      [cohortId, 'Formula (A + B)', [0, 0, 0, 0, 0, 1200, 1350, 0]],
    ]);
  });

  it('test_breakdown_hogql (test_formula.py)', async () => {
    const r = await run({ breakdownFilter: { breakdown: "concat(person.properties.$some_prop, ' : ', properties.location)", breakdown_type: 'hogql' } });
    expect(r.map((s) => s.breakdown_value)).toEqual(['some_val : London', 'some_val : Paris']);
    expect(r.map((s) => s.data)).toEqual([
      [0, 0, 0, 0, 0, 800, 1350, 0],
      [0, 0, 0, 0, 0, 750, 0, 0],
    ]);
  });

  it('test_breakdown_mismatching_sizes (test_formula.py)', async () => {
    const r = await run({
      series: [{ event: 'session start' }, { event: 'session end' }],
      breakdownFilter: { breakdown: 'location' },
      trendsFilter: { formula: 'A + B' },
    });
    expect(r.map((s) => [s.breakdown_value, s.data])).toEqual([
      ['London', [0, 0, 0, 0, 0, 1, 3, 0]],
      ['Paris', [0, 0, 0, 0, 0, 2, 0, 0]],
      ['Belo Horizonte', [0, 0, 0, 0, 0, 0, 1, 0]],
      [BREAKDOWN_NULL, [0, 0, 0, 0, 0, 0, 1, 0]],
    ]);
  });

  it('test_global_properties (test_formula.py)', async () => {
    expect((await run({ properties: [{ key: '$current_url', value: 'http://example.org' }] }))[0]!.data).toEqual([0, 0, 0, 0, 0, 400, 0, 0]);
  });

  it('test_properties_with_escape_params (test_formula.py)', async () => {
    const value =
      'http://localhost:8000/insights?insight=TRENDS&interval=day&display=ActionsLineGraph&actions=%5B%5D&events=%5B%7B%22id%22%3A%22%24pageview%22%2C%22name%22%3A%22%24pageview%22%2C%22type%22%3A%22events%22%2C%22order%22%3A0%7D%2C%7B%22id%22%3A%22%24pageview%2';
    expect((await run({ properties: [{ key: '$current_url', value }] }))[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('test_event_properties (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'sum', math_property: 'xyz', properties: [{ key: '$current_url', value: 'http://example.org' }] },
        { event: 'session start', math: 'avg', math_property: 'xyz' },
      ],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 500, 450, 0]);
  });

  it('test_compare (test_formula.py)', async () => {
    const r = await run({ dateRange: { date_from: '-1dStart' }, compareFilter: { compare: true } });
    expect(r.map((s) => [s.days, s.data])).toEqual([
      [
        ['2020-01-03', '2020-01-04'],
        [1350, 0],
      ],
      [
        ['2020-01-01', '2020-01-02'],
        [0, 1200],
      ],
    ]);
  });

  it('test_aggregated (test_formula.py)', async () => {
    expect((await run({ trendsFilter: { display: 'ActionsPie', formula: 'A + B' } }))[0]!.aggregated_value).toBe(2160);
  });

  it('test_cumulative (test_formula.py)', async () => {
    const r = await run({ trendsFilter: { display: 'ActionsLineGraphCumulative', formula: 'A + B' } });
    expect(r).toHaveLength(1);
    expect([r[0]!.data, r[0]!.days]).toEqual([[0, 0, 0, 0, 0, 1200, 2550, 2550], DAYS]);
  });

  it('test_multiple_events (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'sum', math_property: 'xyz' },
        { event: 'session start', math: 'avg', math_property: 'xyz' },
        { event: 'session start', math: 'avg', math_property: 'xyz' },
      ],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 1200, 1350, 0]);
  });

  it('test_session_formulas (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'unique_session' },
        { event: 'session start', math: 'unique_session' },
      ],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 2, 2, 0]);
  });

  it('test_group_formulas (test_formula.py)', async () => {
    const r = await run({
      series: [
        { event: 'session start', math: 'unique_group', math_group_type_index: 0 },
        { event: 'session start', math: 'unique_group', math_group_type_index: 0 },
      ],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 2, 2, 0]);
  });
});
