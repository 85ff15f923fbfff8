import { insertEvents } from '@sightline/clickhouse';
import { createTestStores, insertJourneys, journeyPersonUuid, testEventRow, type JourneyEvent, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import type { PathsLink } from './paths.query';

/**
 * Paths, ported from PostHog's posthog/hogql_queries/insights/test/test_paths_query_runner.py and
 * test_paths_query_runner_ee.py (each test named in its title): their data, query and asserted
 * edges and persons, run through the query API's node (PathsQuery, and ActorsQuery around an
 * InsightActorsQuery for the persons on an edge). Where PostHog's test creates events without a
 * timestamp (all at "now"), they are one second apart in the order the test creates them.
 */
const ONE_MINUTE = 60_000;

type Events = [person: string, event: string, at: string, properties?: Record<string, unknown>][];

const pageviews = (person: string, rows: [url: string, at: string][]): Events => rows.map(([url, at]) => [person, '$pageview', at, { $current_url: url }]);

/** Events given in PostHog's creation order; rows without a time are one second apart from `base`. */
function people(rows: Events, base = '2021-05-01T00:00:00Z'): JourneyPeople {
  const out: JourneyPeople = {};
  rows.forEach(([person, event, at, properties], i) => {
    const timestamp = at || new Date(Date.parse(base) + i * 1000).toISOString();
    const e: JourneyEvent = { event, timestamp, ...(properties ? { properties } : {}) };
    // A person written `p@did` sends this event from distinct id `did`.
    const [key, distinctId] = person.split('@') as [string, string | undefined];
    (out[key] ??= []).push(distinctId ? { ...e, distinctId } : e);
  });
  return out;
}

interface Case {
  rows: Events;
  base?: string;
  distinctIds?: Record<string, string[]>;
  personProperties?: Record<string, Record<string, unknown>>;
  groupProperties?: Record<string, Record<number, Record<string, unknown>>>;
}

const CURRENT_URL_ROWS: Events = [
  ...pageviews('fake', [
    ['/', '2012-01-01 03:21:34'],
    ['/about', '2012-01-01 03:21:34'],
  ]),
  ...pageviews('person_1', [
    ['/', '2012-01-14 03:21:34'],
    ['/about', '2012-01-14 03:28:34'],
  ]),
  ['person_2@person_2a', '$pageview', '2012-01-14 03:21:34', { $current_url: '/' }],
  ['person_2@person_2b', '$pageview', '2012-01-14 03:28:34', { $current_url: '/pricing' }],
  ['person_2@person_2a', '$pageview', '2012-01-14 03:29:34', { $current_url: '/about' }],
  ...pageviews('person_3', [
    ['/pricing', '2012-01-14 03:21:34'],
    ['/', '2012-01-14 03:28:34'],
  ]),
  ...pageviews('person_4', [
    ['/', '2012-01-14 03:21:34'],
    ['/pricing', '2012-01-14 03:28:34'],
  ]),
];

const CUSTOM_ROWS = (props: Record<string, unknown> = {}): Events => [
  ['person_1', 'custom_event_1', '', props],
  ['person_1', 'custom_event_3', '', props],
  ['person_1', '$pageview', '', { $current_url: '/' }],
  ['person_2', 'custom_event_1', '', props],
  ['person_2', 'custom_event_2', '', props],
  ['person_2', 'custom_event_3', '', props],
  ['person_3', 'custom_event_2', '', props],
  ['person_3', 'custom_event_1', '', props],
  ['person_4', 'custom_event_1', '', props],
  ['person_4', 'custom_event_2', '', props],
];

const STEPS_1_TO_4: Events = pageviews('fake', [
  ['/1', '2012-01-01 03:21:34'],
  ['/2', '2012-01-01 03:22:34'],
  ['/3', '2012-01-01 03:24:34'],
  ['/4', '2012-01-01 03:27:34'],
]);

const INCLUSION_ROWS: Events = [
  ...pageviews('p1', [
    ['/1', '2012-01-01 03:21:34'],
    ['/2/', '2012-01-01 03:22:34'],
    ['/3', '2012-01-01 03:24:34'],
  ]),
  ['p2', '$screen', '2012-01-01 03:21:34', { $screen_name: '/screen1' }],
  ['p2', '$screen', '2012-01-01 03:22:34', { $screen_name: '/screen2' }],
  ['p2', '$screen', '2012-01-01 03:24:34', { $screen_name: '/screen3' }],
  ['p3', '/custom1', '2012-01-01 03:21:34'],
  ['p3', '/custom2', '2012-01-01 03:22:34'],
  ['p3', '/custom3', '2012-01-01 03:24:34'],
];

const WILDCARD_ROWS: Events = [
  ...pageviews('p1', [
    ['/1', '2012-01-01 03:21:34'],
    ['/2/bar/1/foo', '2012-01-01 03:22:34'],
    ['/3', '2012-01-01 03:24:34'],
  ]),
  ...pageviews('p2', [
    ['/1', '2012-01-01 03:21:34'],
    ['/bar/2/foo', '2012-01-01 03:22:34'],
    ['/3', '2012-01-01 03:24:34'],
  ]),
  ...pageviews('p3', [
    ['/1', '2012-01-01 03:21:34'],
    ['/bar/33/foo', '2012-01-01 03:22:34'],
    ['/3', '2012-01-01 03:24:34'],
  ]),
];

const EVIL = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!';

function dropoffRows(): Events {
  const rows: Events = [];
  const steps = ['step one', 'step two', 'step three', 'step four'];
  const times = ['00:00:00', '00:04:00', '00:05:00', '00:06:00'];
  for (let i = 0; i < 35; i++) {
    const n = i < 5 ? 2 : i < 15 ? 3 : 4;
    for (let s = 0; s < n; s++) rows.push([`user_${i}`, steps[s]!, `2021-05-01 ${times[s]}`]);
  }
  return rows;
}

function orphanRows(): Events {
  const rows: Events = [];
  for (let i = 0; i < 5; i++) {
    rows.push(
      ...pageviews(
        `person_${i}`,
        ['/1', '/2', '/3', '/4', '/5', '/about', '/after'].map((url, m) => [url, `2021-05-01 00:0${m + 1}:00`] as [string, string]),
      ),
    );
  }
  for (const [person, mid] of [
    ['person_r_2', '/a'],
    ['person_r_3', '/b'],
  ] as const) {
    rows.push(
      ...pageviews(person, [
        ['/2', '2021-05-01 00:01:00'],
        [mid, '2021-05-01 00:01:30'],
        ['/x', '2021-05-01 00:02:00'],
        ['/about', '2021-05-01 00:03:00'],
      ]),
    );
  }
  return rows;
}

const CASES: Record<string, Case> = {
  current_url: { rows: CURRENT_URL_ROWS, distinctIds: { person_2: ['person_2a', 'person_2b'] }, personProperties: { person_1: { email: 'test@posthog.com' } } },
  custom: { rows: CUSTOM_ROWS() },
  hogql: { rows: CUSTOM_ROWS({ a: '!' }) },
  screen: {
    rows: [
      ['person_1', '$screen', '', { $screen_name: '/' }],
      ['person_1', '$screen', '', { $screen_name: '/about' }],
      ['person_2@person_2b', '$screen', '', { $screen_name: '/' }],
      ['person_2@person_2a', '$screen', '', { $screen_name: '/pricing' }],
      ['person_2@person_2b', '$screen', '', { $screen_name: '/about' }],
      ['person_3', '$screen', '', { $screen_name: '/pricing' }],
      ['person_3', '$screen', '', { $screen_name: '/' }],
      ['person_4', '$screen', '', { $screen_name: '/' }],
      ['person_4', '$screen', '', { $screen_name: '/pricing' }],
    ],
  },
  properties: {
    rows: [
      ['person_1', '$pageview', '', { $current_url: '/', $browser: 'Chrome' }],
      ['person_1', '$pageview', '', { $current_url: '/about', $browser: 'Chrome' }],
      ['person_2', '$pageview', '', { $current_url: '/', $browser: 'Chrome' }],
      ['person_2', '$pageview', '', { $current_url: '/pricing', $browser: 'Chrome' }],
      ['person_2', '$pageview', '', { $current_url: '/about', $browser: 'Chrome' }],
      ['person_3', '$pageview', '', { $current_url: '/pricing' }],
      ['person_3', '$pageview', '', { $current_url: '/' }],
      ['person_4', '$pageview', '', { $current_url: '/' }],
      ['person_4', '$pageview', '', { $current_url: '/pricing' }],
    ],
  },
  start: {
    rows: [
      ['person_1', '$pageview', '', { $current_url: '/' }],
      ['person_1', '$pageview', '', { $current_url: '/about/' }],
      ['person_2', '$pageview', '', { $current_url: '/' }],
      ['person_2', '$pageview', '', { $current_url: '/pricing/' }],
      ['person_2', '$pageview', '', { $current_url: '/about' }],
      ['person_3', '$pageview', '', { $current_url: '/pricing' }],
      ['person_3', '$pageview', '', { $current_url: '/' }],
      ['person_3', '$pageview', '', { $current_url: '/about/' }],
      ['person_4', '$pageview', '', { $current_url: '/' }],
      ['person_4', '$pageview', '', { $current_url: '/pricing/' }],
      ['person_5@person_5a', '$pageview', '', { $current_url: '/pricing' }],
      ['person_5@person_5b', '$pageview', '', { $current_url: '/about' }],
      ['person_5@person_5a', '$pageview', '', { $current_url: '/pricing/' }],
      ['person_5@person_5b', '$pageview', '', { $current_url: '/help' }],
    ],
  },
  in_window: {
    rows: pageviews('person_1', [
      ['/', '2020-04-14 03:25:34'],
      ['/about', '2020-04-14 03:30:34'],
      ['/', '2020-04-15 03:25:34'],
      ['/about', '2020-04-15 03:30:34'],
    ]),
  },
  step_limit: { rows: STEPS_1_TO_4 },
  conversion_times: {
    rows: [
      ...STEPS_1_TO_4,
      ...pageviews('fake2', [
        ['/1', '2012-01-01 03:21:34'],
        ['/2', '2012-01-01 03:23:34'],
        ['/3', '2012-01-01 03:27:34'],
      ]),
    ],
  },
  ordering: {
    rows: Array.from({ length: 50 }, (_, i): Events => [
      [`user_${i}`, 'step one', '2021-05-01 00:00:00'],
      [`user_${i}`, 'step two', '2021-05-01 00:01:00'],
      [`user_${i}`, 'step three', '2021-05-01 00:02:00'],
      ...(i % 2 === 0 ? ([[`user_${i}`, 'step branch', '2021-05-01 00:03:00']] as Events) : []),
    ]).flat(),
  },
  end: {
    rows: [
      ...pageviews(
        'person_1',
        ['/1', '/2', '/3/', '/4/', '/5', '/about', '/after/'].map((url, m) => [url, `2021-05-01 00:0${m + 1}:00`] as [string, string]),
      ),
      ...pageviews('person_2', [
        ['/5', '2021-05-01 00:01:00'],
        ['/about', '2021-05-01 00:02:00'],
      ]),
      ...pageviews('person_3', [
        ['/3/', '2021-05-01 00:01:00'],
        ['/4', '2021-05-01 00:02:00'],
        ['/about/', '2021-05-01 00:03:00'],
        ['/after', '2021-05-01 00:04:00'],
      ]),
    ],
  },
  inclusion: { rows: INCLUSION_ROWS },
  wildcard: { rows: WILDCARD_ROWS },
  single_person: {
    rows: [
      ...pageviews('p1', [
        ['/1', '2012-01-01 03:21:34'],
        ['/2', '2012-01-01 03:22:34'],
        ['/3', '2012-01-01 03:24:34'],
      ]),
      ['p1', '$screen', '2012-01-01 03:25:34', { $screen_name: '/screen1' }],
      ['p1', '$screen', '2012-01-01 03:26:34', { $screen_name: '/screen2' }],
      ['p1', '$screen', '2012-01-01 03:28:34', { $screen_name: '/screen3' }],
      ['p1', '/custom1', '2012-01-01 03:29:34'],
      ['p1', '/custom2', '2012-01-01 03:30:34'],
      ['p1', '/custom3', '2012-01-01 03:32:34'],
    ],
  },
  sessions: {
    rows: pageviews('fake', [
      ['/1', '2012-01-01 03:21:34'],
      ['/2', '2012-01-01 03:22:34'],
      ['/3', '2012-01-01 03:24:34'],
      ['/1', '2012-01-02 03:21:54'],
      ['/2/', '2012-01-02 03:22:54'],
      ['/3', '2012-01-02 03:26:54'],
    ]),
  },
  duplicates: {
    rows: [
      ...pageviews('fake', [
        ['/1', '2012-01-01 03:21:34'],
        ['/1', '2012-01-01 03:21:54'],
        ['/2', '2012-01-01 03:22:34'],
        ['/2/', '2012-01-01 03:22:54'],
        ['/3', '2012-01-01 03:24:54'],
      ]),
      ...pageviews('fake2', [
        ['/1', '2012-01-01 03:21:34'],
        ['/2/', '2012-01-01 03:23:34'],
        ['/3', '2012-01-01 03:27:34'],
      ]),
    ],
  },
  start_and_end: {
    rows: [
      ...pageviews(
        'person_1',
        ['/1', '/2', '/3', '/4', '/5', '/about', '/after'].map((url, m) => [url, `2021-05-01 00:0${m + 1}:00`] as [string, string]),
      ),
      ...pageviews('person_2', [
        ['/5', '2021-05-01 00:01:00'],
        ['/about', '2021-05-01 00:02:00'],
      ]),
      ...pageviews('person_3', [
        ['/3', '2021-05-01 00:01:00'],
        ['/4', '2021-05-01 00:02:00'],
        ['/about', '2021-05-01 00:03:00'],
        ['/after', '2021-05-01 00:04:00'],
      ]),
    ],
  },
  evil: {
    rows: [
      ...pageviews('p1', [
        [EVIL, '2012-01-01 03:21:34'],
        ['/2/bar/aaa', '2012-01-01 03:22:34'],
        ['/3', '2012-01-01 03:24:34'],
      ]),
      ...pageviews('p2', [
        ['/1', '2012-01-01 03:21:34'],
        ['/2/3?q=1', '2012-01-01 03:22:34'],
        ['/3?q=1', '2012-01-01 03:24:34'],
      ]),
    ],
  },
  dropoffs: { rows: dropoffRows() },
  orphans: { rows: orphanRows() },
  groups: {
    rows: INCLUSION_ROWS,
    groupProperties: { p1: { 0: { industry: 'finance' } }, p2: { 0: { industry: 'technology' } }, p3: { 1: { industry: 'technology' } } },
  },
  cleaning: {
    rows: [
      ...pageviews('p1', [
        ['/merchant/123/dashboard', '2012-01-14 03:21:34'],
        ['/merchant/456/dashboard', '2012-01-14 03:22:34'],
        ['/pricing', '2012-01-14 03:23:34'],
      ]),
      ...pageviews('p2', [
        ['/merchant/7/dashboard', '2012-01-14 03:21:34'],
        ['/pricing', '2012-01-14 03:25:34'],
      ]),
    ],
  },
  empty_last: {
    rows: [
      ...pageviews('p1', [
        ['/1', '2012-01-14 03:21:34'],
        ['', '2012-01-14 03:22:34'],
      ]),
      ...pageviews('p2', [
        ['', '2012-01-14 03:21:34'],
        ['/2', '2012-01-14 03:22:34'],
      ]),
      ['p3', 'signup', '2012-01-14 03:21:34'],
      ['p3', '$pageview', '2012-01-14 03:22:34', {}],
      ['p3', 'purchase', '2012-01-14 03:23:34'],
    ],
  },
  merged: { rows: pageviews('p1', [['/1', '2012-01-14 03:21:34']]) },
  deleted: {
    rows: [
      ...pageviews('kept', [
        ['/1', '2012-01-14 03:21:34'],
        ['/2', '2012-01-14 03:22:34'],
      ]),
      ...pageviews('gone', [
        ['/1', '2012-01-14 03:21:34'],
        ['/2', '2012-01-14 03:22:34'],
      ]),
    ],
  },
};

describe('PathsQuery (PostHog test_paths_query_runner.py, test_paths_query_runner_ee.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  const teams: Record<string, number> = {};
  const project = (name: string, extra: Record<string, unknown> = {}) => ({ id: teams[name]!, timezone: 'UTC', ...extra });

  const paths = async (name: string, query: Record<string, unknown>, now: string, extra: Record<string, unknown> = {}): Promise<PathsLink[]> => {
    const response = await service.runNode(project(name, extra), { kind: 'PathsQuery', ...query }, Date.parse(now));
    return response!['results'] as PathsLink[];
  };
  const edges = (links: PathsLink[]) => links.map((l) => [l.source, l.target, l.value]);
  const link = (source: string, target: string, value: number, average_conversion_time: number): PathsLink => ({
    source,
    target,
    value,
    average_conversion_time,
  });
  /** PostHog's _get_people_at_path: the ids of the persons on an edge (or dropping off), sorted. */
  const peopleAt = async (name: string, query: Record<string, unknown>, keys: Record<string, string>, now = '2021-06-01T00:00:00Z') => {
    const pathsFilter = { ...((query['pathsFilter'] as Record<string, unknown>) ?? {}), ...keys };
    const response = await service.runNode(
      project(name),
      { kind: 'ActorsQuery', select: ['id'], source: { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', ...query, pathsFilter } } },
      Date.parse(now),
    );
    return (response!['results'] as string[][]).map((r) => r[0]!).sort();
  };
  const who = (name: string, ...keys: string[]) => keys.map((k) => journeyPersonUuid(k, teams[name])).sort();

  beforeAll(async () => {
    stores = await createTestStores('paths');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const [name, c] of Object.entries(CASES)) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_paths_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
      const journeys = people(c.rows, c.base);
      if (c.groupProperties) {
        for (const [person, groups] of Object.entries(c.groupProperties)) journeys[person] = journeys[person]!.map((e) => ({ ...e, groupProperties: groups }));
      }
      await insertJourneys(stores, journeys, { teamId: row!.id, personProperties: c.personProperties, distinctIds: c.distinctIds, createPeople: false });
    }
    // Merged persons: p1_anon's event was written with its own person before the merge; the
    // distinct id now points at p1 (PostHog's test_person_on_events_v2 override). A deleted
    // person's distinct id is marked deleted.
    const merged = teams['merged']!;
    const deleted = teams['deleted']!;
    await insertEvents(stores.ch, [
      testEventRow({
        event: '$pageview',
        atMs: Date.parse('2012-01-14T03:22:34Z'),
        teamId: merged,
        distinctId: 'p1_anon',
        personId: journeyPersonUuid('anon', merged),
        properties: { $current_url: '/2' },
      }),
    ]);
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [
        { team_id: merged, distinct_id: 'p1_anon', person_id: journeyPersonUuid('p1', merged), is_deleted: 0, version: 1 },
        { team_id: deleted, distinct_id: 'gone', person_id: journeyPersonUuid('gone', deleted), is_deleted: 1, version: 2 },
      ],
    });
  });
  afterAll(() => stores.close());

  describe('test_paths_query_runner.py', () => {
    it('test_current_url_paths_and_logic: default range, date ranges, test-account filter', async () => {
      const now = '2012-01-15T03:21:34Z';
      expect(edges(await paths('current_url', { pathsFilter: {} }, now))).toEqual([
        ['1_/', '2_/pricing', 2],
        ['1_/', '2_/about', 1],
        ['1_/pricing', '2_/', 1],
        ['2_/pricing', '3_/about', 1],
      ]);
      expect(await paths('current_url', { dateRange: { date_from: '2012-01-08' }, pathsFilter: {} }, now)).toHaveLength(4);
      expect(await paths('current_url', { dateRange: { date_to: '2012-01-15' }, pathsFilter: {} }, now)).toHaveLength(4);
      // PostHog answers no edges for a range ending before it starts; Sightline's ranges refuse it (docs/behaviours.md).
      expect(await paths('current_url', { dateRange: { date_from: '2012-01-22' }, pathsFilter: {} }, now).catch((e: Error) => e.message)).toMatch(
        /date_to must not be before date_from/,
      );
      expect(await paths('current_url', { dateRange: { date_to: '2012-01-08' }, pathsFilter: {} }, now)).toEqual([]);
      const wide = { date_from: '2012-01-08', date_to: '2012-01-22' };
      expect(await paths('current_url', { dateRange: wide, pathsFilter: {} }, now)).toHaveLength(4);
      const testAccounts = { test_account_filters: [{ key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }] };
      expect(await paths('current_url', { dateRange: wide, filterTestAccounts: true, pathsFilter: {} }, now, testAccounts)).toHaveLength(3);
    });

    it('test_custom_event_paths: custom events only, the pageview left out', async () => {
      expect(edges(await paths('custom', { pathsFilter: { includeEventTypes: ['custom_event'] } }, '2021-05-02T00:00:00Z'))).toEqual([
        ['1_custom_event_1', '2_custom_event_2', 2],
        ['1_custom_event_1', '2_custom_event_3', 1],
        ['1_custom_event_2', '2_custom_event_1', 1],
        ['2_custom_event_2', '3_custom_event_3', 1],
      ]);
    });

    it('test_custom_hogql_paths: the HogQL expression names each item', async () => {
      const query = { pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'concat(event, properties.a)' } };
      expect(edges(await paths('hogql', query, '2021-05-02T00:00:00Z')).slice(0, 4)).toEqual([
        ['1_custom_event_1!', '2_custom_event_2!', 2],
        ['1_custom_event_1!', '2_custom_event_3!', 1],
        ['1_custom_event_2!', '2_custom_event_1!', 1],
        ['2_custom_event_2!', '3_custom_event_3!', 1],
      ]);
    });

    it('test_screen_paths: $screen_name as the item', async () => {
      expect(edges(await paths('screen', { pathsFilter: { includeEventTypes: ['$screen'] } }, '2021-05-02T00:00:00Z'))).toEqual([
        ['1_/', '2_/pricing', 2],
        ['1_/', '2_/about', 1],
        ['1_/pricing', '2_/', 1],
        ['2_/pricing', '3_/about', 1],
      ]);
    });

    it('test_paths_properties_filter: only Chrome events', async () => {
      const properties = { type: 'AND', values: [{ type: 'AND', values: [{ key: '$browser', operator: 'exact', type: 'event', value: ['Chrome'] }] }] };
      expect(edges(await paths('properties', { pathsFilter: {}, properties }, '2021-05-02T00:00:00Z'))).toEqual([
        ['1_/', '2_/about', 1],
        ['1_/', '2_/pricing', 1],
        ['2_/pricing', '3_/about', 1],
      ]);
    });

    it('test_paths_start: from a start point, a trailing slash making no difference', async () => {
      const now = '2021-05-02T00:00:00Z';
      const expected = [
        ['1_/pricing', '2_/about', 2],
        ['1_/pricing', '2_/', 1],
        ['2_/', '3_/about', 1],
        ['2_/about', '3_/pricing', 1],
        ['3_/pricing', '4_/help', 1],
      ];
      expect(edges(await paths('start', { pathsFilter: { startPoint: '/pricing' } }, now))).toEqual(expected);
      expect(edges(await paths('start', { pathsFilter: { startPoint: '/pricing/' } }, now))).toEqual(expected);
      expect(edges(await paths('start', { pathsFilter: { startPoint: '/' } }, now))).toEqual([
        ['1_/', '2_/about', 2],
        ['1_/', '2_/pricing', 2],
        ['2_/pricing', '3_/about', 1],
      ]);
    });

    it('test_paths_in_window: the same path on two days counts twice', async () => {
      const [first] = await paths('in_window', { dateRange: { date_from: '2020-04-13' }, pathsFilter: {} }, '2020-04-20T00:00:00Z');
      expect(first).toMatchObject({ source: '1_/', target: '2_/about', value: 2 });
    });
  });

  describe('test_paths_query_runner_ee.py', () => {
    it('test_step_limit: each step limit, and the persons on its edges', async () => {
      const now = '2012-01-07T03:21:34Z';
      expect(await paths('step_limit', { pathsFilter: { stepLimit: 2 } }, now)).toEqual([link('1_/1', '2_/2', 1, ONE_MINUTE)]);
      expect(await peopleAt('step_limit', { pathsFilter: { stepLimit: 2 } }, { pathStartKey: '1_/1', pathEndKey: '2_/2' }, now)).toEqual(
        who('step_limit', 'fake'),
      );
      expect(await peopleAt('step_limit', { pathsFilter: { stepLimit: 2 } }, { pathStartKey: '2_/2', pathEndKey: '3_/3' }, now)).toEqual([]);
      expect(await paths('step_limit', { pathsFilter: { stepLimit: 3 } }, now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await peopleAt('step_limit', { pathsFilter: { stepLimit: 3 } }, { pathStartKey: '2_/2', pathEndKey: '3_/3' }, now)).toEqual(
        who('step_limit', 'fake'),
      );
      expect(await paths('step_limit', { pathsFilter: { stepLimit: 4 } }, now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
        link('3_/3', '4_/4', 1, 3 * ONE_MINUTE),
      ]);
      for (const [start, end] of [
        ['1_/1', '2_/2'],
        ['2_/2', '3_/3'],
        ['3_/3', '4_/4'],
      ]) {
        expect(await peopleAt('step_limit', { pathsFilter: { stepLimit: 4 } }, { pathStartKey: start!, pathEndKey: end! }, now)).toEqual(
          who('step_limit', 'fake'),
        );
      }
    });

    it('test_step_conversion_times: the mean time between steps, in milliseconds', async () => {
      const query = { dateRange: { date_from: '2012-01-01' }, pathsFilter: { stepLimit: 4, includeEventTypes: ['$pageview'] } };
      expect(await paths('conversion_times', query, '2012-01-10T00:00:00Z')).toEqual([
        link('1_/1', '2_/2', 2, 1.5 * ONE_MINUTE),
        link('2_/2', '3_/3', 2, 3 * ONE_MINUTE),
        link('3_/3', '4_/4', 1, 3 * ONE_MINUTE),
      ]);
    });

    it("test_event_ordering: fifty persons' paths stay in order", async () => {
      const query = { dateRange: { date_from: '2021-05-01', date_to: '2021-05-03' }, pathsFilter: { includeEventTypes: ['custom_event'] } };
      expect(await paths('ordering', query, '2021-05-10T00:00:00Z')).toEqual([
        link('1_step one', '2_step two', 50, 60000),
        link('2_step two', '3_step three', 50, 60000),
        link('3_step three', '4_step branch', 25, 60000),
      ]);
    });

    it('test_end: paths up to an end point, a trailing slash making no difference', async () => {
      const expected = [
        link('1_/2', '2_/3', 1, 60000),
        link('1_/3', '2_/4', 1, 60000),
        link('1_/5', '2_/about', 1, 60000),
        link('2_/3', '3_/4', 1, 60000),
        link('2_/4', '3_/about', 1, 60000),
        link('3_/4', '4_/5', 1, 60000),
        link('4_/5', '5_/about', 1, 60000),
      ];
      const range = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' };
      expect(await paths('end', { dateRange: range, pathsFilter: { endPoint: '/about' } }, '2021-05-10T00:00:00Z')).toEqual(expected);
      expect(await paths('end', { dateRange: range, pathsFilter: { endPoint: '/about/' } }, '2021-05-10T00:00:00Z')).toEqual(expected);
    });

    it('test_event_inclusion_exclusion_filters: each type alone, then all of them with exclusions', async () => {
      const now = '2023-05-23T11:00:00Z';
      const query = (pathsFilter: Record<string, unknown>) => ({ dateRange: { date_from: '2012-01-01' }, pathsFilter: { stepLimit: 4, ...pathsFilter } });
      expect(await paths('inclusion', query({ includeEventTypes: ['$pageview'] }), now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await paths('inclusion', query({ includeEventTypes: ['$screen'] }), now)).toEqual([
        link('1_/screen1', '2_/screen2', 1, ONE_MINUTE),
        link('2_/screen2', '3_/screen3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await paths('inclusion', query({ includeEventTypes: ['custom_event'] }), now)).toEqual([
        link('1_/custom1', '2_/custom2', 1, ONE_MINUTE),
        link('2_/custom2', '3_/custom3', 1, 2 * ONE_MINUTE),
      ]);
      const all = { includeEventTypes: ['$pageview', '$screen', 'custom_event'], excludeEvents: ['/custom1', '/1', '/2', '/3'] };
      expect(await paths('inclusion', query(all), now)).toEqual([
        link('1_/custom2', '2_/custom3', 1, 2 * ONE_MINUTE),
        link('1_/screen1', '2_/screen2', 1, ONE_MINUTE),
        link('2_/screen2', '3_/screen3', 1, 2 * ONE_MINUTE),
      ]);
    });

    it('test_event_exclusion_filters_with_wildcard_groups: a grouping excluded, and a grouping that matches nothing', async () => {
      const now = '2023-05-23T11:00:00Z';
      const query = (pathGroupings: string[]) => ({
        dateRange: { date_from: '2012-01-01' },
        pathsFilter: { stepLimit: 4, includeEventTypes: ['$pageview'], excludeEvents: ['/bar/*/foo'], pathGroupings },
      });
      expect(await paths('wildcard', query(['/bar/*/foo']), now)).toEqual([link('1_/1', '2_/3', 3, 3 * ONE_MINUTE)]);
      expect(await paths('wildcard', query(['/xxx/invalid/*']), now)).toHaveLength(6);
    });

    it('test_event_inclusion_exclusion_filters_across_single_person: one person through every type', async () => {
      const now = '2023-05-23T11:00:00Z';
      const query = (pathsFilter: Record<string, unknown>) => ({ dateRange: { date_from: '2012-01-01' }, pathsFilter: { stepLimit: 10, ...pathsFilter } });
      expect(await paths('single_person', query({}), now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
        link('3_/3', '4_/screen1', 1, ONE_MINUTE),
        link('4_/screen1', '5_/screen2', 1, ONE_MINUTE),
        link('5_/screen2', '6_/screen3', 1, 2 * ONE_MINUTE),
        link('6_/screen3', '7_/custom1', 1, ONE_MINUTE),
        link('7_/custom1', '8_/custom2', 1, ONE_MINUTE),
        link('8_/custom2', '9_/custom3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await paths('single_person', query({ includeEventTypes: ['$pageview', '$screen'] }), now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
        link('3_/3', '4_/screen1', 1, ONE_MINUTE),
        link('4_/screen1', '5_/screen2', 1, ONE_MINUTE),
        link('5_/screen2', '6_/screen3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await paths('single_person', query({ includeEventTypes: ['$pageview', 'custom_event'], excludeEvents: ['/custom1', '/custom3'] }), now)).toEqual([
        link('1_/1', '2_/2', 1, ONE_MINUTE),
        link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
        link('3_/3', '4_/custom2', 1, 6 * ONE_MINUTE),
      ]);
    });

    it('test_respect_session_limits: a day apart is a new session', async () => {
      expect(await paths('sessions', { dateRange: { date_from: '2012-01-01' }, pathsFilter: {} }, '2023-05-23T11:00:00Z')).toEqual([
        link('1_/1', '2_/2', 2, ONE_MINUTE),
        link('2_/2', '3_/3', 2, 3 * ONE_MINUTE),
      ]);
    });

    it('test_removes_duplicates: repeats collapse, timed from the last of them', async () => {
      expect(await paths('duplicates', { dateRange: { date_from: '2012-01-01' }, pathsFilter: {} }, '2012-01-02T00:00:00Z')).toEqual([
        link('1_/1', '2_/2', 2, 1.5 * ONE_MINUTE),
        link('2_/2', '3_/3', 2, 3 * ONE_MINUTE),
      ]);
    });

    it("test_start_and_end: between two points, a long path's middle as '...'", async () => {
      const query = {
        dateRange: { date_from: '2012-05-01 00:00:00', date_to: '2021-05-07 00:00:00' },
        pathsFilter: { includeEventTypes: ['$pageview'], startPoint: '/5', endPoint: '/about' },
      };
      const now = '2021-05-10T00:00:00Z';
      expect(await paths('start_and_end', query, now)).toEqual([link('1_/5', '2_/about', 2, 60000)]);
      expect(await peopleAt('start_and_end', query, { pathStartKey: '1_/5', pathEndKey: '2_/about' }, now)).toEqual(
        who('start_and_end', 'person_1', 'person_2'),
      );
      const long = { ...query, pathsFilter: { ...query.pathsFilter, startPoint: '/2', stepLimit: 4 } };
      expect(await paths('start_and_end', long, now)).toEqual([
        link('1_/2', '2_/3', 1, ONE_MINUTE),
        link('2_/3', '3_...', 1, ONE_MINUTE),
        link('3_...', '4_/5', 1, ONE_MINUTE),
        link('4_/5', '5_/about', 1, ONE_MINUTE),
      ]);
      expect(await peopleAt('start_and_end', long, { pathStartKey: '3_...', pathEndKey: '4_/5' }, now)).toEqual(who('start_and_end', 'person_1'));
    });

    it('test_wildcard_groups_across_people: a grouping names the item', async () => {
      const query = { dateRange: { date_from: '2012-01-01' }, pathsFilter: { stepLimit: 4, includeEventTypes: ['$pageview'], pathGroupings: ['/bar/*/foo'] } };
      expect(await paths('wildcard', query, '2023-05-23T11:00:00Z')).toEqual([
        link('1_/1', '2_/bar/*/foo', 3, ONE_MINUTE),
        link('2_/bar/*/foo', '3_/3', 3, 2 * ONE_MINUTE),
      ]);
    });

    it('test_wildcard_groups_evil_input: groupings match as literal text, whatever they hold', async () => {
      const pathGroupings = ['(a+)+', '[aaa|aaaa]+', '1.*', '.*', '/3?q=1', '/3*'];
      const query = { dateRange: { date_from: '2012-01-01' }, pathsFilter: { includeEventTypes: ['$pageview'], pathGroupings } };
      expect(await paths('evil', query, '2023-05-23T11:00:00Z')).toEqual([
        link('1_/1', '2_/3*', 1, 3 * ONE_MINUTE),
        link(`1_${EVIL}`, '2_/2/bar/aaa', 1, ONE_MINUTE),
        link('2_/2/bar/aaa', '3_/3*', 1, 2 * ONE_MINUTE),
      ]);
    });

    it('test_person_dropoffs: who drops off at, reaches and goes past each step', async () => {
      const query = {
        pathsFilter: { includeEventTypes: ['custom_event'] },
        dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' },
      };
      const count = async (keys: Record<string, string>) => (await peopleAt('dropoffs', query, keys)).length;
      expect(await count({ pathDropoffKey: '2_step two' })).toBe(5);
      expect(await count({ pathEndKey: '2_step two' })).toBe(35);
      expect(await count({ pathStartKey: '2_step two' })).toBe(30);
      expect(await count({ pathDropoffKey: '3_step three' })).toBe(10);
      expect(await count({ pathEndKey: '3_step three' })).toBe(30);
      expect(await count({ pathStartKey: '3_step three' })).toBe(20);
      expect(await count({ pathDropoffKey: '4_step four' })).toBe(20);
      expect(await count({ pathEndKey: '4_step four' })).toBe(20);
      expect(await count({ pathStartKey: '4_step four' })).toBe(0);
    });

    it('test_start_dropping_orphaned_edges: an edge cut off from the start by the edge limit is dropped', async () => {
      const query = { dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }, pathsFilter: { startPoint: '/2', edgeLimit: 6 } };
      expect(await paths('orphans', query, '2021-05-10T00:00:00Z')).toEqual([
        link('1_/2', '2_/3', 5, 60000),
        link('2_/3', '3_/4', 5, 60000),
        link('3_/4', '4_/5', 5, 60000),
        link('4_/5', '5_/about', 5, 60000),
        link('1_/2', '2_/a', 1, 30000),
      ]);
    });

    it('test_groups_filtering: a group property filter', async () => {
      const query = (index: number, value: string) => ({
        dateRange: { date_from: '2012-01-01', date_to: '2012-02-01' },
        properties: {
          type: 'AND',
          values: [{ type: 'AND', values: [{ group_type_index: index, key: 'industry', operator: 'exact', type: 'group', value: [value] }] }],
        },
        pathsFilter: { includeEventTypes: ['$pageview', '$screen', 'custom_event'], stepLimit: 4 },
      });
      const now = '2012-03-01T00:00:00Z';
      expect(await paths('groups', query(0, 'finance'), now)).toEqual([link('1_/1', '2_/2', 1, ONE_MINUTE), link('2_/2', '3_/3', 1, 2 * ONE_MINUTE)]);
      expect(await paths('groups', query(0, 'technology'), now)).toEqual([
        link('1_/screen1', '2_/screen2', 1, ONE_MINUTE),
        link('2_/screen2', '3_/screen3', 1, 2 * ONE_MINUTE),
      ]);
      expect(await paths('groups', query(1, 'technology'), now)).toEqual([
        link('1_/custom1', '2_/custom2', 1, ONE_MINUTE),
        link('2_/custom2', '3_/custom3', 1, 2 * ONE_MINUTE),
      ]);
    });
  });

  describe('beyond the ported tests', () => {
    const now = '2012-01-15T03:21:34Z';

    it('localPathCleaningFilters: each RE2 rule replaces its matches with its alias, in order', async () => {
      const cleaned = await paths('cleaning', { pathsFilter: { localPathCleaningFilters: [{ regex: '/merchant/\\d+/', alias: '/merchant/:id/' }] } }, now);
      expect(edges(cleaned)).toEqual([['1_/merchant/:id/dashboard', '2_/pricing', 2]]);
      // p1's two merchant pages collapse into one, timed from the second: 1 and 4 minutes to /pricing.
      expect(cleaned[0]!.average_conversion_time).toBe(2.5 * ONE_MINUTE);
      const raw = await paths('cleaning', { pathsFilter: {} }, now);
      expect(edges(raw)).toEqual([
        ['1_/merchant/123/dashboard', '2_/merchant/456/dashboard', 1],
        ['1_/merchant/7/dashboard', '2_/pricing', 1],
        ['2_/merchant/456/dashboard', '3_/pricing', 1],
      ]);
    });

    it('minEdgeWeight and maxEdgeWeight keep the edges taken that many times', async () => {
      const all = { dateRange: { date_from: '2021-05-01', date_to: '2021-05-07' }, pathsFilter: { includeEventTypes: ['custom_event'] } };
      const weights = async (pathsFilter: Record<string, unknown>) =>
        (await paths('dropoffs', { ...all, pathsFilter: { ...all.pathsFilter, ...pathsFilter } }, '2021-05-10T00:00:00Z')).map((l) => l.value);
      expect(await weights({})).toEqual([35, 30, 20]);
      expect(await weights({ minEdgeWeight: 25 })).toEqual([35, 30]);
      expect(await weights({ minEdgeWeight: 30, maxEdgeWeight: 35 })).toEqual([35, 30]);
      // Without the 1_ → 2_ edge, the rest hangs from no start and is dropped.
      expect(await weights({ maxEdgeWeight: 34 })).toEqual([]);
    });

    it("a session's empty last item is dropped, as PostHog's collapse of repeats drops it", async () => {
      // PostHog marks an item kept when it differs from the next, the last compared with '': an empty last item is never kept.
      expect(edges(await paths('empty_last', { pathsFilter: {} }, now))).toEqual([
        ['1_', '2_/2', 1],
        ['1_signup', '2_', 1],
        ['2_', '3_purchase', 1],
      ]);
    });

    it('test_person_on_events_v2: events sent before a merge follow the distinct id to the merged person', async () => {
      expect(await paths('merged', { pathsFilter: {} }, now)).toEqual([link('1_/1', '2_/2', 1, ONE_MINUTE)]);
      expect(await peopleAt('merged', { pathsFilter: {} }, { pathEndKey: '2_/2' }, now)).toEqual(who('merged', 'p1'));
    });

    it("a deleted person's events count for no one, on the edges and among the persons", async () => {
      expect(edges(await paths('deleted', { pathsFilter: {} }, now))).toEqual([['1_/1', '2_/2', 1]]);
      expect(await peopleAt('deleted', { pathsFilter: {} }, { pathEndKey: '2_/2' }, now)).toEqual(who('deleted', 'kept'));
    });

    it('runs points, groupings, cleaning, exclusions, HogQL items and weights together on the engine', async () => {
      const points = [
        {},
        { startPoint: 'custom_event_1' },
        { endPoint: 'custom_event_3' },
        { startPoint: 'custom_event_1', endPoint: 'custom_event_3', stepLimit: 2 },
      ];
      const items = [
        {},
        { includeEventTypes: ['custom_event'], excludeEvents: ['custom_event_2'] },
        { includeEventTypes: ['hogql', '$pageview'], pathsHogQLExpression: "concat(event, '!')" },
      ];
      const shaping = [
        {},
        { pathGroupings: ['custom_event_*'] },
        { localPathCleaningFilters: [{ regex: '_(\\d)$', alias: '#\\1' }], minEdgeWeight: 1, maxEdgeWeight: 5 },
      ];
      // Every point with every kind of item, each with one of the shapings in turn (all pairs, in a few seconds).
      let ran = 0;
      for (const [p, point] of points.entries()) {
        for (const [i, item] of items.entries()) {
          const pathsFilter = { ...point, ...item, ...shaping[(p + i) % shaping.length] };
          const links = await paths('custom', { pathsFilter }, '2021-05-02T00:00:00Z');
          expect(links.every((l) => /^\d+_/.test(l.source) && /^\d+_/.test(l.target) && l.value > 0)).toBe(true);
          if (i === p % items.length) await peopleAt('custom', { pathsFilter }, { pathDropoffKey: '2_x' }, '2021-05-02T00:00:00Z');
          ran++;
        }
      }
      expect(ran).toBe(12);
    });

    it('refuses what it cannot answer with a 400 naming the field', async () => {
      const refused = (query: Record<string, unknown>) =>
        paths('custom', query, now).then(
          () => null,
          (e: { attr?: string; code?: string }) => [e.attr, e.code],
        );
      expect(await refused({ pathsFilter: { localPathCleaningFilters: [{ regex: '(?<=a)b', alias: 'x' }] } })).toEqual([
        'local_path_cleaning_filters__0',
        'invalid_regex',
      ]);
      expect(await refused({ pathsFilter: { includeEventTypes: ['$autocapture'] } })).toEqual(['include_event_types', 'invalid_choice']);
      expect(await refused({ pathsFilter: { stepLimit: 1000 } })).toEqual(['step_limit', 'max_value']);
      expect(await refused({ pathsFilter: {}, funnelPathsFilter: { funnelStep: 1 } })).toEqual(['funnel_paths', 'not_supported']);
      expect(await refused({ pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'nosuchfunction(event)' } })).toEqual([
        'paths_hogql_expression',
        'invalid_hogql',
      ]);
    });
  });
});
