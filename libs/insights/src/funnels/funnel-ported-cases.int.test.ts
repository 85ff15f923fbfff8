import { createTestStores, insertJourneys, journeyPersonUuid, type TestStores } from '@sightline/testkit';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelFilter } from './funnel-filter';

/**
 * Funnel answers PostHog gives by its code where its tests leave a gap, and the last cases of
 * posthog/hogql_queries/insights/funnels/test/ ported here. Each case has its own team.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
const TEAM = { noConversion: 411, groups: 412, groupsAcrossPersons: 413, ungrouped: 414, personless: 415 } as const;
const JANUARY_2020 = { date_from: '2020-01-01', date_to: '2020-01-14' };
const SIGNUP_PAID = [
  { id: 'user signed up', order: 0 },
  { id: 'paid', order: 1 },
];
/** An event of group type 0's `key`, the group's industry frozen on it as PostHog's persons-on-events do. */
const inOrg = (event: string, timestamp: string, key: string, industry: string) => ({
  event,
  timestamp,
  properties: { $group_0: key },
  groupProperties: { 0: { industry } },
});

describe('funnel cases ported from PostHog', () => {
  let stores: TestStores;
  let service: TrendsService;
  /** Projects of the cohort cases (cohorts belong to a project), and their cohorts. */
  const cohortCase = { team: 0, groupsTeam: 0, emailCohort: 0, staticCohort: 0, groupsCohort: 0 };
  const run = async (teamId: number, body: Record<string, unknown>) =>
    (await service.runFunnel({ id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW)).result;

  beforeAll(async () => {
    stores = await createTestStores('funnel_ported_cases');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await insertJourneys(
      stores,
      {
        // Both start the funnel, neither converts: one never does step two, the other too late.
        user_a: [{ event: 'step one', timestamp: '2021-06-08 18:00:00' }],
        user_b: [
          { event: 'step one', timestamp: '2021-06-09 13:00:00' },
          { event: 'step two', timestamp: '2021-06-20 13:00:00' },
        ],
      },
      { teamId: TEAM.noConversion },
    );
    await insertJourneys(
      stores,
      {
        user_1: [inOrg('user signed up', '2020-01-02 14:00:00', 'org:5', 'finance'), inOrg('user signed up', '2020-01-10 14:00:00', 'org:6', 'technology')],
        user_2: [inOrg('paid', '2020-01-03 14:00:00', 'org:5', 'finance')],
      },
      { teamId: TEAM.groups },
    );
    await insertJourneys(
      stores,
      {
        user_1: [inOrg('user signed up', '2020-01-02 14:00:00', 'org:5', 'finance'), inOrg('paid', '2020-01-03 14:00:00', 'org:6', 'technology')],
        user_2: [inOrg('user signed up', '2020-01-02 14:00:00', 'org:6', 'technology'), inOrg('paid', '2020-01-03 14:00:00', 'org:5', 'finance')],
      },
      { teamId: TEAM.groupsAcrossPersons },
    );
    await insertJourneys(
      stores,
      {
        user_1: [inOrg('user signed up', '2020-01-02 14:00:00', 'org:5', 'finance'), inOrg('paid', '2020-01-03 14:00:00', 'org:5', 'finance')],
        user_2: [{ event: 'user signed up', timestamp: '2020-01-02 14:00:00' }],
        user_3: [{ event: 'paid', timestamp: '2020-01-03 14:00:00' }],
        user_4: [
          { event: 'user signed up', timestamp: '2020-01-02 14:00:00' },
          { event: 'paid', timestamp: '2020-01-03 14:00:00' },
        ],
      },
      { teamId: TEAM.ungrouped },
    );
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    const newProject = async (name: string) =>
      (
        await stores.db.query<{ id: number }>(
          "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_fported_' || md5(random()::text)) RETURNING id",
          [org!.organization_id, name],
        )
      )[0]!.id;
    const newCohort = async (teamId: number, name: string, filters: unknown, isStatic = false) =>
      (
        await stores.db.query<{ id: number }>('INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, $2, $3, $4) RETURNING id', [
          teamId,
          name,
          isStatic,
          JSON.stringify(filters),
        ])
      )[0]!.id;
    const emailContains = (value: string) => ({ properties: { type: 'AND', values: [{ key: 'email', operator: 'icontains', value, type: 'person' }] } });
    cohortCase.team = await newProject('cohort step filters');
    const signupThenPay = [
      { event: 'user signed up', timestamp: '2020-01-02T14:00:00Z' },
      { event: 'paid', timestamp: '2020-01-10T14:00:00Z' },
    ];
    await insertJourneys(
      stores,
      { user_1: signupThenPay, user_2: signupThenPay },
      { teamId: cohortCase.team, personProperties: { user_1: { email: 'n@test.com' } } },
    );
    cohortCase.emailCohort = await newCohort(cohortCase.team, 'email .com', emailContains('.com'));
    // A static cohort of user_2 and a distinct id nobody has ("rando"): only user_2 is a member.
    cohortCase.staticCohort = await newCohort(cohortCase.team, 'static', null, true);
    await stores.ch.insert({
      table: 'person_static_cohort',
      format: 'JSONEachRow',
      values: [
        { team_id: cohortCase.team, cohort_id: cohortCase.staticCohort, person_id: journeyPersonUuid('user_2', cohortCase.team), is_deleted: 0, version: 1 },
      ],
    });
    cohortCase.groupsTeam = await newProject('groups with a cohort step filter');
    await insertJourneys(
      stores,
      {
        user_1: [
          inOrg('$pageview', '2020-01-02 14:00:00', 'org:5', 'finance'),
          inOrg('user signed up', '2020-01-02 14:00:00', 'org:5', 'finance'),
          inOrg('user signed up', '2020-01-10 14:00:00', 'org:6', 'technology'),
        ],
        user_2: [inOrg('paid', '2020-01-03 14:00:00', 'org:5', 'finance')],
        user_3: [inOrg('user signed up', '2020-01-02 14:00:00', 'org:7', ''), inOrg('paid', '2020-01-03 14:00:00', 'org:7', '')],
      },
      {
        teamId: cohortCase.groupsTeam,
        personProperties: { user_1: { email: 'fake@test.com' }, user_2: { email: 'fake@test.com' }, user_3: { email: 'fake_2@test.com' } },
      },
    );
    cohortCase.groupsCohort = await newCohort(cohortCase.groupsTeam, 'fake', emailContains('fake@test.com'));
    // Events whose person was never written (PostHog's personless events).
    await insertJourneys(
      stores,
      {
        personless: [
          { event: '$pageview', timestamp: '2024-03-22T13:00:00Z' },
          { event: 'sign up', timestamp: '2024-03-22T14:00:00Z' },
        ],
      },
      { teamId: TEAM.personless, createPeople: false },
    );
  });

  afterAll(() => stores.close());

  describe('test_funnel.py', () => {
    const counts = async (teamId: number, body: Record<string, unknown>) =>
      ((await run(teamId, body)) as { count: number; average_conversion_time: number | null }[]).map((s) => [s.count, s.average_conversion_time]);

    it('test_funnel_aggregation_with_groups: each group counts once, across the persons of its events', async () => {
      // org:5 signs up (user_1) and pays a day later (user_2); org:6 only signs up.
      expect(await counts(TEAM.groups, { events: SIGNUP_PAID, ...JANUARY_2020, aggregation_group_type_index: 0 })).toEqual([
        [2, null],
        [1, 86_400],
      ]);
    });

    it('test_funnel_aggregation_with_groups_across_persons: a group property filter keeps only that group', async () => {
      const body = {
        events: SIGNUP_PAID,
        ...JANUARY_2020,
        aggregation_group_type_index: 0,
        properties: [{ key: 'industry', value: 'finance', type: 'group', group_type_index: 0, operator: 'exact' }],
      };
      expect((await counts(TEAM.groupsAcrossPersons, body)).map(([count]) => count)).toEqual([1, 1]);
    });

    it('test_funnel_aggregation_with_groups_and_ungrouped_events: events without the group are left out', async () => {
      expect((await counts(TEAM.ungrouped, { events: SIGNUP_PAID, ...JANUARY_2020, aggregation_group_type_index: 0 })).map(([count]) => count)).toEqual([1, 1]);
    });

    /** The signup step kept to a cohort's members, with PostHog's legacy filter type. */
    const cohortStep = (type: string, cohortId: number) => [
      { id: 'user signed up', order: 0, properties: [{ type, key: 'id', value: cohortId }] },
      { id: 'paid', order: 1 },
    ];

    it('test_funnel_with_precalculated_cohort_step_filter', async () => {
      const body = { events: cohortStep('precalculated-cohort', cohortCase.emailCohort), ...JANUARY_2020 };
      expect((await counts(cohortCase.team, body)).map(([count]) => count)).toEqual([1, 1]);
    });

    it('test_funnel_with_static_cohort_step_filter', async () => {
      const body = { events: cohortStep('static-cohort', cohortCase.staticCohort), ...JANUARY_2020 };
      expect((await counts(cohortCase.team, body)).map(([count]) => count)).toEqual([1, 1]);
    });

    it('test_funnel_aggregation_with_groups_with_cohort_filtering', async () => {
      // org:5 and org:6 sign up through user_1 (in the cohort); org:7 through user_3, who is not.
      const body = { events: cohortStep('precalculated-cohort', cohortCase.groupsCohort), ...JANUARY_2020, aggregation_group_type_index: 0 };
      expect((await counts(cohortCase.groupsTeam, body)).map(([count]) => count)).toEqual([2, 1]);
    });

    it('test_funnel_personless_events_are_supported', async () => {
      const body = {
        events: [
          { id: '$pageview', order: 0 },
          { id: 'sign up', order: 1 },
        ],
        date_from: '2024-03-22',
        date_to: '2024-03-22',
      };
      expect((await counts(TEAM.personless, body)).map(([count]) => count)).toEqual([1, 1]);
    });
  });

  describe('time to convert with no conversions (funnel_time_to_convert_udf.py, funnel_time_to_convert.py)', () => {
    const timeToConvert = {
      funnel_viz_type: 'time_to_convert',
      date_from: '2021-06-07 00:00:00',
      date_to: '2021-06-13 23:59:59',
      funnel_window_interval: 7,
      funnel_window_interval_unit: 'day',
      events: [
        { id: 'step one', order: 0 },
        { id: 'step two', order: 1 },
      ],
    };

    it('ordered and strict (the UDF query): the empty bins from 0, 60 s wide, one bin by default', async () => {
      // Over no conversions arrayMin/arrayMax read 0, the auto bin count is greatest(1, ceil(cbrt(0))) = 1
      // and a zero span takes the 60-second fallback width; arrayAvg of nothing is NaN, answered null.
      const empty = {
        bins: [
          [0, 0],
          [60, 0],
        ],
        average_conversion_time: null,
      };
      expect(await run(TEAM.noConversion, timeToConvert)).toEqual(empty);
      expect(await run(TEAM.noConversion, { ...timeToConvert, funnel_order_type: 'strict' })).toEqual(empty);
      expect(await run(TEAM.noConversion, { ...timeToConvert, bin_count: 3 })).toEqual({
        bins: [
          [0, 0],
          [60, 0],
          [120, 0],
          [180, 0],
        ],
        average_conversion_time: null,
      });
    });

    it('unordered (the older query): the empty bins span 0 to 1 second', async () => {
      // ifNull(floor(min(...)), 0) and ifNull(ceil(max(...)), 1) over no conversions: width ceil(1 / bins).
      expect(await run(TEAM.noConversion, { ...timeToConvert, funnel_order_type: 'unordered' })).toEqual({
        bins: [
          [0, 0],
          [1, 0],
        ],
        average_conversion_time: null,
      });
      expect(await run(TEAM.noConversion, { ...timeToConvert, funnel_order_type: 'unordered', bin_count: 2 })).toEqual({
        bins: [
          [0, 0],
          [1, 0],
          [2, 0],
        ],
        average_conversion_time: null,
      });
    });
  });
});
