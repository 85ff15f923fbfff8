import { insertEvents } from '@sightline/clickhouse';
import { createTestStores, insertJourneys, journeyPersonUuid, journeyTimeMs, testEventRow, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import type { QueryProjectRow } from '../common/query-project';
import type { StickinessSeries } from './stickiness.query';

/**
 * Cases of PostHog's stickiness query-runner tests
 * (posthog/hogql_queries/insights/test/test_stickiness_query_runner.py), each with its data,
 * query and asserted numbers, on the real ClickHouse engine, through the query API's
 * StickinessQuery node. Every data set has its own project.
 */

const DAYS = (from: number, to: number, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
const at = (day: number, hour = 12) => `2020-01-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`;
const pageviews = (timestamps: string[], properties: Record<string, unknown> = {}) =>
  timestamps.flatMap((timestamp) => [{ event: '$pageview', timestamp, properties }]);

/** `_create_test_events`: p1 every day from the 11th to the 19th, p2 every other day; a $pageview and a $pageleave each time. */
function testEvents(): JourneyPeople {
  const both = (days: number[], properties: Record<string, unknown>) =>
    days.flatMap((d) => ['$pageview', '$pageleave'].map((event) => ({ event, timestamp: at(d), properties })));
  return {
    p1: both(DAYS(11, 19), { $browser: 'Chrome', prop: 10, bool_field: true, $group_0: 'org:1' }),
    p2: both(DAYS(11, 19, 2), { $browser: 'Firefox', prop: 10, bool_field: false, $group_0: 'org:1' }),
  };
}

/** The three persons of the cumulative and actors cases: active on 3, 2 and 1 days from the 11th. */
const THREE_PERSONS: JourneyPeople = {
  p1: pageviews([at(11), at(12), at(13)]),
  p2: pageviews([at(11), at(12)]),
  p3: pageviews([at(11)]),
};

const DATASETS = {
  test: testEvents(),
  // test_interval_2_day_filtering
  twoDay: {
    p1: pageviews(
      DAYS(11, 19).map((d) => at(d)),
      { $browser: 'Chrome' },
    ),
    p2: pageviews([at(11), at(13), at(15)], { $browser: 'Firefox' }),
  },
  // test_criteria
  criteria: {
    p1: pageviews([11, 11, 13, 13, 15, 15, 17, 17, 17, 19].map((d) => at(d))),
    p2: pageviews([12, 12, 13, 13, 19].map((d) => at(d))),
  },
  three: THREE_PERSONS,
  // test_cumulative_stickiness_with_intervals
  hours: { p1: pageviews([at(11, 12), at(11, 13), at(11, 14)]), p2: pageviews([at(11, 12), at(11, 13)]) },
  // test_cumulative_stickiness_with_property_filter
  browsers: { p1: pageviews([at(11), at(12), at(13)], { browser: 'Chrome' }), p2: pageviews([at(11), at(12)], { browser: 'Safari' }) },
  // test_cumulative_stickiness_with_criteria
  cumulativeCriteria: { p1: pageviews([11, 11, 12, 12, 13].map((d) => at(d))), p2: pageviews([11, 11, 12].map((d) => at(d))), p3: pageviews([at(11)]) },
  empty: {},
  // Sightline's person rules: merged persons count once, deleted persons not at all.
  persons: {
    merged: pageviews([at(11), at(12)]),
    mergedAway: pageviews([at(13), at(14)]),
    deleted: pageviews([at(11), at(12), at(13)]),
    kept: pageviews([at(11)]),
  },
  // One event delivered twice (the same uuid), inserted below.
  redelivered: {},
  // Timezone: late evening UTC is the next day in Asia/Tokyo.
  zones: { p1: pageviews(['2020-01-11T23:30:00Z', '2020-01-12T00:30:00Z']) },
} satisfies Record<string, JourneyPeople>;
type Dataset = keyof typeof DATASETS;

describe('StickinessQuery: PostHog test_stickiness_query_runner.py cases', () => {
  let stores: TestStores;
  let queries: QueryService;
  const teams = {} as Record<Dataset, number>;
  let action = 0;

  beforeAll(async () => {
    stores = await createTestStores('stickiness');
    queries = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const name of Object.keys(DATASETS) as Dataset[]) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_stick_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
    }
    await Promise.all((Object.keys(DATASETS) as Dataset[]).map((name) => insertJourneys(stores, DATASETS[name], { teamId: teams[name] })));
    const [row] = await stores.db.query<{ id: number }>('INSERT INTO actions (team_id, name, steps) VALUES ($1, $2, $3) RETURNING id', [
      teams.test,
      'My Action',
      JSON.stringify([{ event: '$pageview', properties: [{ key: '$browser', type: 'event', value: 'Chrome', operator: 'exact' }] }]),
    ]);
    action = row!.id;
    const twice = testEventRow({
      event: '$pageview',
      atMs: journeyTimeMs(at(11)),
      teamId: teams.redelivered,
      distinctId: 'r1',
      personId: journeyPersonUuid('r1'),
    });
    // Two different blocks (an identical block could be dropped on insert), the second with another
    // event, kept apart (this file's own database) so the copies stay until FINAL folds them.
    await stores.ch.command({ query: 'SYSTEM STOP MERGES events' });
    await insertEvents(stores.ch, [twice]);
    await insertEvents(stores.ch, [twice, testEventRow({ event: 'other', atMs: journeyTimeMs(at(11)), teamId: teams.redelivered, distinctId: 'r1' })]);
    // mergedAway's distinct id now belongs to merged (a merge re-points it with a higher version).
    const team = teams.persons;
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [
        { team_id: team, distinct_id: 'mergedAway', person_id: journeyPersonUuid('merged', team), is_deleted: 0, version: 1 },
        { team_id: team, distinct_id: 'deleted', person_id: journeyPersonUuid('deleted', team), is_deleted: 1, version: 1 },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await stores?.ch.command({ query: 'SYSTEM START MERGES events' });
    await stores?.close();
  });

  /** The StickinessQuery's results through the query API (`now` as freeze_time; default 2020-01-25). */
  const run = async (
    dataset: Dataset,
    query: Record<string, unknown> = {},
    options: { now?: string; project?: Partial<QueryProjectRow> } = {},
  ): Promise<StickinessSeries[]> => {
    const node = {
      kind: 'StickinessQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '2020-01-11', date_to: '2020-01-20' },
      interval: 'day',
      ...query,
    };
    const response = await queries.runNode(
      { id: teams[dataset], timezone: 'UTC', ...options.project },
      node,
      journeyTimeMs(options.now ?? '2020-01-25T00:00:00Z'),
    );
    return response!['results'] as StickinessSeries[];
  };
  const days = (n: number, unit = 'day') => Array.from({ length: n }, (_, i) => `${i + 1} ${unit}${i === 0 ? '' : 's'}`);
  const chromeOnly = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0];

  it('test_days, test_count, test_labels, test_interval_day', async () => {
    const [r] = await run('test');
    expect(r!.days).toEqual(DAYS(1, 10));
    expect(r!.count).toBe(2);
    expect(r!.label).toBe('$pageview');
    expect(r!.labels).toEqual(days(10));
    expect(r!.data).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
    expect(r!.action).toEqual({ order: 0, type: 'events', name: '$pageview', id: '$pageview' });
  });

  it('test_interval_hour', async () => {
    const [r] = await run('test', { interval: 'hour', dateRange: { date_from: '2020-01-11', date_to: '2020-01-12' } });
    expect(r!.labels).toEqual(days(25, 'hour'));
    expect(r!.days).toEqual(DAYS(1, 25));
    expect(r!.data).toEqual([2, ...new Array(24).fill(0)]);
  });

  it('test_interval_hour_last_days', async () => {
    const [r] = await run('test', { interval: 'hour', dateRange: { date_from: '-2d' } }, { now: '2020-01-20T12:00:00Z' });
    // 61 = 48 + 12 + 1
    expect(r!.labels).toEqual(days(61, 'hour'));
    expect(r!.data).toEqual([1, 1, ...new Array(59).fill(0)]);
  });

  it('test_interval_2_day', async () => {
    const [r] = await run('test', { intervalCount: 2 });
    expect(r!.labels).toEqual(days(5));
    expect(r!.days).toEqual([1, 2, 3, 4, 5]);
    expect(r!.data).toEqual([0, 0, 0, 0, 2]);
  });

  it('test_interval_2_day_filtering', async () => {
    const [r] = await run('twoDay', { intervalCount: 2 });
    expect(r!.days).toEqual([1, 2, 3, 4, 5]);
    expect(r!.data).toEqual([0, 0, 1, 0, 1]);
  });

  it('test_interval_week', async () => {
    const [r] = await run('test', { interval: 'week' });
    expect(r!.labels).toEqual(['1 week', '2 weeks', '3 weeks']);
    expect(r!.data).toEqual([0, 0, 2]);
  });

  it('test_interval_full_weeks', async () => {
    const [r] = await run('test', { interval: 'week', dateRange: { date_from: '-30d' } }, { now: '2020-01-23T12:00:00Z' });
    expect(r!.labels).toEqual(['1 week', '2 weeks', '3 weeks', '4 weeks', '5 weeks']);
    expect(r!.data).toEqual([0, 0, 2, 0, 0]);
  });

  it('test_interval_month', async () => {
    const [r] = await run('test', { interval: 'month' });
    expect([r!.labels, r!.days, r!.data]).toEqual([['1 month'], [1], [2]]);
  });

  it('test_property_filtering, test_property_filtering_hogql, test_event_filtering', async () => {
    const chrome = { key: '$browser', operator: 'exact', value: 'Chrome', type: 'event' };
    expect((await run('test', { properties: [chrome] }))[0]!.data).toEqual(chromeOnly);
    expect((await run('test', { properties: [{ key: "properties.$browser == 'Chrome'", type: 'hogql' }] }))[0]!.data).toEqual(chromeOnly);
    expect((await run('test', { series: [{ kind: 'EventsNode', event: '$pageview', properties: [chrome] }] }))[0]!.data).toEqual(chromeOnly);
  });

  it('test_any_event', async () => {
    const [r] = await run('test', { series: [{ kind: 'EventsNode', event: null }] });
    expect(r!.label).toBe('All events');
    expect(r!.data).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
  });

  it('test_actions', async () => {
    const [r] = await run('test', { series: [{ kind: 'ActionsNode', id: action }] });
    expect(r!.data).toEqual(chromeOnly);
    expect(r!.label).toBe('My Action');
  });

  it('test_compare', async () => {
    const r = await run('test', { stickinessFilter: {}, compareFilter: { compare: true } });
    expect(r.map((s) => [s.count, s.compare_label])).toEqual([
      [2, 'current'],
      [0, 'previous'],
    ]);
  });

  it('test_compare_to', async () => {
    const r = await run('test', { dateRange: { date_from: '2020-01-12', date_to: '2020-01-20' }, compareFilter: { compare: true, compare_to: '-1d' } });
    expect(r.map((s) => [s.count, s.compare_label, s.data])).toEqual([
      [2, 'current', [0, 0, 0, 1, 0, 0, 0, 1, 0]],
      [2, 'previous', [0, 0, 0, 0, 1, 0, 0, 0, 1]],
    ]);
  });

  it('test_criteria', async () => {
    const criteria = (operator: string, value: number) => ({ stickinessFilter: { stickinessCriteria: { operator, value } } });
    const from12 = { dateRange: { date_from: '2020-01-12', date_to: '2020-01-20' } };
    let [r] = await run('criteria', { ...from12, ...criteria('gte', 2) });
    expect([r!.count, r!.data]).toEqual([2, [0, 1, 1, 0, 0, 0, 0, 0, 0]]);
    [r] = await run('criteria', { ...from12, ...criteria('lte', 1) });
    expect([r!.count, r!.data]).toEqual([2, [2, 0, 0, 0, 0, 0, 0, 0, 0]]);
    [r] = await run('criteria', criteria('exact', 2));
    expect([r!.count, r!.data]).toEqual([2, [0, 1, 1, 0, 0, 0, 0, 0, 0, 0]]);
  });

  it('test_filter_test_accounts', async () => {
    const project = { test_account_filters: [{ key: '$browser', type: 'event', value: 'Chrome', operator: 'exact' }] };
    expect((await run('test', { filterTestAccounts: true }, { project }))[0]!.data).toEqual(chromeOnly);
  });

  it('test_group_aggregations', async () => {
    const [r] = await run('test', { series: [{ kind: 'EventsNode', event: '$pageview', math: 'unique_group', math_group_type_index: 0 }] });
    expect(r!.data).toEqual(chromeOnly);
  });

  it('test_hogql_aggregations (the HogQL names the field without the `e.` prefix)', async () => {
    const [r] = await run('test', { series: [{ kind: 'EventsNode', event: '$pageview', math: 'hogql', math_hogql: 'properties.prop' }] });
    expect(r!.data).toEqual(chromeOnly);
  });

  const cumulative = { stickinessFilter: { computedAs: 'cumulative' } };
  const threeDays = { dateRange: { date_from: '2020-01-11', date_to: '2020-01-13' } };

  it('test_cumulative_stickiness', async () => {
    const [r] = await run('three', { ...threeDays, ...cumulative });
    expect([r!.data, r!.count, r!.labels]).toEqual([[3, 2, 1], 3, ['1 day or more', '2 days or more', '3 days or more']]);
  });

  it('test_cumulative_stickiness_with_intervals', async () => {
    const [r] = await run('hours', { dateRange: { date_from: '2020-01-11T12:00:00Z', date_to: '2020-01-11T14:00:00Z' }, interval: 'hour', ...cumulative });
    expect([r!.data, r!.labels]).toEqual([
      [2, 2, 1],
      ['1 hour or more', '2 hours or more', '3 hours or more'],
    ]);
  });

  it('test_cumulative_stickiness_with_property_filter', async () => {
    const [r] = await run('browsers', { ...threeDays, ...cumulative, properties: [{ key: 'browser', value: 'Chrome', operator: 'exact', type: 'event' }] });
    expect(r!.data).toEqual([1, 1, 1]);
  });

  it('test_cumulative_stickiness_zero_days', async () => {
    const [r] = await run('empty', { ...threeDays, ...cumulative });
    expect([r!.data, r!.labels]).toEqual([
      [0, 0, 0],
      ['1 day or more', '2 days or more', '3 days or more'],
    ]);
  });

  it('test_cumulative_stickiness_with_criteria', async () => {
    const [r] = await run('cumulativeCriteria', {
      ...threeDays,
      stickinessFilter: { computedAs: 'cumulative', stickinessCriteria: { operator: 'gte', value: 2 } },
    });
    expect(r!.data).toEqual([2, 1, 0]);
  });

  it('counts a merged person once and a deleted person not at all', async () => {
    // merged: the 11th to the 14th through both distinct ids (4 days); deleted: left out; kept: 1 day.
    const [r] = await run('persons', { dateRange: { date_from: '2020-01-11', date_to: '2020-01-14' } });
    expect(r!.data).toEqual([1, 0, 0, 1]);
  });

  it('counts an event delivered twice once, with or without criteria', async () => {
    const rows = await (await stores.ch.query({ query: `SELECT count() AS n FROM events WHERE team_id = ${teams.redelivered}`, format: 'JSONEachRow' })).json();
    expect(rows).toEqual([{ n: 3 }]);
    const range = { dateRange: { date_from: '2020-01-11', date_to: '2020-01-12' } };
    expect((await run('redelivered', range))[0]!.data).toEqual([1, 0]);
    expect((await run('redelivered', { ...range, stickinessFilter: { stickinessCriteria: { operator: 'gte', value: 2 } } }))[0]!.data).toEqual([0, 0]);
  });

  it("cuts days in the project's timezone", async () => {
    const range = { dateRange: { date_from: '2020-01-11', date_to: '2020-01-13' } };
    expect((await run('zones', range))[0]!.data).toEqual([0, 1, 0]);
    expect((await run('zones', range, { project: { timezone: 'Asia/Tokyo' } }))[0]!.data).toEqual([1, 0, 0]);
  });

  /** The actor ids of an ActorsQuery around `source` (a StickinessActorsQuery or an InsightActorsQuery). */
  const actors = async (dataset: Dataset, source: Record<string, unknown>): Promise<string[]> => {
    const response = await queries.runNode({ id: teams[dataset], timezone: 'UTC' }, { kind: 'ActorsQuery', source }, journeyTimeMs('2020-01-25T00:00:00Z'));
    return (response!['results'] as unknown[][]).map((row) => (row[0] as { id: string }).id);
  };
  const stickinessQuery = (query: Record<string, unknown> = {}) => ({
    kind: 'StickinessQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    dateRange: { date_from: '2020-01-11', date_to: '2020-01-13' },
    interval: 'day',
    ...query,
  });
  const person = (dataset: Dataset, key: string) => journeyPersonUuid(key, teams[dataset]);

  it('test_interval_2_day_filtering: the actors of a bar (StickinessActorsQuery, day and operator)', async () => {
    const source = stickinessQuery({ dateRange: { date_from: '2020-01-11', date_to: '2020-01-20' }, intervalCount: 2 });
    expect(await actors('twoDay', { kind: 'StickinessActorsQuery', source, day: 1, operator: 'exact' })).toEqual([]);
    expect((await actors('twoDay', { kind: 'StickinessActorsQuery', source, day: 3, operator: 'gte' })).sort()).toEqual(
      [person('twoDay', 'p1'), person('twoDay', 'p2')].sort(),
    );
  });

  it('test_actor_query_cumulative: bar N lists the actors active on N or more days', async () => {
    const source = stickinessQuery({ stickinessFilter: { computedAs: 'cumulative' } });
    const counts = await Promise.all([1, 2, 3].map(async (day) => (await actors('three', { kind: 'InsightActorsQuery', source, day })).length));
    expect(counts).toEqual([3, 2, 1]);
  });

  it('test_actor_query_non_cumulative: bar N lists the actors active on exactly N days (InsightActorsQuery)', async () => {
    const source = stickinessQuery();
    expect(await actors('three', { kind: 'InsightActorsQuery', source, day: 1 })).toEqual([person('three', 'p3')]);
    expect(await actors('three', { kind: 'InsightActorsQuery', source, day: 2 })).toEqual([person('three', 'p2')]);
    expect(await actors('three', { kind: 'InsightActorsQuery', source, day: 3 })).toEqual([person('three', 'p1')]);
  });

  it('test_actor_query_with_operator', async () => {
    const source = stickinessQuery();
    expect((await actors('three', { kind: 'StickinessActorsQuery', source, day: 2, operator: 'gte' })).length).toBe(2);
    expect((await actors('three', { kind: 'StickinessActorsQuery', source, day: 2, operator: 'lte' })).length).toBe(2);
  });

  it('lists the persons of a bar as the person rows, merged persons once, and the previous period when asked', async () => {
    const source = stickinessQuery({ dateRange: { date_from: '2020-01-11', date_to: '2020-01-14' } });
    const response = await queries.runNode(
      { id: teams.persons, timezone: 'UTC' },
      { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source, day: 4 } },
      journeyTimeMs('2020-01-25T00:00:00Z'),
    );
    expect(response).toMatchObject({ columns: ['person', 'id', 'person.$delete'], hasMore: false });
    expect((response!['results'] as unknown[][]).map((row) => row[1])).toEqual([person('persons', 'merged')]);
    const compared = { ...source, compareFilter: { compare: true } };
    expect(await actors('persons', { kind: 'InsightActorsQuery', source: compared, day: 1, compare: 'previous' })).toEqual([]);
    await expect(actors('persons', { kind: 'InsightActorsQuery', source, day: 1, compare: 'previous' })).rejects.toMatchObject({
      attr: 'query__source__compare',
    });
  });
});
