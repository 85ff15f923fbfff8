import { createTestStores, insertJourneys, type TestStores } from '@sightline/testkit';
import { insertAction } from '../repositories/actions.repository';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';

/**
 * First-time funnel steps (math first_time_for_user and first_time_for_user_with_filters),
 * ported from PostHog's posthog/hogql_queries/insights/funnels/test/test_funnel.py (run by
 * TestFOSSFunnel and, with the UDF funnel, TestFOSSFunnelUDF: the same answers) with their data
 * and asserted numbers. Each case has its own team.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');

const TEAM = { basic: 301, filters: 302, multipleIds: 303, personProperties: 304 } as const;

/** The elements chains of test_funnel.py's `_pay_event` and `_movie_event`. */
const PAY_BUTTON = 'button:nth-child="0"nth-of-type="1"text="Pay $10"';
const MOVIE_LINK = 'a:href="/movie"nth-child="0"nth-of-type="1"';

describe('first-time funnel steps (PostHog test_funnel.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  let actionsTeam: number;
  const steps = async (teamId: number, body: Record<string, unknown>) =>
    (await service.runFunnel({ id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW)).result as FunnelStep[];
  const counts = async (teamId: number, body: Record<string, unknown>) => (await steps(teamId, body)).map((s) => s.count);

  beforeAll(async () => {
    stores = await createTestStores('funnel_first_time');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    // Actions belong to a project: the actions case gets one of its own.
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    actionsTeam = (
      await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'first time', 'phc_funnel_first_time') RETURNING id",
        [org!.organization_id],
      )
    )[0]!.id;

    await insertJourneys(
      stores,
      {
        user_1: [
          { event: '$pageview', timestamp: '2024-03-22 13:46:00' },
          { event: '$pageview', timestamp: '2024-03-22 13:47:00' },
        ],
      },
      { teamId: TEAM.basic },
    );
    await insertJourneys(
      stores,
      {
        user_1: [
          { event: '$pageview', timestamp: '2024-03-22 13:46:00', properties: { $browser: 'Chrome' } },
          { event: '$pageview', timestamp: '2024-03-22 13:47:00', properties: { $browser: 'Chrome' } },
        ],
      },
      { teamId: TEAM.filters },
    );
    await insertJourneys(
      stores,
      {
        user_1: [
          { event: '$pageview', timestamp: '2024-03-22T13:00:00Z' },
          { event: '$pageview', timestamp: '2024-03-22T14:00:00Z' },
          { event: '$pageview', timestamp: '2023-03-22T13:00:00Z', distinctId: 'anon_1' },
        ],
        anon_2: [
          { event: '$pageview', timestamp: '2024-03-22T13:00:00Z' },
          { event: '$pageview', timestamp: '2024-03-22T14:00:00Z', distinctId: 'user_2' },
        ],
        anon_3: [{ event: '$pageview', timestamp: '2024-03-22T15:00:00Z' }],
      },
      { teamId: TEAM.multipleIds, distinctIds: { user_1: ['anon_1'], anon_2: ['user_2'] } },
    );
    await insertJourneys(
      stores,
      {
        user_1: [
          { event: 'event1', timestamp: '2024-03-20T13:00:00Z' },
          { event: 'event1', timestamp: '2024-03-21T13:00:00Z', properties: { property: 'woah' } },
          { event: 'event2', timestamp: '2024-03-23T13:00:00Z' },
        ],
        user_2: [{ event: 'event1', timestamp: '2024-03-22T14:00:00Z' }],
      },
      { teamId: TEAM.personProperties, personProperties: { user_1: { email: 'test@test.com' }, user_2: { email: 'bonjonjovi@gmail.com' } } },
    );
    // test_first_time_for_user_funnel_with_actions creates its events one after another "now"
    // (within the last 14 days): here a minute apart, in the same order.
    let minute = 0;
    const now = () => new Date(NOW - 2 * 86_400_000 + minute++ * 60_000).toISOString();
    const signup = () => ({ event: 'user signed up', timestamp: now() });
    const pay = (distinctId?: string) => ({ event: '$autocapture', timestamp: now(), elementsChain: PAY_BUTTON, distinctId });
    const movie = (distinctId?: string) => ({ event: '$autocapture', timestamp: now(), elementsChain: MOVIE_LINK, distinctId });
    await insertJourneys(
      stores,
      {
        stopped_after_signup: [signup()],
        stopped_after_pay: [signup(), pay()],
        had_anonymous_id: [
          signup(),
          pay('completed_movie'),
          movie('completed_movie'),
          // Somewhere in the past.
          { event: '$autocapture', timestamp: '2020-01-01', elementsChain: MOVIE_LINK, distinctId: 'completed_movie' },
        ],
        just_did_movie: [movie()],
        wrong_order: [pay(), signup(), movie()],
      },
      { teamId: actionsTeam, distinctIds: { had_anonymous_id: ['completed_movie'] } },
    );
  }, 60_000);
  afterAll(() => stores.close());

  it('test_first_time_for_user_funnel_basic (test_funnel.py)', async () => {
    const range = { date_from: '2024-03-22', date_to: '2024-03-22' };
    const firstThenAny = [
      { id: '$pageview', order: 0, math: 'first_time_for_user' },
      { id: '$pageview', order: 1 },
    ];
    expect(await counts(TEAM.basic, { ...range, events: firstThenAny })).toEqual([1, 1]);
    const firstTwice = [
      { id: '$pageview', order: 0, math: 'first_time_for_user' },
      { id: '$pageview', order: 1, math: 'first_time_for_user' },
    ];
    expect(await counts(TEAM.basic, { ...range, events: firstTwice })).toEqual([1, 0]);
  });

  it('test_first_time_for_user_funnel_with_actions (test_funnel.py)', async () => {
    const paid = await insertAction(stores.db, actionsTeam, { name: 'paid', steps: [{ event: '$autocapture', tag_name: 'button', text: 'Pay $10' }] }, null);
    const watched = await insertAction(
      stores.db,
      actionsTeam,
      { name: 'watched movie', steps: [{ event: '$autocapture', tag_name: 'a', href: '/movie' }] },
      null,
    );
    const result = await steps(actionsTeam, {
      events: [{ id: 'user signed up', type: 'events', order: 0 }],
      actions: [
        { id: paid.id, type: 'actions', order: 1 },
        { id: watched.id, type: 'actions', order: 2, math: 'first_time_for_user' },
      ],
      date_from: '-14d',
    });
    expect(result.map((s) => [s.name, s.count])).toEqual([
      ['user signed up', 4],
      ['paid', 2],
      // The one person who got there had watched a movie long before: not a first time.
      ['watched movie', 0],
    ]);
  });

  it('test_first_time_for_user_funnel_filters (test_funnel.py)', async () => {
    const range = { date_from: '2024-03-22', date_to: '2024-03-22' };
    const firstSecond = [
      { id: '$pageview', order: 0 },
      { id: '$pageview', order: 1, math: 'first_time_for_user' },
    ];
    expect(await counts(TEAM.filters, { ...range, events: firstSecond })).toEqual([1, 0]);
    const firstWithProperty = [
      { id: '$pageview', order: 0, math: 'first_time_for_user', properties: [{ key: '$browser', operator: 'exact', value: 'Chrome', type: 'event' }] },
      { id: '$pageview', order: 1 },
    ];
    expect(await counts(TEAM.filters, { ...range, events: firstWithProperty })).toEqual([1, 1]);
  });

  it('test_first_time_for_user_funnel_multiple_ids (test_funnel.py)', async () => {
    const events = [
      { id: '$pageview', order: 0, math: 'first_time_for_user' },
      { id: '$pageview', order: 1 },
    ];
    // person 1's first pageview (as anon_1) was a year before.
    expect(await counts(TEAM.multipleIds, { events, date_from: '2024-03-22', date_to: '2024-03-22' })).toEqual([2, 1]);
    expect(await counts(TEAM.multipleIds, { events, date_from: '2023-03-22', date_to: '2024-03-22' })).toEqual([3, 1]);
  });

  it('test_first_time_for_user_funnel_person_properties (test_funnel.py)', async () => {
    const woah = [{ key: 'property', value: 'woah', operator: 'exact', type: 'event' }];
    const query = (math: string, dateFrom: string) => ({
      events: [
        { id: 'event1', order: 0, math, properties: woah },
        { id: 'event2', order: 1 },
      ],
      date_from: dateFrom,
      date_to: '2024-03-24',
    });
    expect(await counts(TEAM.personProperties, query('first_time_for_user_with_filters', '2024-03-20'))).toEqual([1, 1]);
    // user_1's first event1 lacks the property, user_2's too: nobody starts.
    expect((await counts(TEAM.personProperties, query('first_time_for_user', '2024-03-20')))[0]).toBe(0);

    await insertJourneys(
      stores,
      { user_1: [{ event: 'event2', timestamp: '2024-03-19T13:00:00Z', properties: { property: 'woah' } }] },
      { teamId: TEAM.personProperties, createPeople: false, personProperties: { user_1: { email: 'test@test.com' } } },
    );
    expect(await counts(TEAM.personProperties, query('first_time_for_user_with_filters', '2024-03-19'))).toEqual([1, 1]);
  });

  it('refuses an unknown step math with a 400-style error naming the field', () => {
    expect(() => parseFunnelFilter({ events: [{ id: 'a', math: 'first_time_ever' }, { id: 'b' }] })).toThrow(/Unknown math/);
  });
});
