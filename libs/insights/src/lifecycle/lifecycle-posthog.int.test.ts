import { createTestGroup, createTestStores, insertJourneys, journeyPersonUuid, journeyTimeMs, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import type { QueryProjectRow } from '../common/query-project';
import type { LifecycleSeries } from './lifecycle.query';

/**
 * Cases of PostHog's lifecycle query-runner tests
 * (posthog/hogql_queries/insights/test/test_lifecycle_query_runner.py), each with its data,
 * query and asserted numbers, on the real ClickHouse engine, through the query API's
 * LifecycleQuery node. As there, each person is created when its first event happens
 * (`freeze_time(timestamps[0])`) unless the case says otherwise; every data set has its own project.
 */

type Dataset = keyof typeof DATASETS;
const pv = (timestamps: string[], properties: Record<string, unknown> = {}, event = '$pageview') =>
  timestamps.map((timestamp) => ({ event, timestamp, properties }));
const noon = (days: number[], month = '01', year = '2020') => days.map((d) => `${year}-${month}-${String(d).padStart(2, '0')}T12:00:00Z`);

/** `_create_test_events`. */
const TEST_EVENTS: JourneyPeople = {
  p1: pv(noon([11, 12, 13, 15, 17, 19])),
  p2: pv(noon([9, 12])),
  p3: pv(noon([12])),
  p4: pv(noon([15])),
};
const FOUR_PERSONS = { name: (key: string) => ({ name: key, ...(key === 'p1' ? { email: 'test@posthog.com' } : {}) }) };

/** test_lifecycle_query_group_0 / _1: the same persons' events with `$group_0` and `$group_1`. */
const groupEvents = (p4: [string, string][]): JourneyPeople => {
  const g = (pairs: [string, string][]) =>
    pairs.map(([timestamp, company]) => ({ event: '$pageview', timestamp, properties: { $group_0: 'org:5', $group_1: company } }));
  return {
    p1: g([
      ['2020-01-11T12:00:00Z', 'company:1'],
      ['2020-01-12T12:00:00Z', 'company:2'],
      ['2020-01-13T12:00:00Z', 'company:2'],
      ['2020-01-15T12:00:00Z', 'company:2'],
      ['2020-01-17T12:00:00Z', 'company:2'],
      ['2020-01-19T12:00:00Z', 'company:1'],
    ]),
    p2: g([
      ['2020-01-09T12:00:00Z', 'company:1'],
      ['2020-01-12T12:00:00Z', 'company:1'],
    ]),
    p3: g([['2020-01-12T12:00:00Z', 'company:2']]),
    p4: g(p4),
  };
};

const DATASETS = {
  test: TEST_EVENTS,
  // test_lifecycle_trend_all_events: p3 and p4 send "$other".
  allEvents: { p1: TEST_EVENTS['p1']!, p2: TEST_EVENTS['p2']!, p3: pv(noon([12]), {}, '$other'), p4: pv(noon([15]), {}, '$other') },
  // test_lifecycle_trend_prop_filtering: persons created "now", p1's events with $number.
  props: { ...TEST_EVENTS, p1: pv(noon([11, 12, 13, 15, 17, 19]), { $number: 1 }) },
  // test_lifecycle_trends_distinct_id_repeat
  repeat: {
    p1: [...pv(noon([12])), { event: '$pageview', timestamp: '2020-01-14T12:00:00Z', distinctId: 'another_p1' }, ...pv(noon([15, 17, 19]))],
  },
  // test_lifecycle_trend_weeks_sunday / _monday
  weeks: {
    p1: pv(noon([1], '02').concat(noon([5, 10, 15, 27], '02'), noon([2], '03'))),
    p2: pv(noon([11, 18], '02')),
    p3: pv(noon([12], '02')),
    p4: pv(noon([27], '02')),
  },
  // test_lifecycle_trend_months
  months: {
    p1: pv(['2020-01-11T12:00:00Z', '2020-02-12T12:00:00Z', '2020-03-13T12:00:00Z', '2020-05-15T12:00:00Z', '2020-07-17T12:00:00Z', '2020-09-19T12:00:00Z']),
    p2: pv(['2019-12-09T12:00:00Z', '2020-02-12T12:00:00Z']),
    p3: pv(['2020-02-12T12:00:00Z']),
    p4: pv(['2020-05-15T12:00:00Z']),
  },
  // test_timezones
  zones: { ...TEST_EVENTS, p1: pv(['2020-01-11T23:00:00Z', '2020-01-12T01:00:00Z', ...noon([13, 15, 17, 19])]) },
  // test_excludes_personless_events: p3's and p4's events do not process a person profile.
  personless: {
    p1: pv(noon([11, 12, 13, 14])),
    p2: pv(noon([11, 12])),
    p3: pv(noon([11, 12, 13, 14]), { $process_person_profile: false }),
    p4: pv(noon([11, 12]), { $process_person_profile: false }),
  },
  // test_dormant_on_dst
  dst: { p1: pv(['2025-03-09T12:00:00Z']) },
  group0: groupEvents([
    ['2020-01-15T12:00:00Z', 'company:1'],
    ['2020-01-18T12:00:00Z', 'company:1'],
  ]),
  group1: groupEvents([
    ['2020-01-13T12:00:00Z', 'company:1'],
    ['2020-01-16T12:00:00Z', 'company:2'],
    ['2020-01-18T12:00:00Z', 'company:1'],
  ]),
  // test_lifecycle_query_group_with_different_created_at
  groupCreated: {
    p1: pv(['2020-01-11T12:00:00Z', '2020-01-13T12:00:00Z'], { $group_0: 'org:early' }),
    p2: pv(['2020-01-12T13:00:00Z', '2020-01-14T12:00:00Z'], { $group_0: 'org:new' }),
  },
  // Sightline's person rules: merged persons count once, deleted persons not at all.
  persons: {
    merged: pv(['2020-01-11T12:00:00Z']),
    mergedAway: pv(['2020-01-12T12:00:00Z']),
    deleted: pv(['2020-01-11T12:00:00Z', '2020-01-12T12:00:00Z']),
  },
} satisfies Record<string, JourneyPeople>;

/** Datasets whose persons were created at the test's own time, not at their first event. */
const CREATED_NOW: ReadonlySet<Dataset> = new Set(['props']);

describe('LifecycleQuery: PostHog test_lifecycle_query_runner.py cases', () => {
  let stores: TestStores;
  let queries: QueryService;
  const teams = {} as Record<Dataset, number>;
  let action = 0;
  let cohort = 0;

  beforeAll(async () => {
    stores = await createTestStores('lifecycle');
    queries = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const name of Object.keys(DATASETS) as Dataset[]) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_life_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
    }
    await Promise.all(
      (Object.keys(DATASETS) as Dataset[]).map((name) => {
        const people: JourneyPeople = DATASETS[name];
        const keys = Object.keys(people);
        return insertJourneys(stores, people, {
          teamId: teams[name],
          personProperties: Object.fromEntries(keys.map((key) => [key, FOUR_PERSONS.name(key)])),
          ...(name === 'repeat' ? { distinctIds: { p1: ['another_p1'] } } : {}),
          ...(CREATED_NOW.has(name) ? {} : { personCreatedAt: Object.fromEntries(keys.map((key) => [key, people[key]![0]!.timestamp])) }),
        });
      }),
    );
    const group = (dataset: Dataset, groupTypeIndex: number, groupKey: string, createdAt: string) =>
      createTestGroup(stores, { teamId: teams[dataset], groupTypeIndex, groupKey, createdAt });
    await group('group0', 0, 'org:5', '2020-01-09 12:00:00');
    await group('group1', 1, 'company:1', '2020-01-09 12:00:00');
    await group('group1', 1, 'company:2', '2020-01-12 12:00:00');
    await group('groupCreated', 0, 'org:early', '2020-01-05 12:00:00');
    await group('groupCreated', 0, 'org:new', '2020-01-12 12:00:00');
    const [actionRow] = await stores.db.query<{ id: number }>('INSERT INTO actions (team_id, name, steps) VALUES ($1, $2, $3) RETURNING id', [
      teams.test,
      '$pageview',
      JSON.stringify([{ event: '$pageview' }]),
    ]);
    action = actionRow!.id;
    const [cohortRow] = await stores.db.query<{ id: number }>(
      'INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, $2, false, $3) RETURNING id',
      [
        teams.test,
        'posthog emails',
        JSON.stringify({
          properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', value: ['test@posthog.com'], type: 'person', operator: 'exact' }] }] },
        }),
      ],
    );
    cohort = cohortRow!.id;
    // mergedAway's distinct id now belongs to merged; deleted's person is deleted.
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
    await stores?.close();
  });

  const run = async (
    dataset: Dataset,
    query: Record<string, unknown>,
    options: { now?: string; project?: Partial<QueryProjectRow> } = {},
  ): Promise<LifecycleSeries[]> => {
    const node = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', ...query };
    const response = await queries.runNode(
      { id: teams[dataset], timezone: 'UTC', ...options.project },
      node,
      journeyTimeMs(options.now ?? '2025-06-01T00:00:00Z'),
    );
    return response!['results'] as LifecycleSeries[];
  };
  /** assertLifecycleResults: each status's data. */
  const byStatus = (results: LifecycleSeries[]) => Object.fromEntries(results.map((r) => [r.status, r.data]));
  const range = (date_from: string, date_to: string) => ({ dateRange: { date_from, date_to } });
  const TREND = {
    new: [1, 0, 0, 1, 0, 0, 0, 0],
    returning: [1, 1, 0, 0, 0, 0, 0, 0],
    resurrecting: [1, 0, 0, 1, 0, 1, 0, 1],
    dormant: [0, -2, -1, 0, -2, 0, -1, 0],
  };
  const days = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `2020-01-${String(from + i).padStart(2, '0')}`);

  it('test_lifecycle_query_whole_range', async () => {
    const r = await run('test', range('2020-01-09', '2020-01-19'));
    expect(r.map((s) => s.status)).toEqual(['new', 'returning', 'resurrecting', 'dormant']);
    const action = { id: '$pageview', math: 'total', name: '$pageview', order: 0, type: 'events' };
    const labels = days(9, 19).map((d) => `${Number(d.slice(8))}-Jan-2020`);
    expect(r).toEqual([
      { count: 4, data: [1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0], days: days(9, 19), label: '$pageview - new', labels, status: 'new', action },
      { count: 2, data: [0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0], days: days(9, 19), label: '$pageview - returning', labels, status: 'returning', action },
      { count: 4, data: [0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1], days: days(9, 19), label: '$pageview - resurrecting', labels, status: 'resurrecting', action },
      { count: -7, data: [0, -1, 0, 0, -2, -1, 0, -2, 0, -1, 0], days: days(9, 19), label: '$pageview - dormant', labels, status: 'dormant', action },
    ]);
  });

  it('test_lifecycle_trend', async () => {
    const r = await run('test', range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z'));
    expect(r[0]!.label).toBe('$pageview - new');
    expect(byStatus(r)).toEqual(TREND);
  });

  it('test_lifecycle_trend_all_events', async () => {
    const r = await run('allEvents', { ...range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z'), series: [{ kind: 'EventsNode', event: null }] });
    expect(r[0]!.label).toBe('All events - new');
    expect(byStatus(r)).toEqual(TREND);
  });

  it('test_lifecycle_trend_prop_filtering (query and series filters)', async () => {
    const expected = {
      new: new Array(8).fill(0),
      returning: [1, 1, 0, 0, 0, 0, 0, 0],
      resurrecting: [0, 0, 0, 1, 0, 1, 0, 1],
      dormant: [0, 0, -1, 0, -1, 0, -1, 0],
    };
    const number = [{ key: '$number', value: '1', operator: 'exact', type: 'event' }];
    const dates = range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z');
    expect(byStatus(await run('props', { ...dates, properties: number }))).toEqual(expected);
    expect(byStatus(await run('props', { ...dates, series: [{ kind: 'EventsNode', event: '$pageview', properties: number }] }))).toEqual(expected);
    // test_lifecycle_trend_person_prop_filtering
    const name = [{ key: 'name', value: 'p1', operator: 'exact', type: 'person' }];
    expect(byStatus(await run('props', { ...dates, series: [{ kind: 'EventsNode', event: '$pageview', properties: name }] }))).toEqual(expected);
  });

  it('test_lifecycle_trends_distinct_id_repeat', async () => {
    expect(byStatus(await run('repeat', range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z')))).toEqual({
      new: [1, 0, 0, 0, 0, 0, 0, 0],
      returning: [0, 0, 0, 1, 0, 0, 0, 0],
      resurrecting: [0, 0, 1, 0, 0, 1, 0, 1],
      dormant: [0, -1, 0, 0, -1, 0, -1, 0],
    });
  });

  it('test_lifecycle_trend_action', async () => {
    const r = await run('test', { ...range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z'), series: [{ kind: 'ActionsNode', id: action }] });
    expect(byStatus(r)).toEqual(TREND);
    expect(r[0]!.action).toEqual({ id: String(action), name: '$pageview', type: 'actions', order: 0, math: 'total' });
  });

  it('test_lifecycle_trend_all_time', async () => {
    expect(byStatus(await run('test', { dateRange: { date_from: 'all' } }, { now: '2020-01-17T13:01:01Z' }))).toEqual({
      new: [1, 0, 1, 1, 0, 0, 1, 0, 0],
      returning: [0, 0, 0, 1, 1, 0, 0, 0, 0],
      resurrecting: [0, 0, 0, 1, 0, 0, 1, 0, 1],
      dormant: [0, -1, 0, 0, -2, -1, 0, -2, 0],
    });
  });

  it('test_lifecycle_trend_weeks_sunday and _monday', async () => {
    const expected = { new: [0, 2, 0, 1, 0, 0], returning: [1, 1, 1, 0, 1, 0], resurrecting: [0, 0, 0, 1, 0, 0], dormant: [0, 0, -2, -1, -1, -1] };
    const weeks = { ...range('2020-02-05T00:00:00Z', '2020-03-09T00:00:00Z'), interval: 'week' };
    const sunday = await run('weeks', weeks, { project: { week_start_day: 0 } });
    expect(sunday[0]!.days).toEqual(['2020-02-02', '2020-02-09', '2020-02-16', '2020-02-23', '2020-03-01', '2020-03-08']);
    expect(byStatus(sunday)).toEqual(expected);
    const monday = await run('weeks', weeks, { project: { week_start_day: 1 } });
    expect(monday[0]!.days).toEqual(['2020-02-03', '2020-02-10', '2020-02-17', '2020-02-24', '2020-03-02', '2020-03-09']);
    expect(byStatus(monday)).toEqual(expected);
  });

  it('test_lifecycle_trend_months', async () => {
    expect(byStatus(await run('months', { ...range('2020-02-01T00:00:00Z', '2020-09-01T00:00:00Z'), interval: 'month' }))).toEqual(TREND);
  });

  it('test_filter_test_accounts', async () => {
    const project = { test_account_filters: [{ key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }] };
    expect(byStatus(await run('test', { ...range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z'), filterTestAccounts: true }, { project }))).toEqual({
      new: [1, 0, 0, 1, 0, 0, 0, 0],
      returning: new Array(8).fill(0),
      resurrecting: [1, 0, 0, 0, 0, 0, 0, 0],
      dormant: [0, -2, 0, 0, -1, 0, 0, 0],
    });
  });

  it('test_timezones', async () => {
    const dates = range('2020-01-12', '2020-01-19');
    expect(byStatus(await run('zones', dates))).toEqual(TREND);
    expect(byStatus(await run('zones', dates, { project: { timezone: 'US/Pacific' } }))).toEqual({
      new: [1, 0, 0, 1, 0, 0, 0, 0],
      returning: new Array(8).fill(0),
      resurrecting: [1, 1, 0, 1, 0, 1, 0, 1],
      dormant: [-1, -2, -1, 0, -2, 0, -1, 0],
    });
  });

  it('test_cohort_filter', async () => {
    const r = await run('test', { ...range('2020-01-12T00:00:00Z', '2020-01-19T00:00:00Z'), properties: [{ key: 'id', value: cohort, type: 'cohort' }] });
    expect(r.map((s) => s.count)).toEqual([0, 2, 3, -3]);
  });

  it('test_excludes_personless_events', async () => {
    const r = await run('personless', range('2020-01-11T00:00:00Z', '2020-01-14T00:00:00Z'));
    expect(r[0]!.data).toEqual([2, 0, 0, 0]);
    expect(r[2]!.data).toEqual([0, 0, 0, 0]);
  });

  it('test_dormant_on_dst', async () => {
    const r = await run('dst', range('2025-03-09T00:00:00Z', '2025-03-12T00:00:00Z'), { project: { timezone: 'US/Pacific' } });
    expect([r[0]!.status, r[0]!.data, r[0]!.days]).toEqual(['new', [0, 1, 0, 0], ['2025-03-08', '2025-03-09', '2025-03-10', '2025-03-11']]);
    expect([r[3]!.status, r[3]!.data]).toEqual(['dormant', [0, 0, -1, 0]]);
  });

  it('test_lifecycle_query_group_0', async () => {
    const r = await run('group0', { ...range('2020-01-09', '2020-01-19'), aggregation_group_type_index: 0 });
    expect(r.map((s) => [s.status, s.count, s.data])).toEqual([
      ['new', 1, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
      ['returning', 4, [0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1]],
      ['resurrecting', 3, [0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0]],
      ['dormant', -3, [0, -1, 0, 0, 0, -1, 0, -1, 0, 0, 0]],
    ]);
  });

  it('test_lifecycle_query_group_1', async () => {
    const r = await run('group1', { ...range('2020-01-09', '2020-01-19'), aggregation_group_type_index: 1 });
    expect(r.map((s) => [s.status, s.count, s.data])).toEqual([
      ['new', 2, [1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]],
      ['returning', 6, [0, 0, 0, 1, 2, 0, 0, 1, 1, 0, 1]],
      ['resurrecting', 3, [0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0]],
      ['dormant', -4, [0, -1, 0, 0, 0, -2, 0, 0, 0, -1, 0]],
    ]);
  });

  it('test_lifecycle_query_group_with_different_created_at', async () => {
    const r = await run('groupCreated', { ...range('2020-01-09', '2020-01-19'), aggregation_group_type_index: 0 });
    expect(r[0]!.data).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('counts a merged person once (from its own creation) and a deleted person not at all', async () => {
    expect(byStatus(await run('persons', range('2020-01-11', '2020-01-13')))).toEqual({
      new: [1, 0, 0],
      returning: [0, 1, 0],
      resurrecting: [0, 0, 0],
      dormant: [0, 0, -1],
    });
  });

  /** The actor ids of an ActorsQuery over an InsightActorsQuery of a lifecycle bar. */
  const actors = async (dataset: Dataset, source: Record<string, unknown>, extra: Record<string, unknown>): Promise<string[]> => {
    const response = await queries.runNode(
      { id: teams[dataset], timezone: 'UTC' },
      { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source, ...extra } },
      journeyTimeMs('2025-06-01T00:00:00Z'),
    );
    return (response!['results'] as unknown[][]).map((row) => (row[0] as { id: string }).id).sort();
  };

  it('lists the actors of a bar: a status on a day (LifecycleQueryRunner.to_actors_query)', async () => {
    const source = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], interval: 'day', ...range('2020-01-12', '2020-01-19') };
    const person = (key: string) => journeyPersonUuid(key, teams.test);
    expect(await actors('test', source, { day: '2020-01-12', status: 'new' })).toEqual([person('p3')]);
    expect(await actors('test', source, { day: '2020-01-12', status: 'returning' })).toEqual([person('p1')]);
    expect(await actors('test', source, { day: '2020-01-12', status: 'resurrecting' })).toEqual([person('p2')]);
    expect(await actors('test', source, { day: '2020-01-13', status: 'dormant' })).toEqual([person('p2'), person('p3')].sort());
    // A date-time names the interval it falls in.
    expect(await actors('test', source, { day: '2020-01-13T18:30:00', status: 'dormant' })).toEqual([person('p2'), person('p3')].sort());
    await expect(actors('test', source, { day: '2020-01-13', status: 'sleepy' })).rejects.toMatchObject({ attr: 'query__source__status' });
  });

  it('lists groups for a lifecycle of groups', async () => {
    const source = {
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      aggregation_group_type_index: 1,
      ...range('2020-01-09', '2020-01-19'),
    };
    const response = await queries.runNode(
      { id: teams.group1, timezone: 'UTC' },
      { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source, day: '2020-01-12', status: 'new' } },
      journeyTimeMs('2025-06-01T00:00:00Z'),
    );
    expect(response).toMatchObject({ columns: ['group'], results: [[expect.objectContaining({ group_key: 'company:2', group_type_index: 1 })]] });
  });
});
