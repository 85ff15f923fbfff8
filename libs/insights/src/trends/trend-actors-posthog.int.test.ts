import { createTestStores, insertJourneys, journeyPersonUuid, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { QueryFilterError } from '../common/query-filter-error';
import { createQueryService, type QueryService } from '../runners/query-service';

/**
 * PostHog's posthog/hogql_queries/insights/trends/test/test_trends_persons.py, ported with its
 * data and numbers: the actors behind a trend's point (an InsightActorsQuery over a TrendsQuery in
 * an ActorsQuery). Each case names its PostHog test. PostHog compares the first rows in order of
 * event count; here each point's actors are compared as {distinct id: event count}, since
 * Sightline orders them by id.
 *
 * Where Sightline differs: a `day` must be a bucket of the trend's range (PostHog reads any day),
 * so each dataset is read at a "now" whose `-7d` range holds the days asked; "other" lists the
 * actors of the values the trend folds into it (PostHog's own test_trends_breakdown_others_persons
 * is skipped there, and its test_trends_filter_by_other asserts what both give for its data).
 */
const ev = (event: string, timestamp: string, properties: Record<string, unknown> = {}) => ({ event, timestamp, properties });

/** test_trends_persons.py `_create_events`. */
const EVENTS: JourneyPeople = {
  person1: [
    ev('$pageview', '2023-04-29 16:00:00', { $browser: 'Chrome' }),
    ev('$pageleave', '2023-04-29 17:00:00', { $browser: 'Chrome' }),
    ev('$pageview', '2023-05-01 16:00:00', { $browser: 'Chrome', some_property: 20 }),
    ev('$pageview', '2023-05-01 17:00:00', { $browser: 'Chrome' }),
    ev('$pageview', '2023-05-01 18:00:00', { $browser: 'Chrome' }),
    ev('$pageview', '2023-05-06 16:00:00', { some_property: 20 }),
  ],
  person2: [
    ev('$pageview', '2023-04-29 17:00:00', { $browser: 'Safari' }),
    ev('$pageview', '2023-04-29 18:00:00', { $browser: 'Safari' }),
    ev('$pageview', '2023-05-01 16:00:00', { $browser: 'Safari', some_property: 22 }),
    ev('$pageview', '2023-05-01 17:00:00', { $browser: 'Safari' }),
  ],
  person3: [ev('$pageview', '2023-05-01 16:00:00', { $browser: 'Safari' })],
};
const COUNTRIES = { person1: { $geoip_country_code: 'US' }, person2: { $geoip_country_code: 'DE' }, person3: { $geoip_country_code: 'DE' } };

/** `_create_events`' other team: person4's pageviews, on every day around the range, never listed. */
const OTHER_TEAM: JourneyPeople = {
  person4: Array.from({ length: 6 }, (_, i) => [
    ev('$pageview', `2023-04-${30 - i} 16:00:00`, { some_property: 20 }),
    ev('$pageview', `2023-05-0${i + 1} 16:00:00`, { some_property: 20 }),
  ]).flat(),
};

/** `_create_numeric_events`. */
const NUMERIC: JourneyPeople = {
  person1: [
    ev('$pageview', '2023-04-29 16:00:00', { some_property: 20 }),
    ev('$pageview', '2023-05-01 16:00:00', { some_property: 40 }),
    ev('$pageview', '2023-05-01 18:00:00', { some_property: 0 }),
    ev('$pageview', '2023-05-06 16:00:00', { some_property: 20 }),
  ],
  person2: [ev('$pageview', '2023-04-29 17:00:00', { some_property: 60 }), ev('$pageview', '2023-05-01 17:00:00', { some_property: 80 })],
  person3: [ev('$pageview', '2023-05-01 16:00:00', { $browser: 'Safari' })],
};

/** test_trends_math_weekly_active_persons: one person a day, 2023-04-17 to 04-23. */
const WEEKLY: JourneyPeople = Object.fromEntries(
  Array.from({ length: 7 }, (_, i) => [`person_2023-04-${17 + i}`, [ev('$pageview', `2023-04-${17 + i} 16:00:00`)]]),
);

/** test_trends_math_group_persons and test_trends_math_group_persons_filters_empty. */
const GROUPS: JourneyPeople = {
  person1: [
    ev('$pageview', '2023-05-01 16:00:00', { $group_0: 'Hooli' }),
    ev('$pageview', '2023-05-01 17:00:00', { $group_0: 'Hooli' }),
    ev('$pageview', '2023-05-01 18:00:00', { $group_0: 'Pied Piper' }),
  ],
};
const GROUPS_EMPTY: JourneyPeople = {
  person1: [ev('$pageview', '2023-05-01 16:00:00', { $group_0: 'Hooli' }), ev('$pageview', '2023-05-01 17:00:00')],
};

/** test_trends_breakdown_by_boolean. */
const BOOLEAN: JourneyPeople = {
  person1: [ev('$pageview', '2023-04-29 16:00:00', { bool: true })],
  person2: [ev('$pageview', '2023-04-29 17:00:00', { bool: false })],
  person3: [ev('$pageview', '2023-04-29 17:00:00')],
};

const DATASETS = {
  events: { people: EVENTS, personProperties: COUNTRIES },
  otherTeam: { people: OTHER_TEAM, personProperties: { person4: { $geoip_country_code: 'US' } } },
  numeric: { people: NUMERIC, personProperties: COUNTRIES },
  weekly: { people: WEEKLY, personProperties: {} },
  groups: { people: GROUPS, personProperties: {} },
  groupsEmpty: { people: GROUPS_EMPTY, personProperties: {} },
  boolean: { people: BOOLEAN, personProperties: {} },
};
type Dataset = keyof typeof DATASETS;

/** When each case runs: its `-7d` range holds 2023-04-29 to 05-06. */
const NOW = Date.parse('2023-05-06T20:00:00Z');

describe('trend actors as PostHog lists them (test_trends_persons.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  const teams = {} as Record<Dataset, number>;
  const cohorts: Record<string, number> = {};

  beforeAll(async () => {
    stores = await createTestStores('trendactorsph');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const name of Object.keys(DATASETS) as Dataset[]) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_trendactorsph_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
    }
    for (const name of Object.keys(DATASETS) as Dataset[])
      await insertJourneys(stores, DATASETS[name].people, { teamId: teams[name], personProperties: DATASETS[name].personProperties });
    // test_trends_persons.py `_create_cohort`: dynamic cohorts on the persons' country.
    for (const country of ['US', 'DE']) {
      const properties = { type: 'OR', values: [{ type: 'AND', values: [{ key: '$geoip_country_code', value: country, type: 'person' }] }] };
      const [row] = await stores.db.query<{ id: number }>('INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, $2, false, $3) RETURNING id', [
        teams.events,
        `${country} users`,
        JSON.stringify({ properties }),
      ]);
      cohorts[country] = row!.id;
    }
  });
  afterAll(() => stores.close());

  const trendsQuery = (extra: Record<string, unknown> = {}) => ({
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    dateRange: { date_from: '-7d' },
    ...extra,
  });
  /** PostHog's get_actors: the point's actors as {distinct id (or group key): event count}. */
  const actors = async (dataset: Dataset, source: Record<string, unknown>, point: Record<string, unknown>, now = NOW) => {
    const answer = (await service.runNode(
      { id: teams[dataset], timezone: 'UTC' },
      { kind: 'ActorsQuery', select: ['id', 'event_count'], source: { kind: 'InsightActorsQuery', source, ...point } },
      now,
    )) as { results: [string, number][] };
    const names = new Map(Object.keys(DATASETS[dataset].people).map((key) => [journeyPersonUuid(key, teams[dataset]), key]));
    return Object.fromEntries(answer.results.map(([id, count]) => [names.get(id) ?? id, count]));
  };

  it('test_trends_single_series_persons', async () => {
    expect(await actors('events', trendsQuery(), { day: '2023-04-29' })).toEqual({ person2: 2, person1: 1 });
  });

  it('test_trends_multiple_series_persons', async () => {
    const source = trendsQuery({
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: '$pageleave' },
      ],
    });
    expect(await actors('events', source, { day: '2023-04-29' })).toEqual({ person2: 2, person1: 1 });
    expect(await actors('events', source, { day: '2023-04-29', series: 1 })).toEqual({ person1: 1 });
  });

  it('test_trends_event_breakdown_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: '$browser' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 'Safari' })).toEqual({ person2: 2, person3: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 'Firefox' })).toEqual({});
  });

  it('test_trends_person_breakdown_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: '$geoip_country_code', breakdown_type: 'person' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 'DE' })).toEqual({ person2: 2, person3: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 'UK' })).toEqual({});
  });

  it('test_trends_filter_by_other: "other" lists the actors of the values past breakdown_limit', async () => {
    // some_property over the range: 20 (2 events) is kept; 22 and the null sentinel are "other".
    const one = trendsQuery({ breakdownFilter: { breakdowns: [{ property: 'some_property', type: 'event' }], breakdown_limit: 1 } });
    expect(await actors('events', one, { day: '2023-05-01', breakdown: ['$$_posthog_breakdown_other_$$'] })).toEqual({ person1: 2, person2: 2, person3: 1 });
    const two = trendsQuery({
      breakdownFilter: {
        breakdowns: [
          { property: 'some_property', type: 'event' },
          { property: '$browser', type: 'event' },
        ],
        breakdown_limit: 1,
      },
    });
    const other = ['$$_posthog_breakdown_other_$$', '$$_posthog_breakdown_other_$$'];
    expect(Object.keys(await actors('events', two, { day: '2023-05-01', breakdown: other })).sort()).toEqual(['person1', 'person2', 'person3']);
  });

  it('test_trends_breakdown_others_persons (skipped in PostHog): "other" without the kept value', async () => {
    // By browser over the range Safari has 5 pageviews and Chrome 4: with a limit of 1 Chrome is
    // "other" (PostHog's skipped test expects Chrome kept, which its own ranking does not do).
    const source = trendsQuery({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } });
    expect(await actors('events', source, { day: '2023-04-29', breakdown: '$$_posthog_breakdown_other_$$' })).toEqual({ person1: 1 });
    expect(await actors('events', source, { day: '2023-04-29', breakdown: 'Safari' })).toEqual({ person2: 2 });
    // A value folded into "other" still lists its own actors, as in PostHog.
    expect(await actors('events', source, { day: '2023-04-29', breakdown: 'Chrome' })).toEqual({ person1: 1 });
  });

  it('test_trends_breakdown_null_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } });
    expect(await actors('events', source, { day: '2023-05-06', breakdown: 'Chrome' })).toEqual({});
    expect(await actors('events', source, { day: '2023-05-06', breakdown: '$$_posthog_breakdown_null_$$' })).toEqual({ person1: 1 });
  });

  it('test_trends_breakdown_hogql_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: 'properties.some_property', breakdown_type: 'hogql' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 20 })).toEqual({ person1: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 10 })).toEqual({});
  });

  it('test_trends_cohort_breakdown_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: [cohorts['DE']], breakdown_type: 'cohort' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: cohorts['DE'] })).toEqual({ person2: 2, person3: 1 });
  });

  it('test_trends_multi_cohort_breakdown_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: [cohorts['US'], cohorts['DE']], breakdown_type: 'cohort' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: cohorts['US'] })).toEqual({ person1: 3 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: cohorts['DE'] })).toEqual({ person2: 2, person3: 1 });
  });

  it('test_trends_all_cohort_breakdown_persons (_subquery, _leftjoin, _leftjoin_conjoined: one reading here)', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdown: [cohorts['US'], 'all'], breakdown_type: 'cohort' } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: cohorts['US'] })).toEqual({ person1: 3 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: 'all' })).toEqual({ person1: 3, person2: 2, person3: 1 });
    // A cohort the breakdown does not name is refused.
    await expect(actors('events', source, { day: '2023-05-01', breakdown: cohorts['DE'] })).rejects.toBeInstanceOf(QueryFilterError);
  });

  it('test_trends_math_weekly_active_persons', async () => {
    const source = trendsQuery({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }] });
    // A `-7d` range that holds 2023-04-28: read on 2023-05-01.
    expect(await actors('weekly', source, { day: '2023-04-28' }, Date.parse('2023-05-01T20:00:00Z'))).toEqual({
      'person_2023-04-22': 1,
      'person_2023-04-23': 1,
    });
  });

  it('test_trends_math_group_persons', async () => {
    const source = trendsQuery({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'unique_group', math_group_type_index: 0 }] });
    expect(await actors('groups', source, { day: '2023-05-01' })).toEqual({ Hooli: 2, 'Pied Piper': 1 });
  });

  it('test_trends_math_group_persons_filters_empty', async () => {
    const source = trendsQuery({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'unique_group', math_group_type_index: 0 }] });
    expect(await actors('groupsEmpty', source, { day: '2023-05-01' })).toEqual({ Hooli: 1 });
  });

  it('test_trends_total_value_persons', async () => {
    const source = trendsQuery({ trendsFilter: { display: 'BoldNumber' } });
    expect(await actors('events', source, {}, Date.parse('2023-05-01T20:00:00Z'))).toEqual({ person1: 4, person2: 4, person3: 1 });
  });

  it('test_trends_compare_persons: the previous period’s bucket at the same place', async () => {
    const source = trendsQuery({ trendsFilter: {}, compareFilter: { compare: true } });
    expect(await actors('events', source, { day: '2023-05-06', compare: 'current' })).toEqual({ person1: 1 });
    expect(await actors('events', source, { day: '2023-05-06', compare: 'previous' })).toEqual({ person2: 2, person1: 1 });
  });

  it('test_trends_event_multiple_breakdowns_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdowns: [{ property: '$browser' }] } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['Safari'] })).toEqual({ person2: 2, person3: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['Firefox'] })).toEqual({});
  });

  it('test_trends_person_multiple_breakdown_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdowns: [{ property: '$geoip_country_code', type: 'person' }] } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['DE'] })).toEqual({ person2: 2, person3: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['UK'] })).toEqual({});
  });

  it('test_trends_multiple_breakdown_null_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdowns: [{ property: '$browser' }], breakdown_limit: 1 } });
    expect(await actors('events', source, { day: '2023-05-06', breakdown: ['Chrome'] })).toEqual({});
    expect(await actors('events', source, { day: '2023-05-06', breakdown: ['$$_posthog_breakdown_null_$$'] })).toEqual({ person1: 1 });
  });

  it('test_trends_multiple_breakdowns_hogql_persons', async () => {
    const source = trendsQuery({ breakdownFilter: { breakdowns: [{ property: 'properties.some_property', type: 'hogql' }], breakdown_limit: 1 } });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['20'] })).toEqual({ person1: 1 });
    expect(await actors('events', source, { day: '2023-05-01', breakdown: ['10'] })).toEqual({});
  });

  for (const [name, breakdownFilter, wrap] of [
    ['test_trends_breakdown_filter_by_range', { breakdown: 'some_property', breakdown_histogram_bin_count: 4 }, (v: string) => v],
    ['test_trends_multiple_breakdowns_filter_by_range', { breakdowns: [{ property: 'some_property', histogram_bin_count: 4 }] }, (v: string) => [v]],
  ] as const) {
    it(name, async () => {
      const source = trendsQuery({ breakdownFilter });
      const at = (value: string) => actors('numeric', source, { day: '2023-05-01', breakdown: wrap(value) });
      // The bin [0,20) holds person1's 0, not 20.
      expect(await at('[0,20]')).toEqual({ person1: 1 });
      expect(Object.keys(await at('["",""]')).sort()).toEqual(['person1', 'person2', 'person3']);
      expect(await at('$$_posthog_breakdown_null_$$')).toEqual({ person3: 1 });
      for (const invalid of ['["str","str"]', '["str",10]', '[10,false]', '[{},{}]']) await expect(at(invalid)).rejects.toThrow(/valid float or int values/);
    });
  }

  it('test_trends_breakdown_by_boolean', async () => {
    const multiple = trendsQuery({ breakdownFilter: { breakdowns: [{ property: 'bool' }], breakdown_limit: 1 } });
    for (const value of ['true', 'false', '$$_posthog_breakdown_null_$$'])
      expect(Object.keys(await actors('boolean', multiple, { day: '2023-04-29', breakdown: [value] }))).toHaveLength(1);
    const single = trendsQuery({ breakdownFilter: { breakdown: 'bool', breakdown_limit: 1 } });
    expect(await actors('boolean', single, { day: '2023-04-29', breakdown: 'true' })).toEqual({ person1: 1 });
    expect(await actors('boolean', single, { day: '2023-04-29', breakdown: 'false' })).toEqual({ person2: 1 });
    expect(await actors('boolean', single, { day: '2023-04-29', breakdown: '$$_posthog_breakdown_null_$$' })).toEqual({ person3: 1 });
  });

  it('test_trends_math_first_time_ever: those whose first pageview is in the bucket', async () => {
    const source = trendsQuery({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'first_time_for_user' }] });
    const expected: Record<string, string[]> = { '2023-04-29': ['person1', 'person2'], '2023-05-01': ['person3'] };
    for (const day of ['2023-04-29', '2023-04-30', '2023-05-01', '2023-05-02', '2023-05-03', '2023-05-04', '2023-05-05', '2023-05-06'])
      expect([day, Object.keys(await actors('events', source, { day })).sort()]).toEqual([day, expected[day] ?? []]);
    // A day outside the trend's range is refused (PostHog answers nobody).
    await expect(actors('events', source, { day: '2023-04-25' })).rejects.toBeInstanceOf(QueryFilterError);
  });
});
