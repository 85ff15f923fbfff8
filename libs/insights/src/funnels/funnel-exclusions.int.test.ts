import { createTestStores, insertJourneys, journeyPersonUuid, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { insertAction } from '../repositories/actions.repository';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelActorsPage, parseFunnelActorsRequest } from './funnel-actors';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';
import { funnelsQueryToFilter } from './funnels-query-node';

/**
 * Funnel exclusions and conversion windows, ported from PostHog's
 * posthog/hogql_queries/insights/funnels/test/test_funnel.py (each test named in its title) with
 * their data, query, asserted numbers and asserted actors (`_get_actor_ids_at_step`). Where PostHog's UDF funnel answers "no rows" (every
 * actor excluded) and the legacy one answers zero counts, Sightline answers zero counts, which the
 * PostHog tests accept as well.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
const PATH = ['user signed up', '$pageview', 'insight viewed', 'invite teammate', 'pageview2'];

/** One PostHog test's people, each case in a project of its own. */
const CASES: Record<string, JourneyPeople> = {
  noEndEvent: {
    person1: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'paid', timestamp: '2021-05-01 02:00:00' },
    ],
    person2: [
      { event: 'user signed up', timestamp: '2021-05-01 03:00:00' },
      { event: 'x', timestamp: '2021-05-01 03:30:00' },
      { event: 'paid', timestamp: '2021-05-01 04:00:00' },
    ],
    person3: [
      { event: 'user signed up', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 06:00:00' },
    ],
    person4: [
      { event: 'user signed up', timestamp: '2021-05-01 07:00:00' },
      { event: 'x', timestamp: '2021-05-02 08:00:00' },
    ],
  },
  possibleNoEnd1: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'exclusion', timestamp: '2021-05-01 00:00:01' },
      { event: 'step one', timestamp: '2021-05-01 00:00:31' },
    ],
  },
  possibleNoEnd2: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'step one', timestamp: '2021-05-01 00:00:31' },
      { event: 'exclusion', timestamp: '2021-05-01 00:00:32' },
    ],
  },
  possibleNoEnd3: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'step one', timestamp: '2021-05-01 00:00:01' },
      { event: 'exclusion', timestamp: '2021-05-01 00:00:02' },
    ],
  },
  withActions: {
    person1: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'paid', timestamp: '2021-05-01 02:00:00' },
    ],
    person2: [
      { event: 'user signed up', timestamp: '2021-05-01 03:00:00' },
      { event: 'sign up', timestamp: '2021-05-01 03:30:00', properties: { key: 'val' } },
      { event: 'paid', timestamp: '2021-05-01 04:00:00' },
    ],
    person3: [
      { event: 'user signed up', timestamp: '2021-05-01 05:00:00' },
      { event: 'paid', timestamp: '2021-05-01 06:00:00' },
    ],
  },
  fullWindow: {
    person1: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'paid', timestamp: '2021-05-01 02:00:00' },
    ],
    person2: [
      { event: 'user signed up', timestamp: '2021-05-01 03:00:00' },
      { event: 'x 1 name with numbers 2', timestamp: '2021-05-01 03:30:00' },
      { event: 'paid', timestamp: '2021-05-01 04:00:00' },
    ],
    person3: [
      { event: 'user signed up', timestamp: '2021-05-01 05:00:00' },
      { event: 'paid', timestamp: '2021-05-01 06:00:00' },
    ],
  },
  betweenSteps: {
    person1: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'x', timestamp: '2021-05-01 03:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'x', timestamp: '2021-05-01 04:30:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 05:30:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
    person2: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'x', timestamp: '2021-05-01 04:30:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 05:30:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
    person3: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'x', timestamp: '2021-05-01 01:30:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 05:30:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
  },
  multipleExclusions: {
    person1: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'x', timestamp: '2021-05-01 02:00:00' },
      { event: '$pageview', timestamp: '2021-05-01 03:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'y', timestamp: '2021-05-01 04:30:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
    person2: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'y', timestamp: '2021-05-01 01:30:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'y', timestamp: '2021-05-01 04:30:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 05:30:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
    person3: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: 'x', timestamp: '2021-05-01 01:30:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'x', timestamp: '2021-05-01 05:30:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
    person4: [
      { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
      { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
      { event: 'insight viewed', timestamp: '2021-05-01 04:00:00' },
      { event: 'invite teammate', timestamp: '2021-05-01 05:00:00' },
      { event: 'pageview2', timestamp: '2021-05-01 06:00:00' },
    ],
  },
  sameTimestamp: {
    test: [
      { event: 'step zero', timestamp: '2024-01-10 12:00:00' },
      ...Array.from({ length: 30 }, () => ({ event: 'step one', timestamp: '2024-01-10 12:01:00' })),
      { event: 'exclusion', timestamp: '2024-01-10 12:01:00' },
      { event: 'step two', timestamp: '2024-01-10 12:01:00' },
      { event: 'step three', timestamp: '2024-01-10 12:02:00' },
    ],
  },
  shortExclusions: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'exclusion', timestamp: '2021-05-01 00:00:01' },
      { event: 'step two', timestamp: '2021-05-01 00:00:31' },
      { event: 'step one', timestamp: '2021-05-01 01:00:00' },
      { event: 'step two', timestamp: '2021-05-01 01:00:29' },
    ],
  },
  excludedCompletion: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      // The exclusion comes after the window ran out.
      { event: 'exclusion', timestamp: '2021-05-01 00:00:11' },
      { event: 'step one', timestamp: '2021-05-01 00:00:12' },
      { event: 'exclusion', timestamp: '2021-05-01 00:00:13' },
      { event: 'step two', timestamp: '2021-05-01 00:00:14' },
    ],
  },
  expiredExclusion: {
    user_one: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      // The exclusion comes after the window ran out.
      { event: 'exclusion', timestamp: '2021-05-01 00:00:11' },
      { event: 'step two', timestamp: '2021-05-01 00:00:12' },
    ],
  },
  propertyFilter: {
    user_excluded: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'exclusion', properties: { exclude_me: 'true' }, timestamp: '2021-05-01 00:00:01' },
      { event: 'step two', timestamp: '2021-05-01 00:00:02' },
    ],
    user_excluded_also: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'exclusion', properties: { exclude_me: 'yes' }, timestamp: '2021-05-01 00:00:01' },
      { event: 'step two', timestamp: '2021-05-01 00:00:02' },
    ],
    user_first_step: [{ event: 'step one', timestamp: '2021-05-01 00:00:00' }],
    user_included: [
      { event: 'step one', timestamp: '2021-05-01 00:00:00' },
      { event: 'exclusion', properties: { exclude_me: 'false' }, timestamp: '2021-05-01 00:00:01' },
      { event: 'step two', timestamp: '2021-05-01 00:00:02' },
    ],
  },
  conversionWindow: Object.fromEntries(
    Array.from({ length: 25 }, (_, i) => [
      `user_${i}`,
      [
        { event: 'step one', timestamp: '2021-05-01 00:00:00' },
        { event: 'step two', timestamp: i < 10 ? '2021-05-02 00:00:00' : '2021-05-10 00:00:00' },
      ],
    ]),
  ),
  conversionWindowSeconds: Object.fromEntries(
    Array.from({ length: 25 }, (_, i) => [
      `user_${i}`,
      [
        { event: 'step one', timestamp: '2021-05-01 00:00:00' },
        { event: 'step two', timestamp: i < 10 ? '2021-05-01 00:00:10' : '2021-05-01 00:00:20' },
      ],
    ]),
  ),
  longInterval: { only_second_step: [{ event: 'added to cart', timestamp: '2021-05-02 00:00:00' }] },
  repeatStepWindowUnits: {
    stopped_after_signup1: [
      { event: 'user signed up', timestamp: '2024-05-30 10:00:00' },
      { event: 'user signed up', timestamp: '2024-05-30 10:00:01' },
    ],
    stopped_after_signup2: [{ event: 'user signed up', timestamp: '2024-05-30 10:00:00' }],
  },
  dstWindow: {
    user_1: [
      { event: '$pageview', timestamp: '2024-03-01 15:10:00' },
      // Inside the 14-day window that ends at 15:10 on the 15th.
      { event: 'user signed up', timestamp: '2024-03-15 14:27:00' },
    ],
  },
};

describe('funnel exclusions and conversion windows (PostHog test_funnel.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  const teams: Record<string, number> = {};
  let signUpAction = 0;

  const funnel = async (name: string, body: Record<string, unknown>, timezone = 'UTC') =>
    (await service.runFunnel({ id: teams[name]!, timezone } as never, parseFunnelFilter(body), NOW)).result as FunnelStep[];
  const counts = (steps: FunnelStep[]) => steps.map((s) => s.count);
  /** PostHog's _get_actor_ids_at_step: the ids of the actors at a funnel step, in any order. */
  const actorIds = async (name: string, body: Record<string, unknown>, funnelStep: number) =>
    (
      await service.runFunnelActors(
        { id: teams[name]!, timezone: 'UTC' },
        parseFunnelFilter(body),
        parseFunnelActorsRequest({ funnelStep }),
        parseFunnelActorsPage({ select: ['id'] }),
        NOW,
      )
    ).results
      .map((row) => row[0] as string)
      .sort();
  const who = (name: string, ...people: string[]) => people.map((p) => journeyPersonUuid(p, teams[name])).sort();
  const exclusion = (id: string, from: number, to: number) => ({ id, type: 'events', funnel_from_step: from, funnel_to_step: to });
  const pathFunnel = (exclusions: unknown[]) => ({
    events: PATH.map((id, order) => ({ id, type: 'events', order })),
    date_from: '2021-05-01 00:00:00',
    date_to: '2021-05-14 00:00:00',
    insight: 'FUNNELS',
    exclusions,
  });
  const twoSteps = (first: string, second: string) => [
    { id: first, order: 0 },
    { id: second, order: 1 },
  ];

  beforeAll(async () => {
    stores = await createTestStores('funnelx');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const name of Object.keys(CASES)) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_funnelx_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
      // Funnels need no person rows: an event's person id is its actor.
      await insertJourneys(stores, CASES[name]!, { teamId: row!.id, createPeople: false });
    }
    signUpAction = (
      await insertAction(
        stores.db,
        teams['withActions']!,
        { name: 'sign up', steps: [{ event: 'sign up', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' }] }] },
        null,
      )
    ).id;
  });
  afterAll(() => stores.close());

  it('test_funnel_exclusions_invalid_params (test_funnel.py): bad exclusion ranges are a 400', () => {
    const base = { events: twoSteps('user signed up', 'paid'), funnel_window_days: 14, date_from: '2021-05-01 00:00:00', date_to: '2021-05-14 00:00:00' };
    for (const [from, to] of [
      [1, 1],
      [1, 2],
      [2, 1],
      [0, 2],
    ] as const) {
      expect(() => parseFunnelFilter({ ...base, exclusions: [exclusion('x', from, to)] })).toThrow(QueryFilterError);
    }
    // An exclusion a step in its range already matches is refused too (FunnelBase's is_equal / is_superset check).
    expect(() => parseFunnelFilter({ ...base, exclusions: [exclusion('paid', 0, 1)] })).toThrow(/part of funnel steps/);
  });

  it('test_funnel_exclusion_no_end_event (test_funnel.py): an exclusion outside the window keeps the person', async () => {
    const body = {
      events: twoSteps('user signed up', 'paid'),
      funnel_window_interval: 1,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      exclusions: [exclusion('x', 0, 1)],
    };
    const steps = await funnel('noEndEvent', body);
    expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid']);
    expect(counts(steps)).toEqual([2, 1]);
    expect(await actorIds('noEndEvent', body, 1)).toEqual(who('noEndEvent', 'person1', 'person4'));
    expect(await actorIds('noEndEvent', body, 2)).toEqual(who('noEndEvent', 'person1'));
  });

  const secondsFunnel = (window: number) => ({
    funnel_viz_type: 'steps',
    interval: 'day',
    date_from: '2021-05-01 00:00:00',
    date_to: '2021-05-13 23:59:59',
    funnel_window_interval: window,
    funnel_window_interval_unit: 'second',
    events: twoSteps('step one', 'step two'),
    exclusions: [exclusion('exclusion', 0, 1)],
  });

  it('test_funnel_exclusion_multiple_possible_no_end_event1 (test_funnel.py): a later start after an exclusion counts', async () => {
    expect(counts(await funnel('possibleNoEnd1', secondsFunnel(10)))).toEqual([1, 0]);
  });

  it('test_funnel_exclusion_multiple_possible_no_end_event2 (test_funnel.py): an exclusion out of the first start’s window', async () => {
    expect(counts(await funnel('possibleNoEnd2', secondsFunnel(10)))).toEqual([1, 0]);
  });

  it('test_funnel_exclusion_multiple_possible_no_end_event3 (test_funnel.py): an exclusion in both starts’ windows drops the person', async () => {
    expect(counts(await funnel('possibleNoEnd3', secondsFunnel(10)))).toEqual([0, 0]);
  });

  it('test_funnel_exclusions_with_actions (test_funnel.py): an action as the exclusion', async () => {
    const body = {
      events: twoSteps('user signed up', 'paid'),
      funnel_window_days: 14,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      exclusions: [{ id: signUpAction, type: 'actions', funnel_from_step: 0, funnel_to_step: 1 }],
    };
    expect(counts(await funnel('withActions', body))).toEqual([2, 2]);
    expect(await actorIds('withActions', body, 1)).toEqual(who('withActions', 'person1', 'person3'));
    expect(await actorIds('withActions', body, 2)).toEqual(who('withActions', 'person1', 'person3'));
  });

  it('test_funnel_exclusions_full_window (test_funnel.py)', async () => {
    const body = {
      events: twoSteps('user signed up', 'paid'),
      funnel_window_days: 14,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      exclusions: [exclusion('x 1 name with numbers 2', 0, 1)],
    };
    expect(counts(await funnel('fullWindow', body))).toEqual([2, 2]);
    expect(await actorIds('fullWindow', body, 1)).toEqual(who('fullWindow', 'person1', 'person3'));
    expect(await actorIds('fullWindow', body, 2)).toEqual(who('fullWindow', 'person1', 'person3'));
  });

  it('test_advanced_funnel_exclusions_between_steps (test_funnel.py): each range excludes only what happens inside it', async () => {
    const run = async (from: number, to: number) => counts(await funnel('betweenSteps', pathFunnel([exclusion('x', from, to)])));
    expect(await run(0, 1)).toEqual([2, 2, 2, 2, 2]);
    expect(await run(1, 2)).toEqual([2, 2, 2, 2, 2]);
    expect(await run(2, 3)).toEqual([1, 1, 1, 1, 1]);
    expect(await run(3, 4)).toEqual([0, 0, 0, 0, 0]);
    expect(await run(1, 3)).toEqual([1, 1, 1, 1, 1]);
    // The actors at step 1 of each range.
    const at = async (from: number, to: number) => actorIds('betweenSteps', pathFunnel([exclusion('x', from, to)]), 1);
    expect(await at(0, 1)).toEqual(who('betweenSteps', 'person1', 'person2'));
    expect(await at(1, 2)).toEqual(who('betweenSteps', 'person2', 'person3'));
    expect(await at(2, 3)).toEqual(who('betweenSteps', 'person3'));
    expect(await at(3, 4)).toEqual([]);
    expect(await at(1, 3)).toEqual(who('betweenSteps', 'person3'));
  });

  it('test_advanced_funnel_multiple_exclusions_between_steps (test_funnel.py)', async () => {
    const run = async (exclusions: unknown[]) => counts(await funnel('multipleExclusions', pathFunnel(exclusions)));
    expect(await run([exclusion('x', 0, 1), exclusion('y', 2, 3)])).toEqual([1, 1, 1, 1, 1]);
    expect(await run([exclusion('x', 0, 1), exclusion('y', 0, 1)])).toEqual([1, 1, 1, 1, 1]);
    expect(await run([exclusion('x', 0, 4), exclusion('y', 0, 4)])).toEqual([1, 1, 1, 1, 1]);
    for (const exclusions of [
      [exclusion('x', 0, 1), exclusion('y', 2, 3)],
      [exclusion('x', 0, 1), exclusion('y', 0, 1)],
      [exclusion('x', 0, 4), exclusion('y', 0, 4)],
    ]) {
      expect(await actorIds('multipleExclusions', pathFunnel(exclusions), 1)).toEqual(who('multipleExclusions', 'person4'));
    }
  });

  it('test_multiple_events_same_timestamp_exclusions (test_funnel.py): an exclusion at the instant of a step is not applied', async () => {
    for (const [from, to] of [
      [0, 1],
      [1, 2],
    ]) {
      const steps = await funnel('sameTimestamp', {
        funnel_viz_type: 'steps',
        date_from: '2024-01-10 00:00:00',
        date_to: '2024-01-12 00:00:00',
        events: ['step zero', 'step one', 'step two', 'step three'].map((id, order) => ({ id, order })),
        exclusions: [exclusion('exclusion', from!, to!)],
      });
      expect(steps).toHaveLength(4);
      expect(steps[3]!.count).toBe(1);
    }
  });

  it('test_short_exclusions (test_funnel.py): a second start converts after the first was excluded', async () => {
    const steps = await funnel('shortExclusions', secondsFunnel(30));
    expect(steps[1]!.count).toBe(1);
    expect(steps[1]!.average_conversion_time).toBe(29);
  });

  it('test_excluded_completion (test_funnel.py): a completion through an excluded chain drops the person', async () => {
    expect(counts(await funnel('excludedCompletion', secondsFunnel(10)))).toEqual([0, 0]);
  });

  it('test_excluded_after_time_expires (test_funnel_udf.py): an exclusion after the window leaves the start counted', async () => {
    expect(counts(await funnel('expiredExclusion', secondsFunnel(10)))).toEqual([1, 0]);
  });

  it('test_exclusion_with_property_filter (test_funnel.py): an exclusion’s own properties decide what it matches', async () => {
    const exclusionNode = (value: string) => ({
      kind: 'EventsNode',
      event: 'exclusion',
      properties: [{ key: 'exclude_me', value, operator: 'exact', type: 'event' }],
      funnelFromStep: 0,
      funnelToStep: 1,
    });
    const query = {
      kind: 'FunnelsQuery',
      dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-01 23:59:59' },
      interval: 'day',
      series: [
        { kind: 'EventsNode', event: 'step one', name: 'step one' },
        { kind: 'EventsNode', event: 'step two', name: 'step two' },
      ],
      funnelsFilter: {
        funnelVizType: 'steps',
        funnelWindowInterval: 10,
        funnelWindowIntervalUnit: 'second',
        exclusions: [exclusionNode('true'), exclusionNode('yes')],
      },
    };
    expect(counts(await funnel('propertyFilter', funnelsQueryToFilter(query)))).toEqual([2, 1]);
  });

  it('test_funnel_conversion_window (test_funnel.py): a 7-day window', async () => {
    const body = {
      interval: 'day',
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      funnel_window_interval: 7,
      events: ['step one', 'step two', 'step three'].map((id, order) => ({ id, order })),
    };
    expect(counts(await funnel('conversionWindow', body))).toEqual([25, 10, 0]);
    // The ten who converted inside the window.
    expect(await actorIds('conversionWindow', body, 2)).toEqual(who('conversionWindow', ...Array.from({ length: 10 }, (_, i) => `user_${i}`)));
  });

  it('test_funnel_conversion_window_seconds (test_funnel.py): a 15-second window', async () => {
    const body = {
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      funnel_window_interval: 15,
      funnel_window_interval_unit: 'second',
      events: ['step one', 'step two', 'step three'].map((id, order) => ({ id, order })),
    };
    expect(counts(await funnel('conversionWindowSeconds', body))).toEqual([25, 10, 0]);
    expect(await actorIds('conversionWindowSeconds', body, 2)).toEqual(who('conversionWindowSeconds', ...Array.from({ length: 10 }, (_, i) => `user_${i}`)));
  });

  it('test_funnel_with_long_interval_no_first_step (test_funnel.py): a 3,122,064,000-second window answers', async () => {
    const steps = await funnel('longInterval', {
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-08 23:59:59',
      events: twoSteps('user signed up', 'added to cart'),
      funnel_window_interval: 3_122_064_000,
      funnel_window_interval_unit: 'second',
    });
    expect(steps.map((s) => s.name)).toEqual(['user signed up', 'added to cart']);
    expect(counts(steps)).toEqual([0, 0]);
  });

  it('test_basic_funnel_with_repeat_step_updated_param (test_funnel.py): the window in days, weeks or hours', async () => {
    const base = { events: twoSteps('user signed up', 'user signed up'), date_from: '-7d' };
    const days = await funnel('repeatStepWindowUnits', { ...base, funnel_window_interval: 14, funnel_window_interval_unit: 'day' });
    expect(counts(days)).toEqual([2, 1]);
    const weeks = await funnel('repeatStepWindowUnits', { ...base, funnel_window_days: 14, funnel_window_interval: 2, funnel_window_interval_unit: 'week' });
    const hours = await funnel('repeatStepWindowUnits', { ...base, funnel_window_days: 14, funnel_window_interval: 1, funnel_window_interval_unit: 'hour' });
    // breakdown_cases.py's assert_funnel_results_equal: every field but the people URLs, which carry the request's own parameters.
    const withoutUrls = (steps: FunnelStep[]) => steps.map((s) => ({ ...s, converted_people_url: null, dropped_people_url: null }));
    expect(withoutUrls(weeks)).toEqual(withoutUrls(days));
    expect(withoutUrls(hours)).toEqual(withoutUrls(days));
  });

  it('test_funnel_window_ignores_dst_transition (test_funnel.py): the window is exact seconds in any timezone', async () => {
    const body = { events: twoSteps('$pageview', 'user signed up'), date_from: '2024-02-17', date_to: '2024-03-18' };
    for (const timezone of ['UTC', 'US/Pacific']) {
      const steps = await funnel('dstWindow', body, timezone);
      expect(steps[1]!.name).toBe('user signed up');
      expect(steps[1]!.count).toBe(1);
      expect(steps[1]!.average_conversion_time).toBe(1_207_020);
      expect(steps[1]!.median_conversion_time).toBe(1_207_020);
    }
  });
});
