import { createTestStores, insertJourneys, type TestStores } from '@sightline/testkit';
import { createQueryService, type QueryService } from '../runners/query-service';
import { parseFunnelFilter } from './funnel-filter';

/**
 * Time to convert when nobody converted: PostHog's tests leave it out, so the answers are read
 * from its code (funnel_time_to_convert_udf.py for ordered and strict funnels,
 * funnel_time_to_convert.py for unordered ones).
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
const TEAM = 411;

describe('funnel time to convert with no conversions (PostHog funnel_time_to_convert*.py)', () => {
  let stores: TestStores;
  let service: QueryService;
  const run = async (teamId: number, body: Record<string, unknown>) =>
    (await service.run('FunnelsQuery', { id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW)).result;

  beforeAll(async () => {
    stores = await createTestStores('funnel_no_conversions');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
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
      { teamId: TEAM },
    );
  });

  afterAll(() => stores.close());

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
      expect(await run(TEAM, timeToConvert)).toEqual(empty);
      expect(await run(TEAM, { ...timeToConvert, funnel_order_type: 'strict' })).toEqual(empty);
      expect(await run(TEAM, { ...timeToConvert, bin_count: 3 })).toEqual({
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
      expect(await run(TEAM, { ...timeToConvert, funnel_order_type: 'unordered' })).toEqual({
        bins: [
          [0, 0],
          [1, 0],
        ],
        average_conversion_time: null,
      });
      expect(await run(TEAM, { ...timeToConvert, funnel_order_type: 'unordered', bin_count: 2 })).toEqual({
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
