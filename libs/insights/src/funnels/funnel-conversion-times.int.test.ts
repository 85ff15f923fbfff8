import { createTestStores, insertJourneys, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import { parseFunnelFilter } from './funnel-filter';
import { timeToConvertBins, type FunnelStep } from './funnels.query';

/**
 * Time to convert and step conversion times, ported from PostHog's query-runner tests with their
 * data and asserted numbers: posthog/hogql_queries/insights/funnels/test/test_funnel_time_to_convert.py
 * (TestFunnelTimeToConvert and TestFunnelTimeToConvertUDF assert the same answers) and
 * conversion_time_cases.py (run by test_funnel.py, test_funnel_udf.py, test_funnel_strict*.py and
 * test_funnel_unordered*.py for each order type). Each case has its own team.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');

const TEAM = {
  ttcSingleStep: 201,
  ttcDuplicateEvents: 202,
  ttcUnordered: 203,
  ttcStrict: 204,
  ttcBreakdown: 205,
  incompleteTries: 206,
  stepTimes: 207,
  windows: 208,
  apiAutoBins: 210,
  apiAutoBinsUnordered: 211,
} as const;

type TimeToConvert = { bins: [number, number][]; average_conversion_time: number | null };

/** user a, b and c of test_funnel_time_to_convert.py: 3600 s, 2220 s and 82 800 s from step one to step two. */
const THREE_USERS: JourneyPeople = {
  'user a': [
    { event: 'step one', timestamp: '2021-06-08 18:00:00' },
    { event: 'step two', timestamp: '2021-06-08 19:00:00' },
    { event: 'step three', timestamp: '2021-06-08 21:00:00' },
  ],
  'user b': [
    { event: 'step one', timestamp: '2021-06-09 13:00:00' },
    { event: 'step two', timestamp: '2021-06-09 13:37:00' },
  ],
  'user c': [
    { event: 'step one', timestamp: '2021-06-11 07:00:00' },
    { event: 'step two', timestamp: '2021-06-12 06:00:00' },
  ],
};

const TIME_TO_CONVERT = {
  insight: 'FUNNELS',
  funnel_viz_type: 'time_to_convert',
  interval: 'day',
  date_from: '2021-06-07 00:00:00',
  date_to: '2021-06-13 23:59:59',
  funnel_from_step: 0,
  funnel_to_step: 1,
  events: [
    { id: 'step one', order: 0 },
    { id: 'step two', order: 1 },
    { id: 'step three', order: 2 },
  ],
};

/** The auto-binned answer the single-step cases assert: 3 conversions, ceil(cbrt(3)) = 2 bins of 40 290 s, and the closing bin. */
const AUTO_BINNED: TimeToConvert = {
  bins: [
    [2220, 2],
    [42510, 0],
    [82800, 1],
  ],
  average_conversion_time: 29540,
};

describe('funnel conversion times (PostHog test_funnel_time_to_convert.py, conversion_time_cases.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  const funnel = async (teamId: number, body: Record<string, unknown>) =>
    (await service.run('FunnelsQuery', { id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW)).result;
  const steps = async (teamId: number, body: Record<string, unknown>) => (await funnel(teamId, body)) as FunnelStep[];
  const timeToConvert = async (teamId: number, body: Record<string, unknown>) => (await funnel(teamId, body)) as TimeToConvert;

  beforeAll(async () => {
    stores = await createTestStores('funnel_times');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await insertJourneys(stores, THREE_USERS, { teamId: TEAM.ttcSingleStep });
    await insertJourneys(
      stores,
      {
        'user a': [
          { event: 'step one', timestamp: '2021-06-08 18:00:00' },
          { event: 'step one', timestamp: '2021-06-08 19:00:00' },
          { event: 'step one', timestamp: '2021-06-08 21:00:00' },
        ],
        'user b': [
          { event: 'step one', timestamp: '2021-06-09 13:00:00' },
          { event: 'step one', timestamp: '2021-06-09 13:37:00' },
        ],
        'user c': [
          { event: 'step one', timestamp: '2021-06-11 07:00:00' },
          { event: 'step one', timestamp: '2021-06-12 06:00:00' },
        ],
      },
      { teamId: TEAM.ttcDuplicateEvents },
    );
    await insertJourneys(
      stores,
      {
        'user a': [
          { event: 'step three', timestamp: '2021-06-08 18:00:00' },
          { event: 'step one', timestamp: '2021-06-08 19:00:00' },
          { event: 'step two', timestamp: '2021-06-08 21:00:00' },
        ],
        'user b': [
          { event: 'step one', timestamp: '2021-06-09 13:00:00' },
          { event: 'step two', timestamp: '2021-06-09 13:37:00' },
        ],
        'user c': [
          { event: 'step two', timestamp: '2021-06-11 07:00:00' },
          { event: 'step one', timestamp: '2021-06-12 06:00:00' },
        ],
      },
      { teamId: TEAM.ttcUnordered },
    );
    await insertJourneys(
      stores,
      {
        'user a': [
          { event: 'step one', timestamp: '2021-06-08 18:00:00' },
          { event: 'step two', timestamp: '2021-06-08 19:00:00' },
          { event: 'step three', timestamp: '2021-06-08 21:00:00' },
        ],
        'user b': [
          { event: 'step one', timestamp: '2021-06-09 13:00:00' },
          { event: 'step two', timestamp: '2021-06-09 13:37:00' },
          { event: 'blah', timestamp: '2021-06-09 13:38:00' },
          { event: 'step three', timestamp: '2021-06-09 13:39:00' },
        ],
        'user c': [
          { event: 'step one', timestamp: '2021-06-11 07:00:00' },
          { event: 'step two', timestamp: '2021-06-12 06:00:00' },
        ],
        'user d': [
          { event: 'step one', timestamp: '2021-06-11 07:00:00' },
          { event: 'blah', timestamp: '2021-06-12 07:00:00' },
          { event: 'step two', timestamp: '2021-06-12 09:00:00' },
        ],
      },
      { teamId: TEAM.ttcStrict },
    );
    await insertJourneys(
      stores,
      {
        user_1: [
          { event: 'a', timestamp: '2024-03-22 13:10:00' },
          { event: 'b', timestamp: '2024-03-22 13:11:00' },
        ],
        user_2: [
          { event: 'a', timestamp: '2024-03-22 13:01:00' },
          { event: 'a', timestamp: '2024-03-22 13:35:00' },
          { event: 'b', timestamp: '2024-03-22 13:41:00' },
        ],
        user_3: [
          { event: 'a', timestamp: '2024-03-22 13:01:00' },
          { event: 'a', timestamp: '2024-03-22 13:35:00' },
          { event: 'a', timestamp: '2024-03-22 13:41:00' },
        ],
      },
      { teamId: TEAM.ttcBreakdown, personProperties: { user_1: { userRole: 'admin' }, user_2: { userRole: 'user' }, user_3: { userRole: 'user' } } },
    );
    await insertJourneys(
      stores,
      {
        person1: [
          // Completed the funnel on 2021-05-01, then two incomplete tries (2 and 3 hours to the second step).
          { event: 'user signed up', timestamp: '2021-05-01 01:00:00' },
          { event: '$pageview', timestamp: '2021-05-01 02:00:00' },
          { event: 'something else', timestamp: '2021-05-01 03:00:00' },
          { event: 'user signed up', timestamp: '2021-05-03 04:00:00' },
          { event: '$pageview', timestamp: '2021-05-03 05:00:00' },
          { event: 'user signed up', timestamp: '2021-05-04 07:00:00' },
          { event: '$pageview', timestamp: '2021-05-04 10:00:00' },
        ],
      },
      { teamId: TEAM.incompleteTries },
    );
    await insertJourneys(
      stores,
      {
        person1: [
          { event: 'sign up', timestamp: '2020-01-01 12:00:00' },
          { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
          { event: 'buy', timestamp: '2020-01-01 15:00:00' },
        ],
        person2: [
          { event: 'sign up', timestamp: '2020-01-02 14:00:00' },
          { event: 'play movie', timestamp: '2020-01-02 16:00:00' },
        ],
        person3: [
          { event: 'sign up', timestamp: '2020-01-02 14:00:00' },
          { event: 'play movie', timestamp: '2020-01-02 16:00:00' },
          { event: 'buy', timestamp: '2020-01-02 17:00:00' },
        ],
      },
      { teamId: TEAM.stepTimes },
    );
    // test_insight_funnels.py's time-to-convert data: user a with an unrelated event between the
    // steps, and (unordered) user b doing step two first.
    await insertJourneys(
      stores,
      {
        ...THREE_USERS,
        'user a': [
          { event: 'step one', timestamp: '2021-06-08 18:00:00' },
          { event: 'blah', timestamp: '2021-06-08 18:30:00' },
          { event: 'step two', timestamp: '2021-06-08 19:00:00' },
          { event: 'step three', timestamp: '2021-06-08 21:00:00' },
        ],
      },
      { teamId: TEAM.apiAutoBins },
    );
    await insertJourneys(
      stores,
      {
        ...THREE_USERS,
        'user b': [
          { event: 'step two', timestamp: '2021-06-09 13:00:00' },
          { event: 'step one', timestamp: '2021-06-09 13:37:00' },
        ],
      },
      { teamId: TEAM.apiAutoBinsUnordered },
    );
    await insertJourneys(
      stores,
      {
        stopped_after_signup1: [
          { event: 'user signed up', timestamp: '2020-01-02 14:00:00' },
          { event: 'pageview', timestamp: '2020-01-02 14:05:00' },
        ],
        stopped_after_signup2: [{ event: 'user signed up', timestamp: '2020-01-02 14:03:00' }],
        stopped_after_signup3: [
          { event: 'user signed up', timestamp: '2020-01-02 12:00:00' },
          { event: 'pageview', timestamp: '2020-01-02 12:15:00' },
        ],
      },
      { teamId: TEAM.windows },
    );
  }, 60_000);
  afterAll(() => stores.close());

  describe('time to convert (test_funnel_time_to_convert.py; the UDF class asserts the same)', () => {
    it('test_auto_bin_count_single_step (test_funnel_time_to_convert.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcSingleStep, { ...TIME_TO_CONVERT, funnel_window_interval: 7, funnel_window_interval_unit: 'day' });
      expect(answer).toEqual(AUTO_BINNED);
    });

    it('test_auto_bin_count_single_step_duplicate_events (test_funnel_time_to_convert.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcDuplicateEvents, {
        ...TIME_TO_CONVERT,
        funnel_window_days: 7,
        events: [
          { id: 'step one', order: 0 },
          { id: 'step one', order: 1 },
          { id: 'step one', order: 2 },
        ],
      });
      expect(answer).toEqual(AUTO_BINNED);
    });

    it('test_auto_bin_count_total (test_funnel_time_to_convert.py; skipped in PostHog for a ClickHouse 23.12 issue)', async () => {
      // From the first step to the last when no steps are given: only user a converts, in 10 800 s.
      const { funnel_from_step: _from, funnel_to_step: _to, ...whole } = TIME_TO_CONVERT;
      const answer = await timeToConvert(TEAM.ttcSingleStep, { ...whole, funnel_window_days: 7 });
      expect(answer).toEqual({
        bins: [
          [10800, 1],
          [10860, 0],
        ],
        average_conversion_time: 10800,
      });
      expect(await timeToConvert(TEAM.ttcSingleStep, { ...whole, funnel_window_days: 7, funnel_from_step: 0, funnel_to_step: 2 })).toEqual(answer);
    });

    it('test_custom_bin_count_single_step (test_funnel_time_to_convert.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcSingleStep, { ...TIME_TO_CONVERT, funnel_window_days: 7, bin_count: 7 });
      expect(answer).toEqual({
        bins: [
          [2220, 2],
          [13732, 0],
          [25244, 0],
          [36756, 0],
          [48268, 0],
          [59780, 0],
          [71292, 1],
          [82804, 0],
        ],
        average_conversion_time: 29540,
      });
    });

    it('test_basic_unordered (test_funnel_time_to_convert.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcUnordered, {
        ...TIME_TO_CONVERT,
        display: 'ActionsLineGraph',
        funnel_window_days: 7,
        funnel_order_type: 'unordered',
      });
      expect(answer).toEqual(AUTO_BINNED);
    });

    it('test_basic_strict (test_funnel_time_to_convert.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcStrict, {
        ...TIME_TO_CONVERT,
        display: 'ActionsLineGraph',
        funnel_window_days: 7,
        funnel_order_type: 'strict',
      });
      expect(answer).toEqual(AUTO_BINNED);
    });

    it.each([
      ['test_funnel_time_to_convert_auto_bins', 'ordered', TEAM.apiAutoBins],
      ['test_funnel_time_to_convert_auto_bins_strict', 'strict', TEAM.ttcSingleStep],
      ['test_funnel_time_to_convert_auto_bins_unordered', 'unordered', TEAM.apiAutoBinsUnordered],
    ] as const)('%s (posthog/api/test/test_insight_funnels.py)', async (_name, orderType, teamId) => {
      const answer = await service.run(
        'FunnelsQuery',
        { id: teamId, timezone: 'UTC' },
        parseFunnelFilter({
          insight: 'funnels',
          funnel_viz_type: 'time_to_convert',
          funnel_order_type: orderType,
          interval: 'day',
          date_from: '2021-06-07 00:00:00',
          date_to: '2021-06-13 23:59:59',
          funnel_to_step: 1,
          funnel_window_days: 7,
          events: TIME_TO_CONVERT.events,
        }),
        NOW,
      );
      expect(answer).toMatchObject({ is_cached: false, timezone: 'UTC', result: AUTO_BINNED });
    });

    it('test_time_to_convert_funnel_ignores_breakdown (test_funnel.py)', async () => {
      const answer = await timeToConvert(TEAM.ttcBreakdown, {
        events: [
          { id: 'a', order: 0 },
          { id: 'b', order: 1 },
        ],
        date_from: '2024-03-22',
        date_to: '2024-03-22',
        breakdown: 'userRoles',
        breakdown_type: 'person',
        funnel_viz_type: 'time_to_convert',
        funnel_window_interval: 10,
        funnel_window_interval_unit: 'minute',
      });
      expect(answer.average_conversion_time).toBe(210);
      expect(answer.bins).toEqual([
        [60, 1],
        [210, 0],
        [360, 1],
      ]);
    });

    it('bins as compute_shared_bin_boundaries makes them (test_funnel_time_to_convert_bins.py); a custom count clamped to 1..90; a to-step of 0', () => {
      // test_spans_union_of_both_period_ranges: 27 samples over [50, 300] → 3 bins of 84 s.
      const union = [50, ...Array.from({ length: 25 }, () => 150), 300];
      expect(timeToConvertBins(union, null).map(([from]) => from)).toEqual([50, 134, 218, 302]);
      // test_falls_back_to_the_only_populated_period: 8 samples over [100, 200] → 2 bins of 50 s.
      const eight = [100, 120, 140, 150, 160, 180, 190, 200];
      expect(timeToConvertBins(eight, null).map(([from]) => from)).toEqual([100, 150, 200]);
      // test_bin_count_override_replaces_the_auto_count: 4 bins over [0, 100].
      expect(timeToConvertBins([0, 10, 20, 30, 40, 60, 80, 100], 4).map(([from]) => from)).toEqual([0, 25, 50, 75, 100]);
      // test_returns_no_boundaries_when_neither_period_converted.
      expect(timeToConvertBins([], null)).toEqual([]);
      // One conversion time only: PostHog's 60-second fallback width.
      expect(timeToConvertBins([42], null)).toEqual([
        [42, 1],
        [102, 0],
      ]);
      const filter = (bin_count: unknown) => parseFunnelFilter({ ...TIME_TO_CONVERT, bin_count }).binCount;
      expect([filter(0), filter(-3), filter(7), filter(500), filter(null)]).toEqual([1, 1, 7, 90, null]);
      // A to-step of 0 means the last step, as PostHog's `funnelToStep or len(series) - 1` reads it.
      expect(parseFunnelFilter({ ...TIME_TO_CONVERT, funnel_to_step: 0 }).toStep).toBe(2);
      expect(() => parseFunnelFilter({ ...TIME_TO_CONVERT, funnel_from_step: 2, funnel_to_step: 1 })).toThrow(/funnel_to_step/);
    });
  });

  // test_funnel.py and test_funnel_udf.py run these cases ordered, test_funnel_unordered.py
  // unordered; test_funnel_strict.py's class runs the ordered factory too, so the strict run is
  // ours: the journeys have nothing between their steps, and the answers are the same.
  describe.each(['ordered', 'strict', 'unordered'])('conversion_time_cases.py, funnel_order_type %s', (orderType) => {
    it(`test_funnel_with_multiple_incomplete_tries (conversion_time_cases.py, ${orderType})`, async () => {
      const answer = await steps(TEAM.incompleteTries, {
        insight: 'FUNNELS',
        funnel_order_type: orderType,
        events: [
          { id: 'user signed up', type: 'events', order: 0 },
          { id: '$pageview', type: 'events', order: 1 },
          { id: 'something else', type: 'events', order: 2 },
        ],
        funnel_window_interval: 1,
        date_from: '2021-05-01 00:00:00',
        date_to: '2021-05-14 00:00:00',
      });
      expect(answer[0]!.count).toBe(1);
      // One hour to convert: the incomplete tries do not count.
      expect(answer[1]!.average_conversion_time).toBe(3600);
      expect(answer[1]!.median_conversion_time).toBe(3600);
    });

    it(`test_funnel_step_conversion_times (conversion_time_cases.py, ${orderType})`, async () => {
      const answer = await steps(TEAM.stepTimes, {
        insight: 'FUNNELS',
        funnel_order_type: orderType,
        events: [
          { id: 'sign up', order: 0 },
          { id: 'play movie', order: 1 },
          { id: 'buy', order: 2 },
        ],
        date_from: '2020-01-01',
        date_to: '2020-01-08',
        funnel_window_days: 7,
      });
      expect(answer.map((s) => s.average_conversion_time)).toEqual([null, 6000, 5400]);
      // An even count: the mean of the two middle times (3600 and 7200).
      expect(answer.map((s) => s.median_conversion_time)).toEqual([null, 7200, 5400]);
    });

    it(`test_funnel_times_with_different_conversion_windows (conversion_time_cases.py, ${orderType})`, async () => {
      const filters = {
        insight: 'FUNNELS',
        funnel_order_type: orderType,
        events: [
          { id: 'user signed up', type: 'events', order: 0 },
          { id: 'pageview', type: 'events', order: 1 },
        ],
        funnel_window_interval: 14,
        funnel_window_interval_unit: 'day',
        date_from: '2020-01-01',
        date_to: '2020-01-14',
      };
      const results = await steps(TEAM.windows, filters);
      expect(results[0]!.count).toBe(3);
      expect(results[1]!.count).toBe(2);
      expect(results[1]!.average_conversion_time).toBe(600);

      const results4 = await steps(TEAM.windows, { ...filters, funnel_window_interval: 5, funnel_window_interval_unit: 'minute' });
      expect(results4).not.toEqual(results);
      expect(results4[0]!.count).toBe(3);
      expect(results4[1]!.count).toBe(1);
      expect(results4[1]!.average_conversion_time).toBe(300);
    });
  });
});
