import { createTestStores, insertJourneys, journeyPersonUuid, type JourneyEvent, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import { parseRetentionFilter, retentionQueryToFilter } from './retention-filter';
import type { RetentionRow } from './retention.query';

/**
 * Retention on the real engine, ported from PostHog's
 * posthog/hogql_queries/insights/test/test_retention_query_runner.py: the same events (its
 * `_date(day, hour=5, month=0)` is 2020-06-(10+day) at 05:00) and the counts it asserts, padded
 * to the matrix PostHog's HogQL runner answers (its `pad`). Each case has its own team.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
let nextTeam = 7_300;

/** PostHog's `_date`: 2020-(6+month)-(10+day) hour:minute, as a date-time without offset (UTC). */
function date(day: number, hour = 5, month = 0, minute = 0): string {
  const at = new Date(Date.UTC(2020, 5 + month, 10 + day, hour, minute));
  return at.toISOString().slice(0, 19);
}

/** PostHog's `pad`: the old triangle rows as the matrix of the HogQL runner. */
const pad = (rows: number[][]): number[][] => {
  const width = Math.max(...rows.map((r) => r.length));
  return rows.map((r) => [...r, ...Array(width - r.length).fill(0)]);
};

/** PostHog's `_create_events`: every other event (from the first) carries `$some_property: value`. */
function journeys(events: [string, string, Record<string, unknown>?][], event = '$pageview', personOf: Record<string, string> = {}) {
  const people: Record<string, JourneyEvent[]> = {};
  events.forEach(([distinctId, timestamp, properties], i) => {
    const person = personOf[distinctId] ?? distinctId;
    (people[person] ??= []).push({
      event,
      timestamp,
      distinctId,
      properties: { ...(i % 2 === 0 ? { $some_property: 'value' } : {}), ...(properties ?? {}) },
    });
  });
  return people;
}

/** test_retention_default's data: person1 (with alias1) and person2 over a week. */
const DEFAULT_EVENTS: [string, string][] = [
  ['person1', date(0)],
  ['person1', date(1)],
  ['person1', date(2)],
  ['person1', date(5)],
  ['alias1', date(5, 9)],
  ['person1', date(6)],
  ['person2', date(1)],
  ['person2', date(2)],
  ['person2', date(3)],
  ['person2', date(6)],
];

/** test_week_interval's data (and test_interval_rounding's). */
const WEEK_EVENTS: [string, string][] = [
  ['person1', date(0)],
  ['person2', date(0)],
  ['person1', date(1)],
  ['person2', date(1)],
  ['person1', date(7)],
  ['person2', date(7)],
  ['person1', date(14)],
  ['person1', date(-6, 5, 1)],
  ['person2', date(-6, 5, 1)],
  ['person2', date(1, 5, 1)],
  ['person1', date(1, 5, 1)],
  ['person2', date(15, 5, 1)],
];

/** test_hour_interval's data. */
const HOUR_EVENTS: [string, number][] = [
  ['person1', 6],
  ['person2', 6],
  ['person1', 7],
  ['person2', 7],
  ['person1', 8],
  ['person2', 8],
  ['person1', 10],
  ['person1', 11],
  ['person2', 11],
  ['person2', 12],
  ['person1', 14],
  ['person2', 16],
];

/** test_rolling_retention's data. */
const ROLLING_EVENTS: [string, string][] = [
  ['person1', date(0)],
  ['person1', date(3)],
  ['person1', date(4)],
  ['person2', date(0)],
  ['person2', date(1)],
  ['person3', date(1)],
  ['person3', date(2)],
  ['person3', date(3)],
  ['person4', date(3)],
  ['person4', date(4)],
  ['person5', date(4)],
];

const DAY_COUNTS = pad([
  [1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0],
  [2, 2, 1, 0, 1, 2, 0, 0, 0, 0],
  [2, 1, 0, 1, 2, 0, 0, 0, 0],
  [1, 0, 0, 1, 0, 0, 0, 0],
  [0, 0, 0, 0, 0, 0, 0],
  [1, 1, 0, 0, 0, 0],
  [2, 0, 0, 0, 0],
  [0, 0, 0, 0],
  [0, 0, 0],
  [0, 0],
  [0],
]);

const WEEK_COUNTS = pad([[2, 2, 1, 2, 2, 0, 1], [2, 1, 2, 2, 0, 1], [1, 1, 1, 0, 0], [2, 2, 0, 1], [2, 0, 1], [0, 0], [1]]);

const HOUR_COUNTS = pad([
  [2, 2, 2, 0, 1, 2, 1, 0, 1, 0, 1],
  [2, 2, 0, 1, 2, 1, 0, 1, 0, 1],
  [2, 0, 1, 2, 1, 0, 1, 0, 1],
  [0, 0, 0, 0, 0, 0, 0, 0],
  [1, 1, 0, 0, 1, 0, 0],
  [2, 1, 0, 1, 0, 1],
  [1, 0, 0, 0, 1],
  [0, 0, 0, 0],
  [1, 0, 0],
  [0, 0],
  [1],
]);

describe('retention (PostHog test_retention_query_runner.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  const project = (id: number, extra: { timezone?: string; week_start_day?: number } = {}) => ({ id, timezone: extra.timezone ?? 'UTC', ...extra });

  /** A RetentionQuery node's rows (PostHog's run_query). */
  const run = async (teamId: number, query: Record<string, unknown>, extra: { timezone?: string; week_start_day?: number } = {}) =>
    (await service.run('RetentionQuery', project(teamId, extra), parseRetentionFilter(retentionQueryToFilter(query)), NOW)).result as RetentionRow[];
  const counts = (rows: RetentionRow[]) => rows.map((r) => r.values.map((v) => v.count));

  /** An ActorsQuery over an InsightActorsQuery of a RetentionQuery (PostHog's run_actors_query). */
  const actors = async (teamId: number, interval: number, query: Record<string, unknown>) => {
    const answer = await service.runNode(
      project(teamId),
      {
        kind: 'ActorsQuery',
        select: ['person', 'appearances'],
        orderBy: ['length(appearances) DESC', 'actor_id'],
        source: { kind: 'InsightActorsQuery', interval, source: { kind: 'RetentionQuery', ...query } },
      },
      NOW,
    );
    return answer!['results'] as [{ id: string }, number[]][];
  };

  const team = async (events: Record<string, JourneyEvent[]>, distinctIds: Record<string, string[]> = {}) => {
    const teamId = nextTeam++;
    await insertJourneys(stores, events, { teamId, distinctIds });
    return teamId;
  };

  beforeAll(async () => {
    stores = await createTestStores('retention');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
  });
  afterAll(() => stores.close());

  test('test_retention_default: without date_to the range ends today; nothing in it', async () => {
    const teamId = await team(journeys(DEFAULT_EVENTS, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const rows = await run(teamId, { retentionFilter: { totalIntervals: 11 } });
    expect(counts(rows)).toEqual(Array.from({ length: 11 }, () => Array(11).fill(0)));
    // The last row is today (NOW's day), the first 10 days before.
    expect(rows[10]!.date).toBe('2024-06-01T00:00:00Z');
    expect(rows[0]!.date).toBe('2024-05-22T00:00:00Z');
  });

  test('test_day_interval: merged distinct ids count once, labels and dates', async () => {
    const teamId = await team(journeys(DEFAULT_EVENTS, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const rows = await run(teamId, { dateRange: { date_to: date(10, 6) }, retentionFilter: { totalIntervals: 11 } });
    expect(rows).toHaveLength(11);
    expect(rows.map((r) => r.label)).toEqual(Array.from({ length: 11 }, (_, i) => `Day ${i}`));
    expect(rows[0]!.date).toBe('2020-06-10T00:00:00Z');
    expect(rows[0]!.values.map((v) => v.label)).toEqual(Array.from({ length: 11 }, (_, i) => `Day ${i}`));
    expect(counts(rows)).toEqual(DAY_COUNTS);
  });

  test('test_month_interval', async () => {
    const events: [string, string][] = [
      ['person1', date(0, 5, -5)],
      ['person2', date(0, 5, -5)],
      ['person1', date(0, 5, -4)],
      ['person2', date(0, 5, -4)],
      ['person1', date(0, 5, -3)],
      ['person2', date(0, 5, -3)],
      ['person1', date(0, 5, -1)],
      ['person1', date(0, 5, 0)],
      ['person2', date(0, 5, 0)],
      ['person2', date(0, 5, 1)],
      ['person1', date(0, 5, 3)],
      ['person2', date(0, 5, 5)],
    ];
    const teamId = await team(journeys(events));
    const rows = await run(teamId, { dateRange: { date_to: date(15, 0, 5) }, retentionFilter: { period: 'Month', totalIntervals: 11 } });
    expect(rows.map((r) => r.label)).toEqual(Array.from({ length: 11 }, (_, i) => `Month ${i}`));
    expect(counts(rows)).toEqual(
      pad([
        [2, 2, 2, 0, 1, 2, 1, 0, 1, 0, 1],
        [2, 2, 0, 1, 2, 1, 0, 1, 0, 1],
        [2, 0, 1, 2, 1, 0, 1, 0, 1],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 1, 0, 0],
        [2, 1, 0, 1, 0, 1],
        [1, 0, 0, 0, 1],
        [0, 0, 0, 0],
        [1, 0, 0],
        [0, 0],
        [1],
      ]),
    );
    expect(rows.map((r) => r.date)).toEqual(Array.from({ length: 11 }, (_, i) => `2020-${String(i + 1).padStart(2, '0')}-01T00:00:00Z`));
  });

  test('test_month_interval_with_person_on_events_v2: a merge makes the two persons one', async () => {
    const events: [string, string][] = [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5].map((month, i) => [i % 2 === 0 ? 'person1' : 'person2', date(0, 5, month)]);
    const teamId = await team(journeys(events));
    // create_person_id_override_by_distinct_id("person1", "person2"): person1's distinct id now points at person2.
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [{ team_id: teamId, distinct_id: 'person1', person_id: journeyPersonUuid('person2', teamId), is_deleted: 0, version: 1 }],
    });
    const rows = await run(teamId, { dateRange: { date_to: date(0, 0, 5) }, retentionFilter: { period: 'Month', totalIntervals: 11 } });
    expect(counts(rows)).toEqual(pad(Array.from({ length: 11 }, (_, i) => Array(11 - i).fill(1))));
  });

  test('test_week_interval: weeks start on Sunday, or on Monday as the project says', async () => {
    const teamId = await team(journeys(WEEK_EVENTS));
    const query = { dateRange: { date_to: date(10, 0, 1) }, retentionFilter: { period: 'Week', totalIntervals: 7 } };
    const sunday = await run(teamId, query);
    expect(sunday.map((r) => r.label)).toEqual(Array.from({ length: 7 }, (_, i) => `Week ${i}`));
    expect(counts(sunday)).toEqual(WEEK_COUNTS);
    expect(sunday.map((r) => r.date)).toEqual([
      '2020-06-07T00:00:00Z',
      '2020-06-14T00:00:00Z',
      '2020-06-21T00:00:00Z',
      '2020-06-28T00:00:00Z',
      '2020-07-05T00:00:00Z',
      '2020-07-12T00:00:00Z',
      '2020-07-19T00:00:00Z',
    ]);
    const monday = await run(teamId, query, { week_start_day: 1 });
    expect(counts(monday)).toEqual(WEEK_COUNTS);
    expect(monday.map((r) => r.date)).toEqual([
      '2020-06-08T00:00:00Z',
      '2020-06-15T00:00:00Z',
      '2020-06-22T00:00:00Z',
      '2020-06-29T00:00:00Z',
      '2020-07-06T00:00:00Z',
      '2020-07-13T00:00:00Z',
      '2020-07-20T00:00:00Z',
    ]);
  });

  test('test_interval_rounding: date_to mid-week covers its whole week', async () => {
    const teamId = await team(journeys(WEEK_EVENTS));
    const rows = await run(teamId, { dateRange: { date_to: date(14, 0, 1) }, retentionFilter: { period: 'Week', totalIntervals: 7 } });
    expect(counts(rows)).toEqual(WEEK_COUNTS);
    expect(rows[0]!.date).toBe('2020-06-07T00:00:00Z');
  });

  test('test_hour_interval', async () => {
    const teamId = await team(journeys(HOUR_EVENTS.map(([p, hour]) => [p, date(0, hour)])));
    const rows = await run(teamId, { dateRange: { date_to: date(0, 16, 0, 13) }, retentionFilter: { period: 'Hour', totalIntervals: 11 } });
    expect(rows.map((r) => r.label)).toEqual(Array.from({ length: 11 }, (_, i) => `Hour ${i}`));
    expect(counts(rows)).toEqual(HOUR_COUNTS);
    expect(rows.map((r) => r.date)).toEqual(Array.from({ length: 11 }, (_, i) => `2020-06-10T${String(6 + i).padStart(2, '0')}:00:00Z`));
  });

  test("test_hour_interval_team_timezone: hours and dates in the project's timezone", async () => {
    // The same wall-clock hours in US/Pacific (UTC-7 in June) as test_hour_interval in UTC.
    const teamId = await team(journeys(HOUR_EVENTS.map(([p, hour]) => [p, `${date(0, hour)}-07:00`])));
    const rows = await run(
      teamId,
      { dateRange: { date_to: date(0, 16, 0, 13) }, retentionFilter: { period: 'Hour', totalIntervals: 11 } },
      { timezone: 'US/Pacific' },
    );
    expect(counts(rows)).toEqual(HOUR_COUNTS);
    expect(rows.map((r) => r.date)).toEqual(Array.from({ length: 11 }, (_, i) => `2020-06-10T${String(6 + i).padStart(2, '0')}:00:00-07:00`));
  });

  test('a day interval in a timezone: an event late in the UTC day belongs to the next local day', async () => {
    // 2020-06-10 23:30 UTC is 2020-06-11 08:30 in Asia/Tokyo: in UTC both events share a day, in Tokyo they do not.
    const teamId = await team({
      p: [
        { event: '$pageview', timestamp: '2020-06-10T01:00:00Z' },
        { event: '$pageview', timestamp: '2020-06-10T23:30:00Z' },
      ],
    });
    const query = { dateRange: { date_to: '2020-06-12' }, retentionFilter: { totalIntervals: 3 } };
    expect(counts(await run(teamId, query))).toEqual([
      [1, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const tokyo = await run(teamId, query, { timezone: 'Asia/Tokyo' });
    expect(counts(tokyo)).toEqual([
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 0],
    ]);
    expect(tokyo[0]!.date).toBe('2020-06-10T00:00:00+09:00');
  });

  test('test_rolling_retention: cumulative counts an actor in every interval up to its furthest return', async () => {
    const teamId = await team(journeys(ROLLING_EVENTS));
    const retentionFilter = {
      cumulative: true,
      totalIntervals: 5,
      targetEntity: { id: null, name: 'All events' },
      returningEntity: { id: null, name: 'All events' },
    };
    const rows = await run(teamId, { dateRange: { date_to: date(5, 6) }, retentionFilter });
    expect(counts(rows)).toEqual(pad([[2, 1, 1, 0, 0], [1, 1, 0, 0], [3, 2, 0], [3, 0], [0]]));
  });

  test('test_rolling_retention_doesnt_double_count_same_user', async () => {
    const teamId = await team(journeys(ROLLING_EVENTS));
    const retentionFilter = {
      cumulative: true,
      totalIntervals: 6,
      targetEntity: { id: null, name: 'All events' },
      returningEntity: { id: null, name: 'All events' },
    };
    const rows = await run(teamId, { dateRange: { date_to: date(5, 6) }, retentionFilter });
    expect(counts(rows)).toEqual(pad([[2, 2, 1, 1, 1, 0], [2, 1, 1, 0, 0], [1, 1, 0, 0], [3, 2, 0], [3, 0], [0]]));
  });

  test('test_rolling_retention_with_minimum_occurrences', async () => {
    const events: [string, string][] = [
      ['person1', date(0)],
      ['person1', date(3)],
      ['person1', date(4)],
      ['person1', date(4)],
      ['person1', date(4)],
      ['person2', date(0)],
      ['person2', date(1)],
      ['person3', date(1)],
      ['person3', date(2)],
      ['person3', date(3)],
      ['person3', date(3)],
      ['person3', date(3)],
      ['person4', date(3)],
      ['person4', date(4)],
      ['person5', date(4)],
    ];
    const teamId = await team(journeys(events));
    const retentionFilter = {
      cumulative: true,
      totalIntervals: 5,
      minimumOccurrences: 3,
      targetEntity: { id: null, name: 'All events' },
      returningEntity: { id: null, name: 'All events' },
    };
    const rows = await run(teamId, { dateRange: { date_to: date(5, 6) }, retentionFilter });
    expect(counts(rows)).toEqual(pad([[2, 1, 1, 0, 0], [1, 1, 0, 0], [3, 1, 0], [3, 0], [0]]));
  });

  test('test_all_events: any event as target', async () => {
    const teamId = await team(journeys(DEFAULT_EVENTS, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const rows = await run(teamId, {
      dateRange: { date_to: date(10, 6) },
      retentionFilter: { totalIntervals: 11, targetEntity: { id: null, name: 'All events' }, returningEntity: { id: '$pageview', type: 'events' } },
    });
    expect(counts(rows)).toEqual(DAY_COUNTS);
  });

  test('test_all_events_with_minimum_occurrences', async () => {
    const teamId = await team(journeys(DEFAULT_EVENTS, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const rows = await run(teamId, {
      dateRange: { date_to: date(10, 6) },
      retentionFilter: {
        totalIntervals: 11,
        targetEntity: { id: null, name: 'All events' },
        returningEntity: { id: '$pageview', type: 'events' },
        minimumOccurrences: 2,
      },
    });
    expect(counts(rows)).toEqual(
      pad([
        [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        [2, 0, 0, 0, 1, 0, 0, 0, 0, 0],
        [2, 0, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [2, 0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0],
        [0, 0],
        [0],
      ]),
    );
  });

  test('test_all_events_target_first_time', async () => {
    const teamId = nextTeam++;
    await insertJourneys(
      stores,
      {
        person1: [
          { event: 'event1', timestamp: date(0), properties: { $some_property: 'value' } },
          { event: 'event1', timestamp: date(1) },
          { event: 'event1', timestamp: date(2), properties: { $some_property: 'value' } },
          { event: 'event2', timestamp: date(2), properties: { $some_property: 'value' } },
          { event: 'event2', timestamp: date(3) },
        ],
      },
      { teamId },
    );
    const query = (returningEntity: Record<string, unknown>) => ({
      dateRange: { date_to: date(2, 6) },
      retentionFilter: { retentionType: 'retention_first_time', totalIntervals: 4, targetEntity: { id: 'event2', type: 'events' }, returningEntity },
    });
    const specific = await run(teamId, query({ id: 'event2', type: 'events' }));
    expect(counts(specific)).toEqual(pad([[0, 0, 0, 0], [0, 0, 0], [0, 0], [1]]));
    expect(await run(teamId, query({ id: null, name: 'All events' }))).toEqual(specific);
  });

  test('first-time retention counts an actor only in the interval of its first-ever target event', async () => {
    // person1 signs up before the range: in recurring retention its in-range sign-up starts a
    // cohort, in first-time retention it never does. person2's first sign-up is in the range.
    const teamId = await team({
      person1: [
        { event: 'sign up', timestamp: date(-5) },
        { event: 'sign up', timestamp: date(1) },
        { event: '$pageview', timestamp: date(2) },
      ],
      person2: [
        { event: 'sign up', timestamp: date(1) },
        { event: 'sign up', timestamp: date(2) },
        { event: '$pageview', timestamp: date(3) },
      ],
    });
    const query = (retentionType: string) => ({
      dateRange: { date_to: date(3) },
      retentionFilter: {
        retentionType,
        totalIntervals: 4,
        targetEntity: { id: 'sign up', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
      },
    });
    expect(counts(await run(teamId, query('retention_recurring')))).toEqual([
      [0, 0, 0, 0],
      [2, 1, 1, 0],
      [1, 1, 0, 0],
      [0, 0, 0, 0],
    ]);
    expect(counts(await run(teamId, query('retention_first_time')))).toEqual([
      [0, 0, 0, 0],
      [1, 0, 1, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
  });

  test('a deleted person counts for no one', async () => {
    const teamId = await team(journeys(DEFAULT_EVENTS, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [{ team_id: teamId, distinct_id: 'person2', person_id: journeyPersonUuid('person2', teamId), is_deleted: 1, version: 1 }],
    });
    const rows = await run(teamId, { dateRange: { date_to: date(10, 6) }, retentionFilter: { totalIntervals: 11 } });
    // person1's cells of test_day_interval alone.
    expect(counts(rows).slice(0, 7)).toEqual(
      pad([
        [1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0],
        [1, 1, 0, 0, 1, 1, 0, 0, 0, 0],
        [1, 0, 0, 1, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0],
        [0, 0],
        [0],
      ]).slice(0, 7),
    );
  });

  test('test_retention_people_basic and test_retention_people_in_period: the actors of a start interval', async () => {
    const events: [string, string][] = [...DEFAULT_EVENTS, ['person2', date(7)]];
    const teamId = await team(journeys(events, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const query = { dateRange: { date_to: date(10, 6) }, retentionFilter: { totalIntervals: 11 } };
    const first = await actors(teamId, 0, query);
    expect(first.map(([person]) => person.id)).toEqual([journeyPersonUuid('person1', teamId)]);
    const third = await actors(teamId, 2, query);
    // Most appearances first.
    expect(third.map(([person]) => person.id)).toEqual([journeyPersonUuid('person2', teamId), journeyPersonUuid('person1', teamId)]);
    expect(third[0]![1]).toEqual([0, 1, 4, 5]);
    expect(third[1]![1]).toEqual([0, 3, 4]);
  });

  test('test_retention_people_search: actors matching a text (an email here)', async () => {
    const teamId = nextTeam++;
    const events: [string, string][] = [...DEFAULT_EVENTS, ['person2', date(7)]];
    await insertJourneys(stores, journeys(events, '$pageview', { alias1: 'person1' }), {
      teamId,
      distinctIds: { person1: ['alias1'] },
      personProperties: { person1: { email: 'person1@test.com' }, person2: { email: 'person2@test.com' } },
    });
    const search = async (text: string) =>
      (
        (await service.runNode(
          project(teamId),
          {
            kind: 'ActorsQuery',
            search: text,
            select: ['person', 'appearances'],
            source: {
              kind: 'InsightActorsQuery',
              interval: 2,
              source: { kind: 'RetentionQuery', dateRange: { date_to: date(10, 6) }, retentionFilter: { totalIntervals: 11 } },
            },
          },
          NOW,
        ))!['results'] as [{ id: string }, number[]][]
      ).map(([person]) => person.id);
    expect(await search('test')).toHaveLength(2);
    expect(await search('PERSON2@')).toEqual([journeyPersonUuid('person2', teamId)]);
    expect(await search('alias1')).toEqual([journeyPersonUuid('person1', teamId)]);
    expect(await search('nobody')).toEqual([]);
  });

  test('test_groups_aggregating and test_groups_in_period: groups instead of persons', async () => {
    const g = (group0?: string, group1?: string) => ({ ...(group0 ? { $group_0: group0 } : {}), ...(group1 ? { $group_1: group1 } : {}) });
    const events: [string, string, Record<string, unknown>?][] = [
      ['person1', date(0), g('org:5', 'company:1')],
      ['person2', date(0), g('org:6')],
      ['person3', date(0)],
      ['person1', date(1), g('org:5')],
      ['person2', date(1), g('org:6')],
      ['person1', date(7), g('org:5')],
      ['person2', date(7), g('org:6')],
      ['person1', date(14), g('org:5')],
      ['person1', date(-6, 5, 1), g('org:5', 'company:1')],
      ['person2', date(-6, 5, 1), g('org:6')],
      ['person2', date(1, 5, 1), g('org:6')],
      ['person1', date(1, 5, 1), g('org:5')],
      ['person2', date(15, 5, 1), g('org:6', 'company:1')],
    ];
    const teamId = await team(journeys(events, '$pageview', { alias1: 'person1' }), { person1: ['alias1'] });
    const query = (index: number) => ({
      dateRange: { date_to: date(10, 0, 1) },
      aggregation_group_type_index: index,
      retentionFilter: { period: 'Week', totalIntervals: 7 },
    });
    expect(counts(await run(teamId, query(0)))).toEqual(WEEK_COUNTS);
    expect(counts(await run(teamId, query(1)))).toEqual(
      pad([[1, 0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 1], [0, 0, 0], [0, 0], [1]]),
    );
    const groups = await actors(teamId, 0, query(0));
    expect(groups.map(([actor]) => actor.id)).toEqual(['org:5', 'org:6']);
    expect(groups.map(([, appearances]) => appearances)).toEqual([
      [0, 1, 2, 3, 4],
      [0, 1, 3, 4, 6],
    ]);
  });
});
