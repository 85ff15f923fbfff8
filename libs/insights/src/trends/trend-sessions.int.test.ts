import { insertJourneys, journeyTimeMs, createTestStores, type JourneyEvent, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { parseTrendFilter } from './trend-filter';
import { createQueryService, type QueryService } from '../runners/query-service';
import { BREAKDOWN_NULL } from '../common/events-sql';

/**
 * Session properties in trends, ported from PostHog's
 * posthog/hogql_queries/insights/trends/test/test_trends.py with their data and asserted
 * numbers. Each PostHog test gets its own team, and all data goes in before the first case.
 */

/** A UUIDv7 with the instant `date` and `n` in its random bits (PostHog's tests use `uuid7(date, n)`). */
function uuid7(date: string, n: number): string {
  const ms = journeyTimeMs(date).toString(16).padStart(12, '0');
  const tail = n.toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7000-8000-${tail}`;
}

/** Sessions s1…s5 of a team (started 2020-01-01, as in the PostHog tests). */
const sessionsOf = (team: number) => [1, 2, 3, 4, 5].map((n) => uuid7('2020-01-01', team * 10 + n));

type Row = [person: string, event: string, session: number, timestamp: string, properties?: Record<string, unknown>, distinctId?: string];

/** Journeys from rows of (person, event, session number, timestamp, properties). */
function journeys(team: number, rows: Row[]): JourneyPeople {
  const sessions = sessionsOf(team);
  const people: JourneyPeople = {};
  for (const [person, event, session, timestamp, properties = {}, distinctId] of rows) {
    const entry: JourneyEvent = { event, timestamp, properties: { $session_id: sessions[session - 1], ...properties } };
    if (distinctId) entry.distinctId = distinctId;
    (people[person] ??= []).push(entry);
  }
  return people;
}

const SOME_VAL = { blabla: { $some_prop: 'some_val' }, blabla2: { $some_prop: 'some_val' } };

/** Sessions of 5, 10, 0 and 15 seconds (test_trends_with_session_property_single_aggregate_math). */
const FOUR_SESSIONS: Row[] = [
  ['blabla', 'sign up before', 1, '2020-01-01 00:06:30'],
  ['blabla', 'sign up', 1, '2020-01-01 00:06:34'],
  ['blabla', 'sign up later', 1, '2020-01-01 00:06:35'],
  ['blabla2', 'sign up', 2, '2020-01-01 00:06:35'],
  ['blabla2', 'sign up', 2, '2020-01-01 00:06:45'],
  ['blabla', 'sign up', 3, '2020-01-01 00:06:45'],
  ['blabla', 'sign up', 4, '2020-01-02 00:06:30'],
  ['blabla', 'sign up', 4, '2020-01-02 00:06:45'],
];

/** test_trends_breakdown_with_session_property_single_aggregate_math_and_breakdown's sessions. */
const BREAKDOWN_SESSIONS: Row[] = [
  ['blabla', 'sign up before', 1, '2020-01-01 00:06:30', { $some_property: 'value1' }],
  ['blabla', 'sign up', 1, '2020-01-01 00:06:34', { $some_property: 'value1' }],
  ['blabla', 'sign up later', 1, '2020-01-01 00:06:35', { $some_property: 'value doesnt matter' }],
  ['blabla2', 'sign up', 2, '2020-01-01 00:06:35', { $some_property: 'value2' }],
  ['blabla2', 'sign up', 2, '2020-01-01 00:06:45', { $some_property: 'value1' }],
  ['blabla', 'sign up', 3, '2020-01-01 00:06:45'],
  ['blabla', 'sign up', 3, '2020-01-01 00:06:46'],
  ['blabla', 'sign up', 4, '2020-01-02 00:06:30', { $some_property: 'value2' }],
  ['blabla', 'sign up', 4, '2020-01-02 00:06:35', { $some_property: 'value2' }],
  ['blabla', 'sign up', 4, '2020-01-02 00:06:45', { $some_property: 'value1' }],
];

const TEAMS = { four: 9101, breakdown: 9103, person: 9104, volume: 9105, volumeBreakdowns: 9106, spanning: 9107, runner: 9108 };

/** test_trends_query_runner.py's `_create_test_events`: each person's events carry its properties. */
function queryRunnerJourneys(): JourneyPeople {
  const people: [string, Record<string, unknown>, string[], string[]][] = [
    [
      'p1',
      { $browser: 'Chrome', prop: 10, bool_field: true },
      ['2020-01-11T12:00:00Z', '2020-01-12T12:00:00Z', '2020-01-13T12:00:00Z', '2020-01-15T12:00:00Z', '2020-01-17T12:00:00Z', '2020-01-19T12:00:00Z'],
      ['2020-01-11T12:00:00Z', '2020-01-12T12:00:00Z', '2020-01-13T12:00:00Z'],
    ],
    ['p2', { $browser: 'Firefox', prop: 20, bool_field: false }, ['2020-01-09T12:00:00Z', '2020-01-12T12:00:00Z'], ['2020-01-13T12:00:00Z']],
    ['p3', { $browser: 'Edge', prop: 30, bool_field: true }, ['2020-01-12T12:00:00Z'], ['2020-01-13T12:00:00Z']],
    ['p4', { $browser: 'Safari', prop: 40, bool_field: false }, ['2020-01-15T12:00:00Z'], ['2020-01-16T12:00:00Z']],
  ];
  return Object.fromEntries(
    people.map(([person, properties, pageviews, pageleaves]) => [
      person,
      [
        ...pageviews.map((timestamp) => ({ event: '$pageview', timestamp, properties })),
        ...pageleaves.map((timestamp) => ({ event: '$pageleave', timestamp, properties })),
      ],
    ]),
  );
}

describe('trends: session properties and histogram bins (PostHog test_trends.py, test_trends_query_runner.py)', () => {
  let stores: TestStores;
  let service: QueryService;

  const run = (team: number, body: Record<string, unknown>, now: string) =>
    service.run('TrendsQuery', { id: team, timezone: 'UTC' }, parseTrendFilter(body), journeyTimeMs(now));
  const medianDuration = { id: 'sign up', math: 'median', math_property: '$session_duration' };

  beforeAll(async () => {
    stores = await createTestStores('trend_sessions');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await Promise.all([
      insertJourneys(stores, journeys(TEAMS.four, FOUR_SESSIONS), {
        teamId: TEAMS.four,
        personProperties: SOME_VAL,
        distinctIds: { blabla: ['anonymous_id'] },
      }),
      insertJourneys(stores, journeys(TEAMS.breakdown, BREAKDOWN_SESSIONS), { teamId: TEAMS.breakdown, personProperties: SOME_VAL }),
      insertJourneys(
        stores,
        journeys(
          TEAMS.person,
          BREAKDOWN_SESSIONS.map((row): Row => (row[1] === 'sign up later' ? [row[0], row[1], row[2], row[3], row[4], 'blasbla'] : row)),
        ),
        { teamId: TEAMS.person, personProperties: { blabla: { $some_prop: 'some_val' }, blabla2: { $some_prop: 'another_val' } } },
      ),
      insertJourneys(
        stores,
        journeys(TEAMS.volume, [...FOUR_SESSIONS, ['blabla', 'sign up', 5, '2020-01-02 00:06:40'], ['blabla', 'sign up', 5, '2020-01-02 00:06:45']]),
        { teamId: TEAMS.volume, personProperties: SOME_VAL },
      ),
      insertJourneys(
        stores,
        journeys(TEAMS.volumeBreakdowns, [
          ['blabla', 'sign up before', 1, '2020-01-01 00:06:30', { $some_property: 'value1' }],
          ['blabla', 'sign up', 1, '2020-01-01 00:06:34', { $some_property: 'value2' }],
          ['blabla', 'sign up', 1, '2020-01-01 00:06:35', { $some_property: 'value2' }],
          ['blabla2', 'sign up', 2, '2020-01-01 00:06:35', { $some_property: 'value2' }],
          ['blabla2', 'sign up', 2, '2020-01-01 00:06:45', { $some_property: 'value1' }],
          ['blabla', 'sign up', 3, '2020-01-01 00:06:45', { $some_property: 'value1' }],
          ['blabla', 'sign up', 4, '2020-01-02 00:06:30', { $some_property: 'value2' }],
          ['blabla', 'sign up', 4, '2020-01-02 00:06:45', { $some_property: 'value2' }],
          ['blabla', 'sign up', 5, '2020-01-02 00:06:40', { $some_property: 'value1' }],
          ['blabla', 'sign up', 5, '2020-01-02 00:06:45', { $some_property: 'value1' }],
        ]),
        { teamId: TEAMS.volumeBreakdowns, personProperties: SOME_VAL },
      ),
      insertJourneys(
        stores,
        journeys(TEAMS.spanning, [
          ['blabla', 'sign up', 1, '2020-01-01 00:06:30'],
          ['blabla', 'sign up', 1, '2020-01-02 00:06:34'],
          ['blabla', 'sign up', 1, '2020-01-03 00:06:30'],
          ['blabla2', 'sign up', 2, '2020-01-01 00:06:35'],
          ['blabla2', 'sign up', 2, '2020-01-05 00:06:35'],
        ]),
        { teamId: TEAMS.spanning, personProperties: SOME_VAL },
      ),
      insertJourneys(stores, queryRunnerJourneys(), { teamId: TEAMS.runner }),
    ]);
  });
  afterAll(() => stores.close());

  it('test_trends_with_session_property_single_aggregate_math (test_trends.py)', async () => {
    // Sessions of 5, 10, 0 and 15 seconds: each counts once, however many sign ups it holds.
    for (const interval of ['week', 'day']) {
      const response = await run(TEAMS.four, { display: 'ActionsTable', interval, events: [medianDuration] }, '2020-01-04T13:00:01Z');
      expect(response.result[0]!.aggregated_value).toBe(7.5);
    }
  });

  it('test_unique_session_with_session_breakdown (test_trends.py)', async () => {
    const response = await run(
      TEAMS.four,
      {
        display: 'ActionsLineGraph',
        interval: 'day',
        events: [{ id: 'sign up', math: 'unique_session' }],
        breakdown: '$session_duration',
        breakdown_type: 'session',
        insight: 'TRENDS',
        breakdown_histogram_bin_count: 3,
        properties: [{ key: '$some_prop', value: 'some_val', type: 'person' }],
        date_from: '-3d',
      },
      '2020-01-04T13:00:01Z',
    );
    expect(response.result.map((item) => [item.breakdown_value, item.count, item.data])).toEqual([
      ['[10,15.01]', 2, [1, 1, 0, 0]],
      ['[0,5]', 1, [1, 0, 0, 0]],
      ['[5,10]', 1, [1, 0, 0, 0]],
    ]);
  });

  it('test_trends_breakdown_with_session_property_single_aggregate_math_and_breakdown (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const list = 'breakdowns' in breakdown;
      const weekly = await run(TEAMS.breakdown, { display: 'ActionsTable', interval: 'week', ...breakdown, events: [medianDuration] }, '2020-01-04T13:00:33Z');
      // value1 has sessions of 5, 10 and 15 seconds; value2 of 10 and 15 (15 counted once); none of 1.
      const values = ['value2', 'value1', BREAKDOWN_NULL].map((v) => (list ? [v] : v));
      expect(weekly.result.map((r) => r.breakdown_value)).toEqual(values);
      expect(weekly.result.map((r) => r.aggregated_value)).toEqual([12.5, 10, 1]);
      const daily = await run(TEAMS.breakdown, { display: 'ActionsTable', interval: 'day', ...breakdown, events: [medianDuration] }, '2020-01-04T13:00:01Z');
      expect(daily.result.map((r) => r.breakdown_value)).toEqual(values);
      expect(daily.result.map((r) => r.aggregated_value)).toEqual([12.5, 10, 1]);
    }
  });

  it('test_trends_person_breakdown_with_session_property_single_aggregate_math_and_breakdown (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_prop', breakdown_type: 'person' }, { breakdowns: [{ type: 'person', property: '$some_prop' }] }]) {
      const response = await run(TEAMS.person, { display: 'ActionsTable', interval: 'week', ...breakdown, events: [medianDuration] }, '2020-01-04T13:00:01Z');
      // another_val has a session of 10 seconds; some_val of 1, 5 and 15.
      const list = 'breakdowns' in breakdown;
      expect(response.result.map((r) => r.breakdown_value).sort()).toEqual(list ? [['another_val'], ['some_val']] : ['another_val', 'some_val']);
      expect(response.result.map((r) => r.aggregated_value).sort((a, b) => a! - b!)).toEqual([5, 10]);
    }
  });

  it('test_trends_with_session_property_total_volume_math (test_trends.py)', async () => {
    const weekly = await run(TEAMS.volume, { interval: 'week', events: [medianDuration] }, '2020-01-04T13:00:01Z');
    expect(weekly.result[0]!.labels).toEqual(['28-Dec-2019', '29-Dec-2019 – 4-Jan-2020']);
    expect(weekly.result[0]!.data).toEqual([0, 5]);
    const daily = await run(TEAMS.volume, { interval: 'day', events: [medianDuration] }, '2020-01-04T13:00:01Z');
    expect(daily.result[0]!.labels).toEqual([
      '28-Dec-2019',
      '29-Dec-2019',
      '30-Dec-2019',
      '31-Dec-2019',
      '1-Jan-2020',
      '2-Jan-2020',
      '3-Jan-2020',
      '4-Jan-2020',
    ]);
    expect(daily.result[0]!.data).toEqual([0, 0, 0, 0, 5, 10, 0, 0]);
  });

  it('test_trends_with_session_property_total_volume_math_with_breakdowns (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const values = 'breakdowns' in breakdown ? [['value2'], ['value1']] : ['value2', 'value1'];
      const weekly = await run(TEAMS.volumeBreakdowns, { ...breakdown, interval: 'week', events: [medianDuration] }, '2020-01-04T13:00:01Z');
      // value1 has sessions of 0, 5 and 10 seconds; value2 of 5, 10 and 15.
      expect(weekly.result.map((r) => r.breakdown_value)).toEqual(values);
      expect(weekly.result[0]!.labels).toEqual(['28-Dec-2019', '29-Dec-2019 – 4-Jan-2020']);
      expect(weekly.result.map((r) => r.data)).toEqual([
        [0, 10],
        [0, 5],
      ]);
      const daily = await run(TEAMS.volumeBreakdowns, { ...breakdown, interval: 'day', events: [medianDuration] }, '2020-01-04T13:00:05Z');
      expect(daily.result.map((r) => r.breakdown_value)).toEqual(values);
      expect(daily.result.map((r) => r.data)).toEqual([
        [0, 0, 0, 0, 7.5, 15, 0, 0],
        [0, 0, 0, 0, 5, 5, 0, 0],
      ]);
    }
  });

  it('test_trends_with_session_property_total_volume_math_with_sessions_spanning_multiple_intervals (test_trends.py)', async () => {
    const response = await run(TEAMS.spanning, { interval: 'day', events: [medianDuration] }, '2020-01-06T13:00:01Z');
    expect(response.result[0]!.labels).toEqual([
      '30-Dec-2019',
      '31-Dec-2019',
      '1-Jan-2020',
      '2-Jan-2020',
      '3-Jan-2020',
      '4-Jan-2020',
      '5-Jan-2020',
      '6-Jan-2020',
    ]);
    // A session counts in each interval it has a sign up in, with its whole duration.
    const day = 24 * 60 * 60;
    expect(response.result[0]!.data).toEqual([0, 0, 3 * day, 2 * day, 2 * day, 0, 4 * day, 0]);
  });

  const histogramQuery = (series: Record<string, unknown>) => ({
    date_from: '2020-01-09',
    date_to: '2020-01-20',
    interval: 'day',
    events: [series],
    breakdown_type: 'event',
    breakdown: 'prop',
    breakdown_histogram_bin_count: 4,
  });

  it('test_trends_breakdowns_histogram (test_trends_query_runner.py)', async () => {
    const response = await run(TEAMS.runner, histogramQuery({ id: '$pageview' }), '2020-01-20T12:00:00Z');
    const labels = ['[10,17.5]', '[17.5,25]', '[25,32.5]', '[32.5,40.01]'];
    expect(response.result.map((r) => r.breakdown_value)).toEqual(labels);
    expect(response.result.map((r) => r.label)).toEqual(labels);
    expect(response.result.map((r) => r.data)).toEqual([
      [0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0],
      [1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
      [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
      [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
    ]);
  });

  it('test_trends_breakdowns_session_duration_histogram (test_trends_query_runner.py)', async () => {
    const response = await run(TEAMS.runner, histogramQuery({ id: '$pageview', math: 'avg', math_property: '$session_duration' }), '2020-01-20T12:00:00Z');
    const labels = ['[10,17.5]', '[17.5,25]', '[25,32.5]', '[32.5,40.01]'];
    expect(response.result.map((r) => r.breakdown_value)).toEqual(labels);
    expect(response.result.map((r) => r.label)).toEqual(labels);
  });
});
