import { createTestStores, insertCohort, insertJourneys, journeyPersonUuid, type JourneyEvent, type TestStores } from '@sightline/testkit';
import { insertAction } from '../repositories/actions.repository';
import { createQueryService, type QueryService } from '../runners/query-service';
import { parseRetentionFilter, retentionQueryToFilter } from './retention-filter';
import type { RetentionRow } from './retention.query';

/**
 * Retention's entities, filters and breakdowns on the real engine, ported from PostHog's
 * posthog/hogql_queries/insights/test/test_retention_query_runner.py with its data (`_date(day,
 * hour=5)` is 2020-06-(10+day) 05:00 UTC) and the counts it asserts, padded to the matrix its
 * HogQL runner answers. Each case has its own team; cases with actions have their own project.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
let nextTeam = 7_400;

function date(day: number, hour = 5, month = 0): string {
  return new Date(Date.UTC(2020, 5 + month, 10 + day, hour)).toISOString().slice(0, 19);
}

const pad = (rows: number[][]): number[][] => {
  const width = Math.max(...rows.map((r) => r.length));
  return rows.map((r) => [...r, ...Array(width - r.length).fill(0)]);
};

type Row = [string, string, Record<string, unknown>?];

/** PostHog's `_create_events`: every other event of one call (from the first) carries `$some_property: value`. */
function events(rows: Row[], event = '$pageview'): [string, JourneyEvent][] {
  return rows.map(([distinctId, timestamp, properties], i) => [
    distinctId,
    { event, timestamp, distinctId, properties: { ...(i % 2 === 0 ? { $some_property: 'value' } : {}), ...(properties ?? {}) } },
  ]);
}

/** The events by person (`alias1` is person1's), each person created with its properties. */
function byPerson(all: [string, JourneyEvent][]): Record<string, JourneyEvent[]> {
  const people: Record<string, JourneyEvent[]> = {};
  for (const [distinctId, event] of all) (people[distinctId === 'alias1' ? 'person1' : distinctId] ??= []).push(event);
  return people;
}

/** test_retention_default's pageviews. */
const DEFAULT_ROWS: Row[] = [
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

/** PostHog's `_create_first_time_retention_events`. */
function firstTimeRetentionEvents(): [string, JourneyEvent][] {
  return [
    ...events(
      [
        ['shouldnt_include', date(-5)],
        ['shouldnt_include', date(-1)],
        ['person1', date(-1)],
        ['person1', date(1)],
        ['person1', date(2)],
        ['person1', date(3)],
        ['person1', date(4)],
        ['person2', date(-1)],
      ],
      '$user_signed_up',
    ),
    ...events(DEFAULT_ROWS),
    ...events([['person3', date(0)]], '$user_signed_up'),
    ...events([
      ['person3', date(1)],
      ['person3', date(3)],
      ['person3', date(4)],
      ['person3', date(5)],
    ]),
    ...events([['person4', date(2)]], '$user_signed_up'),
    ...events([
      ['person4', date(3)],
      ['person4', date(5)],
    ]),
  ];
}

const SIGNED_UP = { id: '$user_signed_up', name: '$user_signed_up', type: 'events' };
const PAGEVIEW = { id: '$pageview', name: '$pageview', type: 'events' };

describe('retention entities, filters and breakdowns (PostHog test_retention_query_runner.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  let organizationId: string;

  type Project = { id: number; timezone?: string; test_account_filters?: unknown };
  const run = async (project: Project, query: Record<string, unknown>) =>
    (await service.run('RetentionQuery', { timezone: 'UTC', ...project }, parseRetentionFilter(retentionQueryToFilter(query)), NOW)).result as RetentionRow[];
  const counts = (rows: RetentionRow[]) => rows.map((r) => r.values.map((v) => v.count));
  const countsOf = (rows: RetentionRow[], value: string) => counts(rows.filter((r) => r.breakdown_value === value));
  const actors = async (project: Project, interval: number, query: Record<string, unknown>, breakdown?: string[]) => {
    const answer = await service.runNode(
      { timezone: 'UTC', ...project },
      {
        kind: 'ActorsQuery',
        select: ['person', 'appearances'],
        source: { kind: 'InsightActorsQuery', interval, breakdown, source: { kind: 'RetentionQuery', ...query } },
      },
      NOW,
    );
    return answer!['results'] as [{ id: string; distinct_ids: string[] }, number[]][];
  };

  /** A team of its own with these events (persons with these properties). */
  const team = async (all: [string, JourneyEvent][], personProperties: Record<string, Record<string, unknown>> = {}, teamId = nextTeam++) => {
    await insertJourneys(stores, byPerson(all), { teamId, personProperties, distinctIds: { person1: ['alias1'] } });
    return { id: teamId };
  };

  /** A project of its own (actions belong to one). */
  const newProject = async () =>
    (
      await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'retention', 'phc_retention_' || gen_random_uuid()) RETURNING id",
        [organizationId],
      )
    )[0]!.id;

  beforeAll(async () => {
    stores = await createTestStores('retention_filters');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    organizationId = (await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1'))[0]!.organization_id;
  });
  afterAll(() => stores.close());

  test('test_retention_multiple_events: a target event other than the returning one', async () => {
    const project = await team([
      ...events(
        [
          ['person1', date(0)],
          ['person1', date(1)],
          ['person1', date(2)],
          ['person1', date(3)],
          ['person2', date(0)],
          ['person2', date(1)],
          ['person2', date(2)],
          ['person2', date(3)],
          ['person3', date(5)],
        ],
        '$some_event',
      ),
      ...events([
        ['person1', date(5)],
        ['person1', date(6)],
        ['person2', date(5)],
      ]),
    ]);
    const rows = await run(project, {
      dateRange: { date_to: date(6, 6) },
      retentionFilter: {
        period: 'Day',
        totalIntervals: 7,
        targetEntity: { id: '$some_event', name: '$some_event', type: 'events' },
        returningEntity: PAGEVIEW,
      },
    });
    expect(counts(rows)).toEqual(pad([[2, 0, 0, 0, 0, 2, 1], [2, 0, 0, 0, 2, 1], [2, 0, 0, 2, 1], [2, 0, 2, 1], [0, 0, 0], [1, 0], [0]]));

    // test_retention_any_event: the same data, any event both ways.
    const any = await run(project, {
      dateRange: { date_to: date(6, 6) },
      retentionFilter: { period: 'Day', totalIntervals: 7, targetEntity: { id: null, type: 'events' }, returningEntity: { id: null, type: 'events' } },
    });
    expect(counts(any)).toEqual(pad([[2, 2, 2, 2, 0, 2, 1], [2, 2, 2, 0, 2, 1], [2, 2, 0, 2, 1], [2, 0, 2, 1], [0, 0, 0], [3, 1], [1]]));
  });

  test('test_retention_event_action and test_retention_action_start_point: actions as entities', async () => {
    const teamId = await newProject();
    const signups: Row[] = [
      ['person1', date(0)],
      ['person1', date(1)],
      ['person1', date(2)],
      ['person1', date(3)],
      ['person2', date(0)],
      ['person2', date(1)],
      ['person2', date(2)],
      ['person2', date(3)],
    ];
    await team(
      [
        ...events(signups, 'sign up'),
        ...events(
          [
            ['person1', date(3)],
            ['person2', date(5)],
          ],
          '$some_event',
        ),
      ],
      {},
      teamId,
    );
    const action = await insertAction(stores.db, teamId, { name: 'sign up', steps: [{ event: 'sign up' }] }, null);
    const rows = await run(
      { id: teamId },
      {
        dateRange: { date_to: date(6, 0) },
        retentionFilter: {
          totalIntervals: 7,
          targetEntity: { id: action.id, name: 'sign up', type: 'actions' },
          returningEntity: { id: '$some_event', name: '$some_event', type: 'events' },
        },
      },
    );
    expect(rows[0]!.date).toBe('2020-06-10T00:00:00Z');
    expect(counts(rows)).toEqual(pad([[2, 0, 0, 1, 0, 1, 0], [2, 0, 1, 0, 1, 0], [2, 1, 0, 1, 0], [2, 0, 1, 0], [0, 0, 0], [0, 0], [0]]));

    const startTeam = await newProject();
    await team(events(DEFAULT_ROWS, 'sign up'), {}, startTeam);
    const startAction = await insertAction(stores.db, startTeam, { name: 'sign up', steps: [{ event: 'sign up' }] }, null);
    const entity = { id: startAction.id, name: 'sign up', type: 'actions' };
    const start = await run(
      { id: startTeam },
      { dateRange: { date_to: date(6, 0) }, retentionFilter: { period: 'Day', totalIntervals: 7, targetEntity: entity, returningEntity: entity } },
    );
    expect(counts(start)).toEqual(pad([[1, 1, 1, 0, 0, 1, 1], [2, 2, 1, 0, 1, 2], [2, 1, 0, 1, 2], [1, 0, 0, 1], [0, 0, 0], [1, 1], [2]]));
  });

  test('test_retention_with_user_properties_via_action: an action step with a person filter', async () => {
    const teamId = await newProject();
    await team(events(DEFAULT_ROWS), { person1: { email: 'person1@test.com' }, person2: { email: 'person2@test.com' } }, teamId);
    const action = await insertAction(
      stores.db,
      teamId,
      {
        name: 'person1 views',
        steps: [{ event: '$pageview', properties: [{ key: 'email', value: 'person1@test.com', type: 'person' }] }, { event: 'non_matching_event' }],
      },
      null,
    );
    const rows = await run(
      { id: teamId },
      {
        dateRange: { date_to: date(6, 0) },
        retentionFilter: { totalIntervals: 7, targetEntity: { id: action.id, type: 'actions' }, returningEntity: PAGEVIEW },
      },
    );
    expect(counts(rows)).toEqual(pad([[1, 1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1], [1, 0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0], [1, 1], [1]]));
  });

  test('test_retention_with_properties: filters every event', async () => {
    const project = await team(events(DEFAULT_ROWS));
    const rows = await run(project, {
      dateRange: { date_to: date(10, 0) },
      retentionFilter: { totalIntervals: 11 },
      properties: { type: 'AND', values: [{ type: 'AND', values: [{ key: '$some_property', operator: 'exact', value: ['value'] }] }] },
    });
    expect(counts(rows)).toEqual(
      pad([
        [1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        [1, 0, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0],
        [0, 0],
        [0],
      ]),
    );
  });

  test('test_retention_with_properties_on_start_event (and for first time): filters on the target entity', async () => {
    const filter = [{ key: '$target_event_property', type: 'event', operator: 'exact', value: ['value'] }];
    const recurring = await team(events(DEFAULT_ROWS.map(([d, t], i) => (i === 0 ? [d, t, { $target_event_property: 'value' }] : [d, t]))));
    const rows = await run(recurring, {
      dateRange: { date_to: date(10, 0) },
      retentionFilter: { targetEntity: { id: '$pageview', properties: filter }, totalIntervals: 11 },
    });
    expect(counts(rows)[0]).toEqual([1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0]);
    expect(
      counts(rows)
        .slice(1)
        .flat()
        .every((n) => n === 0),
    ).toBe(true);

    const firstTime = await team(events(DEFAULT_ROWS.map(([d, t], i) => (i === 2 || i === 3 ? [d, t, { $target_event_property: 'value' }] : [d, t]))));
    const first = await run(firstTime, {
      dateRange: { date_to: date(10, 0) },
      retentionFilter: { retentionType: 'retention_first_time', totalIntervals: 11, targetEntity: { id: '$pageview', properties: filter } },
    });
    expect(counts(first)[2]).toEqual([1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]);
    expect(
      counts(first)
        .filter((_, i) => i !== 2)
        .flat()
        .every((n) => n === 0),
    ).toBe(true);
  });

  test('test_retention_with_properties_on_return_event (and with first time): filters on the returning entity', async () => {
    const filter = [{ key: '$target_event_property', type: 'event', operator: 'exact', value: ['value'] }];
    const recurring = await team(events(DEFAULT_ROWS.map(([d, t], i) => (i === 1 ? [d, t, { $target_event_property: 'value' }] : [d, t]))));
    const rows = await run(recurring, {
      dateRange: { date_to: date(10, 0) },
      retentionFilter: { totalIntervals: 11, returningEntity: { id: '$pageview', properties: filter } },
    });
    expect(counts(rows)).toEqual(
      pad([
        [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0],
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
    const firstTime = await team(events(DEFAULT_ROWS.map(([d, t], i) => (i === 3 ? [d, t, { $target_event_property: 'value' }] : [d, t]))));
    const first = await run(firstTime, {
      dateRange: { date_to: date(10, 0) },
      retentionFilter: { retentionType: 'retention_first_time', totalIntervals: 11, returningEntity: { id: '$pageview', properties: filter } },
    });
    expect(counts(first).slice(0, 2)).toEqual([
      [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
      [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ]);
    expect(
      counts(first)
        .slice(2)
        .flat()
        .every((n) => n === 0),
    ).toBe(true);
  });

  test('test_retention_with_user_properties (and minimum occurrences): a person filter', async () => {
    const people = { person1: { email: 'person1@test.com' }, person2: { email: 'person2@test.com' } };
    const properties = { type: 'AND', values: [{ type: 'AND', values: [{ key: 'email', operator: 'exact', type: 'person', value: ['person1@test.com'] }] }] };
    const project = await team(events(DEFAULT_ROWS), people);
    const rows = await run(project, { dateRange: { date_to: date(6, 0) }, properties, retentionFilter: { totalIntervals: 7 } });
    expect(rows[0]!.date).toBe('2020-06-10T00:00:00Z');
    expect(counts(rows)).toEqual(pad([[1, 1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1], [1, 0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0], [1, 1], [1]]));

    const twice = await team([...events([...DEFAULT_ROWS, ...DEFAULT_ROWS]), ...events([['person1', date(3)]])], people);
    const minimum = await run(twice, { dateRange: { date_to: date(6, 0) }, properties, retentionFilter: { totalIntervals: 7, minimumOccurrences: 2 } });
    expect(counts(minimum)).toEqual(pad([[1, 1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 1], [1, 0, 0, 1, 1], [1, 0, 1, 1], [0, 0, 0], [1, 1], [1]]));
  });

  test("test_filter_test_accounts: the project's test-account filters", async () => {
    const project = await team(events(DEFAULT_ROWS), { person1: { email: 'test@posthog.com' } });
    const rows = await run(
      { ...project, test_account_filters: [{ key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }] },
      { dateRange: { date_to: date(10, 6) }, filterTestAccounts: true, retentionFilter: { totalIntervals: 11 } },
    );
    expect(counts(rows)).toEqual(
      pad([
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
        [1, 1, 0, 0, 1, 0, 0, 0, 0],
        [1, 0, 0, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0],
        [0, 0],
        [0],
      ]),
    );
  });

  test('test_first_time_retention and test_first_time_retention_weeks', async () => {
    const project = await team(firstTimeRetentionEvents());
    const query = (period: string) => ({
      dateRange: { date_to: date(5, 6) },
      retentionFilter: { period, totalIntervals: 7, retentionType: 'retention_first_time', targetEntity: SIGNED_UP, returningEntity: PAGEVIEW },
    });
    expect(counts(await run(project, query('Day')))).toEqual(
      pad([[2, 1, 2, 2, 1, 0, 1], [1, 1, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 1, 0, 1], [0, 0, 0], [0, 0], [0]]),
    );
    expect(counts(await run(project, query('Week')))).toEqual(
      pad([[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0], [4, 4], [0]]),
    );
  });

  test('test_retention_people_first_time and test_retention_people_in_period_first_time', async () => {
    const project = await team(firstTimeRetentionEvents());
    const retentionFilter = { targetEntity: SIGNED_UP, returningEntity: PAGEVIEW, retentionType: 'retention_first_time', totalIntervals: 11 };
    const first = await actors(project, 0, { dateRange: { date_to: date(10, 6) }, retentionFilter });
    expect(first.map(([p]) => p.id)).toEqual([journeyPersonUuid('person3', project.id)]);
    expect(first[0]![1]).toEqual([0, 1, 3, 4, 5]);
    const later = await actors(project, 0, { dateRange: { date_to: date(14, 6) }, retentionFilter: { ...retentionFilter, totalIntervals: undefined } });
    expect(later).toEqual([]);
  });

  test('test_timezones: days cut in the project timezone', async () => {
    const project = await team(
      events([
        ['person1', date(-1, 1)],
        ['person1', date(0, 1)],
        ['person1', date(1, 1)],
        ['person2', date(6, 1)],
        ['person2', date(6, 9)],
      ]),
    );
    const query = { dateRange: { date_to: date(10, 6) }, retentionFilter: { totalIntervals: 11 } };
    expect(counts(await run(project, query))).toEqual(
      pad([[1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0], [0], [0], [0], [1, 0, 0, 0, 0], [0], [0], [0], [0]]),
    );
    const pacific = await run({ ...project, timezone: 'US/Pacific' }, query);
    expect(pacific[0]!.date).toBe('2020-06-10T00:00:00-07:00');
    expect(counts(pacific)).toEqual(pad([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0], [0], [0], [0], [1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0], [0], [0], [0]]));
  });

  test('test_retention_with_breakdown_with_person_properties', async () => {
    const project = await team(
      events([
        ['person1', date(0)],
        ['person1', date(1)],
        ['person1', date(3)],
        ['person3', date(0)],
        ['person3', date(2)],
        ['person2', date(0)],
        ['person2', date(1)],
        ['person2', date(4)],
        ['person4', date(0)],
        ['person4', date(5)],
      ]),
      { person1: { country: 'US' }, person2: { country: 'UK' }, person3: { country: 'US' }, person4: { country: 'Germany' } },
    );
    const rows = await run(project, {
      dateRange: { date_to: date(5, 0) },
      retentionFilter: { totalIntervals: 6, period: 'Day' },
      breakdownFilter: { breakdowns: [{ property: 'country', type: 'person' }] },
    });
    expect(new Set(rows.map((r) => r.breakdown_value))).toEqual(new Set(['Germany', 'UK', 'US']));
    // Ranked by cohort size: US (4 starts in all), UK (3), Germany (2).
    expect([...new Set(rows.map((r) => r.breakdown_value))]).toEqual(['US', 'UK', 'Germany']);
    expect(countsOf(rows, 'US')).toEqual(
      pad([
        [2, 1, 1, 1, 0, 0],
        [1, 0, 1, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
      ]),
    );
    expect(countsOf(rows, 'UK')).toEqual(
      pad([
        [1, 1, 0, 0, 1, 0],
        [1, 0, 0, 1, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
      ]),
    );
    expect(countsOf(rows, 'Germany')).toEqual(
      pad([
        [1, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
      ]),
    );
  });

  test('test_retention_actor_query_with_breakdown: the actors of one breakdown value', async () => {
    const project = await team(
      events([
        ['person1', date(0)],
        ['person1', date(1)],
        ['person1', date(2)],
        ['person2', date(0)],
        ['person2', date(1)],
        ['person2', date(2)],
        ['person3', date(0)],
        ['person3', date(1)],
      ]),
      { person1: { country: 'US' }, person2: { country: 'UK' }, person3: { country: 'US' } },
    );
    const query = {
      dateRange: { date_to: date(2, 0) },
      retentionFilter: { totalIntervals: 3, period: 'Day' },
      breakdownFilter: { breakdowns: [{ property: 'country', type: 'person' }] },
    };
    const us = await actors(project, 0, query, ['US']);
    const uuid = (person: string) => journeyPersonUuid(person, project.id);
    expect(us.map(([p, appearances]) => [p.id, appearances])).toEqual([
      [uuid('person1'), [0, 1, 2]],
      [uuid('person3'), [0, 1]],
    ]);
    const uk = await actors(project, 1, query, ['UK']);
    expect(uk.map(([p, appearances]) => [p.id, appearances])).toEqual([[uuid('person2'), [0, 1]]]);
  });

  test('test_retention_actor_query_with_breakdown_and_minimum_occurrences', async () => {
    const twice = (person: string, day: number): Row[] => [
      [person, date(day)],
      [person, date(day)],
    ];
    const project = await team(
      events([
        ['person1', date(0)],
        ...twice('person1', 1),
        ...twice('person1', 2),
        ['person1', date(3)],
        ['person2', date(0)],
        ...twice('person2', 1),
        ...twice('person2', 2),
        ['person2', date(3)],
        ['person3', date(0)],
        ...twice('person3', 1),
        ['person3', date(3)],
      ]),
      { person1: { country: 'US' }, person2: { country: 'UK' }, person3: { country: 'US' } },
    );
    const query = {
      dateRange: { date_to: date(2, 0) },
      retentionFilter: { totalIntervals: 3, period: 'Day', minimumOccurrences: 2 },
      breakdownFilter: { breakdowns: [{ property: 'country', type: 'person' }] },
    };
    const uuid = (person: string) => journeyPersonUuid(person, project.id);
    expect((await actors(project, 0, query, ['US'])).map(([p, appearances]) => [p.id, appearances])).toEqual([
      [uuid('person1'), [0, 1, 2]],
      [uuid('person3'), [0, 1]],
    ]);
    expect((await actors(project, 1, query, ['UK'])).map(([p, appearances]) => [p.id, appearances])).toEqual([[uuid('person2'), [0, 1]]]);
  });

  test('test_retention_with_multiple_cohort_breakdowns', async () => {
    const teamId = await newProject();
    await team(
      events([
        ['person1', date(0)],
        ['person2', date(0)],
        ['person3', date(0)],
        ['person1', date(1)],
        ['person2', date(2)],
        ['person3', date(3)],
      ]),
      { person1: { name: 'person1' }, person2: { name: 'person2' }, person3: { name: 'person3' } },
      teamId,
    );
    const cohortOf = (name: string) =>
      insertCohort(stores.db, teamId, {
        isStatic: false,
        filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'name', value: name, type: 'person' }] }] } },
      });
    const [first, second] = [await cohortOf('person1'), await cohortOf('person2')];
    const rows = await run(
      { id: teamId },
      {
        dateRange: { date_to: date(4, 0) },
        retentionFilter: { totalIntervals: 5, period: 'Day' },
        breakdownFilter: { breakdown_type: 'cohort', breakdown: [first, second] },
      },
    );
    expect(new Set(rows.map((r) => r.breakdown_value))).toEqual(new Set([String(first), String(second)]));
    // Each cohort's one member: person1 back a day later, person2 two days later.
    expect(countsOf(rows, String(first))[0]).toEqual([1, 1, 0, 0, 0]);
    expect(countsOf(rows, String(second))[0]).toEqual([1, 0, 1, 0, 0]);
  });

  test('test_retention_with_breakdown_event_properties (and minimum occurrences)', async () => {
    const browserRows: Row[] = [
      ['person1', date(0), { browser: 'Chrome' }],
      ['person1', date(1), { browser: 'Chrome' }],
      ['person1', date(3), { browser: 'Chrome' }],
      ['person3', date(0), { browser: 'Chrome' }],
      ['person3', date(2), { browser: 'Chrome' }],
      ['person2', date(0), { browser: 'Safari' }],
      ['person2', date(1), { browser: 'Safari' }],
      ['person2', date(4), { browser: 'Safari' }],
      ['person4', date(0), { browser: 'Firefox' }],
      ['person4', date(5), { browser: 'Firefox' }],
    ];
    const query = (extra: Record<string, unknown> = {}) => ({
      dateRange: { date_to: date(5, 0) },
      retentionFilter: { totalIntervals: 6, period: 'Day', ...extra },
      breakdownFilter: { breakdowns: [{ property: 'browser', type: 'event' }] },
    });
    const rows = await run(await team(events(browserRows)), query());
    expect(countsOf(rows, 'Chrome')).toEqual(pad([[2, 1, 1, 1, 0, 0], [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0], [0]]));
    expect(countsOf(rows, 'Safari')).toEqual(pad([[1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 0, 0], [0], [0], [1, 0, 0, 0, 0, 0], [0]]));
    expect(countsOf(rows, 'Firefox')).toEqual(pad([[1, 0, 0, 0, 0, 1], [0], [0], [0], [0], [1, 0, 0, 0, 0, 0]]));

    const once: Row[] = [
      ['person1', date(5), { browser: 'Chrome' }],
      ['person2', date(2), { browser: 'Safari' }],
      ['person3', date(3), { browser: 'Chrome' }],
      ['person4', date(3), { browser: 'Firefox' }],
    ];
    const minimum = await run(await team([...events([...browserRows, ...browserRows]), ...events(once)]), query({ minimumOccurrences: 2 }));
    expect(countsOf(minimum, 'Chrome')).toEqual(pad([[2, 1, 1, 1, 0, 0], [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0], [0], [1, 0, 0, 0, 0, 0]]));
    expect(countsOf(minimum, 'Safari')).toEqual(pad([[1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 0, 0], [1, 0, 1, 0, 0, 0], [0], [1, 0, 0, 0, 0, 0], [0]]));
    expect(countsOf(minimum, 'Firefox')).toEqual(pad([[1, 0, 0, 0, 0, 1], [0], [0], [1, 0, 1, 0, 0, 0], [0], [1, 0, 0, 0, 0, 0]]));
  });

  test('test_retention_with_breakdown_different_entities and _on_start_event: a return counts under its own value', async () => {
    const signups = events(
      [
        ['person1', date(0), { category: 'clothing' }],
        ['person2', date(0), { category: 'clothing' }],
        ['person3', date(0), { category: 'electronics' }],
        ['person4', date(1), { category: 'electronics' }],
      ],
      'signup',
    );
    const purchases = events(
      [
        ['person1', date(1), { category: 'clothing' }],
        ['person1', date(3), {}],
        ['person1', date(5), { category: 'electronics' }],
        ['person2', date(2), { category: 'clothing' }],
        ['person3', date(1), { category: 'electronics' }],
        ['person3', date(4), { category: 'electronics' }],
        ['person4', date(1), { category: 'electronics' }],
        ['person4', date(2), { category: 'electronics' }],
        ['person4', date(3), { category: 'clothing' }],
      ],
      'purchase',
    );
    const project = await team([...signups, ...purchases]);
    const query = (dateTo: string) => ({
      dateRange: { date_to: dateTo },
      retentionFilter: {
        totalIntervals: 6,
        period: 'Day',
        targetEntity: { id: 'signup', type: 'events' },
        returningEntity: { id: 'purchase', type: 'events' },
      },
      breakdownFilter: { breakdowns: [{ property: 'category', type: 'event' }] },
    });
    const rows = await run(project, query(date(5, 0)));
    expect(new Set(rows.map((r) => r.breakdown_value))).toEqual(new Set(['clothing', 'electronics']));
    expect(countsOf(rows, 'clothing')).toEqual(pad([[2, 1, 1, 0, 0, 0], [0], [0], [0], [0], [0]]));
    expect(countsOf(rows, 'electronics')).toEqual(pad([[1, 1, 0, 0, 1, 0], [1, 1, 0, 0, 0, 0], [0], [0], [0], [0]]));
    const person4 = (await actors(project, 1, query(date(5, 0)), ['electronics'])).find(([p]) => p.distinct_ids.includes('person4'));
    expect(person4![1]).toEqual([0, 1]);
    const clothing = await actors(project, 0, query(date(5, 10)), ['clothing']);
    expect(clothing.map(([p, appearances]) => [p.id, appearances])).toEqual([
      [journeyPersonUuid('person1', project.id), [0, 1]],
      [journeyPersonUuid('person2', project.id), [0, 2]],
    ]);

    const onStart = await team([
      ...events(
        [
          ['person1', date(0), { category: 'clothing' }],
          ['person2', date(0), { category: 'clothing' }],
          ['person3', date(0), { category: 'electronics' }],
        ],
        'signup',
      ),
      ...events(
        [
          ['person1', date(1)],
          ['person1', date(3)],
          ['person2', date(2)],
          ['person3', date(1)],
        ],
        'purchase',
      ),
    ]);
    const none = await run(onStart, query(date(5, 0)));
    expect(countsOf(none, 'clothing')).toEqual(pad([[2, 0, 0, 0, 0, 0], [0], [0], [0], [0], [0]]));
  });

  test('test_retention_with_breakdown_event_metadata: $group_0 read from the event', async () => {
    const project = await team(
      events([
        ['person1', date(0), { $group_0: 'Apple' }],
        ['person1', date(1), { $group_0: 'Apple' }],
        ['person1', date(3), { $group_0: 'Apple' }],
        ['person3', date(0), { $group_0: 'Apple' }],
        ['person3', date(2), { $group_0: 'Apple' }],
        ['person2', date(0), { $group_0: 'Google' }],
        ['person2', date(1), { $group_0: 'Google' }],
        ['person2', date(4), { $group_0: 'Google' }],
        ['person4', date(0), { $group_0: 'Stripe' }],
        ['person4', date(5), { $group_0: 'Stripe' }],
      ]),
    );
    const rows = await run(project, {
      dateRange: { date_to: date(5, 0) },
      retentionFilter: { totalIntervals: 6, period: 'Day' },
      breakdownFilter: { breakdowns: [{ property: '$group_0', type: 'event_metadata' }] },
    });
    expect(new Set(rows.map((r) => r.breakdown_value))).toEqual(new Set(['Apple', 'Google', 'Stripe']));
    expect(countsOf(rows, 'Apple')).toEqual(pad([[2, 1, 1, 1, 0, 0], [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0], [0]]));
  });

  test("breakdown_limit: the values past it merged into PostHog's other value", async () => {
    const project = await team(
      events([
        ['p_chrome_1', date(0), { browser: 'Chrome' }],
        ['p_chrome_1', date(1), { browser: 'Chrome' }],
        ['p_chrome_2', date(0), { browser: 'Chrome' }],
        ['p_chrome_2', date(2), { browser: 'Chrome' }],
        ['p_chrome_3', date(0), { browser: 'Chrome' }],
        ['p_safari_1', date(0), { browser: 'Safari' }],
        ['p_safari_1', date(1), { browser: 'Safari' }],
        ['p_safari_2', date(0), { browser: 'Safari' }],
        ['p_firefox_1', date(0), { browser: 'Firefox' }],
        ['p_firefox_1', date(3), { browser: 'Firefox' }],
        ['p_edge_1', date(0), { browser: 'Edge' }],
        ['p_edge_1', date(4), { browser: 'Edge' }],
      ]),
    );
    const rows = await run(project, {
      dateRange: { date_to: date(5, 0) },
      retentionFilter: { totalIntervals: 6, period: 'Day' },
      breakdownFilter: { breakdowns: [{ property: 'browser', type: 'event' }], breakdown_limit: 2 },
    });
    const other = '$$_posthog_breakdown_other_$$';
    expect([...new Set(rows.map((r) => r.breakdown_value))]).toEqual(['Chrome', 'Safari', other]);
    expect(countsOf(rows, 'Chrome')).toEqual(pad([[3, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0], [0], [0]]));
    expect(countsOf(rows, 'Safari')).toEqual(pad([[2, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0], [0], [0], [0]]));
    expect(countsOf(rows, other)).toEqual(pad([[2, 0, 0, 1, 1, 0], [0], [0], [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0]]));
  });

  test('test_retention_with_virtual_person_property_breakdown: the initial channel type', async () => {
    const teamId = nextTeam++;
    await insertJourneys(
      stores,
      {
        p1: [
          { event: '$pageview', timestamp: '2020-01-12T12:00:00Z' },
          { event: '$pageview', timestamp: '2020-01-13T12:00:00Z' },
        ],
        p2: [
          { event: '$pageview', timestamp: '2020-01-12T12:00:00Z' },
          { event: '$pageview', timestamp: '2020-01-14T12:00:00Z' },
        ],
      },
      {
        teamId,
        personProperties: { p1: { $initial_referring_domain: 'https://www.google.com' }, p2: { $initial_referring_domain: 'https://www.facebook.com' } },
      },
    );
    const rows = await run(
      { id: teamId },
      {
        dateRange: { date_from: '2020-01-12T00:00:00Z', date_to: '2020-01-19T00:00:00Z' },
        retentionFilter: { targetEntity: PAGEVIEW, returningEntity: PAGEVIEW, totalIntervals: 7, period: 'Day' },
        breakdownFilter: { breakdowns: [{ type: 'person', property: '$virt_initial_channel_type' }] },
      },
    );
    const social = rows.filter((r) => r.breakdown_value === 'Organic Social');
    const search = rows.filter((r) => r.breakdown_value === 'Organic Search');
    expect(new Set(rows.map((r) => r.breakdown_value)).size).toBe(2);
    expect(social).toHaveLength(8);
    expect(social[0]!.values.slice(0, 3).map((v) => v.count)).toEqual([1, 0, 1]);
    expect(search).toHaveLength(8);
    expect(search[0]!.values.slice(0, 3).map((v) => v.count)).toEqual([1, 1, 0]);
  });

  test('test_retention_with_cohort_breakdown and test_retention_with_all_users_cohort_breakdown', async () => {
    const teamId = await newProject();
    await team(
      events([
        ['person1', date(0)],
        ['person2', date(0)],
        ['person3', date(0)],
        ['person1', date(1)],
        ['person2', date(1)],
        ['person1', date(2)],
        ['person3', date(3)],
      ]),
      { person1: { name: 'person1' }, person2: { name: 'person2' }, person3: { name: 'person3' } },
      teamId,
    );
    const cohort = await insertCohort(stores.db, teamId, {
      isStatic: false,
      filters: {
        properties: {
          type: 'OR',
          values: [
            { type: 'AND', values: [{ key: 'name', value: 'person1', type: 'person' }] },
            { type: 'AND', values: [{ key: 'name', value: 'person2', type: 'person' }] },
          ],
        },
      },
    });
    const query = (breakdown: unknown[]) => ({
      dateRange: { date_to: date(4, 0) },
      retentionFilter: { totalIntervals: 5, period: 'Day' },
      breakdownFilter: { breakdown_type: 'cohort', breakdown },
    });
    const rows = await run({ id: teamId }, query([cohort]));
    expect(new Set(rows.map((r) => r.breakdown_value))).toEqual(new Set([String(cohort)]));
    expect(countsOf(rows, String(cohort))).toEqual(pad([[2, 2, 1, 0, 0], [2, 1, 0, 0], [1, 0, 0], [0, 0], [0]]));
    const all = await run({ id: teamId }, query([0]));
    expect(countsOf(all, '0')).toEqual(pad([[3, 2, 1, 1, 0], [2, 1, 0, 0], [1, 0, 0], [1, 0], [0]]));
    expect(countsOf(await run({ id: teamId }, query(['all'])), '0')).toEqual(countsOf(all, '0'));
  });
});
