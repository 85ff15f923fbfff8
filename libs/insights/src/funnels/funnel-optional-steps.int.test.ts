import { createTestStores, insertJourneys, type TestStores } from '@sightline/testkit';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseCorrelationOptions } from './funnel-correlation';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';
import { funnelsQueryToFilter } from './funnels-query-node';

/**
 * Optional funnel steps (`optionalInFunnel`), ported from PostHog's
 * posthog/hogql_queries/insights/funnels/test/test_funnel_udf.py (test_funnel_with_optional_steps,
 * test_funnel_with_optional_steps_same_event) and test_funnel_validation_rules.py
 * (test_validates_optional_funnel_steps), with their data and numbers; the strict, exclusion and
 * breakdown cases are written from the rule in funnel-udf/src/steps.rs. Each case has its own team.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
const TEAM = { optional: 401, sameEvent: 402, strict: 403, exclusion: 404, breakdown: 405, correlation: 406 } as const;
const JANUARY_2012 = { date_from: '2012-01-01 00:00:00', date_to: '2012-02-01 23:59:59' };
const MAY_2021 = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' };

const at = (minute: number) => `2012-01-15 00:${String(minute).padStart(2, '0')}:00`;
const may = (minute: number) => `2021-05-01 00:${String(minute).padStart(2, '0')}:00`;

describe('optional funnel steps (PostHog test_funnel_udf.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  const run = async (teamId: number, body: Record<string, unknown>) =>
    (await service.runFunnel({ id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW)).result;
  const steps = async (teamId: number, body: Record<string, unknown>) => (await run(teamId, body)) as FunnelStep[];
  /** A FunnelsQuery, read as the /query/ endpoint reads it. */
  const query = (series: Record<string, unknown>[], dateRange: Record<string, string>, funnelsFilter: Record<string, unknown> = {}) =>
    funnelsQueryToFilter({ kind: 'FunnelsQuery', series: series.map((s) => ({ kind: 'EventsNode', ...s })), dateRange, funnelsFilter });

  beforeAll(async () => {
    stores = await createTestStores('funnel_optional_steps');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const journeys = (names: number[], minutes: number[]) =>
      names.map((n, i) => ({ event: `step ${['one', 'two', 'three', 'four', 'five'][n - 1]}`, timestamp: at(minutes[i]!) }));
    await insertJourneys(
      stores,
      {
        no_events: [],
        step1_only: journeys([1], [0]),
        step123: journeys([1, 2, 3], [0, 1, 2]),
        step13: journeys([1, 3], [0, 2]),
        step12345: journeys([1, 2, 3, 4, 5], [0, 1, 2, 3, 4]),
        step1235: journeys([1, 2, 3, 5], [0, 1, 2, 4]),
        step134: journeys([1, 3, 4], [0, 2, 3]),
        step1345: journeys([1, 3, 4, 5], [0, 2, 3, 4]),
        step135: journeys([1, 3, 5], [0, 2, 4]),
      },
      { teamId: TEAM.optional },
    );
    await insertJourneys(
      stores,
      {
        zero_events: [],
        one_event: [{ event: 'same_event', timestamp: at(0) }],
        two_events: [
          { event: 'same_event', timestamp: at(0) },
          { event: 'same_event', timestamp: at(1) },
        ],
        three_events: [
          { event: 'same_event', timestamp: at(0) },
          { event: 'same_event', timestamp: at(1) },
          { event: 'same_event', timestamp: at(2) },
        ],
        three_events_with_match: [
          { event: 'same_event', timestamp: at(0) },
          { event: 'same_event', timestamp: at(1), properties: { $current_url: 'url' } },
          { event: 'same_event', timestamp: at(2) },
        ],
      },
      { teamId: TEAM.sameEvent },
    );
    await insertJourneys(
      stores,
      {
        skips: [
          { event: 'a', timestamp: may(0) },
          { event: 'c', timestamp: may(2) },
        ],
        takes: [
          { event: 'a', timestamp: may(0) },
          { event: 'b', timestamp: may(1) },
          { event: 'c', timestamp: may(2) },
        ],
        interrupted: [
          { event: 'a', timestamp: may(0) },
          { event: 'other', timestamp: may(1) },
          { event: 'c', timestamp: may(2) },
        ],
      },
      { teamId: TEAM.strict },
    );
    await insertJourneys(
      stores,
      {
        excluded_after_skip: [
          { event: 'a', timestamp: may(0) },
          { event: 'x', timestamp: may(1) },
          { event: 'c', timestamp: may(2) },
        ],
        excluded_after_conversion: [
          { event: 'a', timestamp: may(0) },
          { event: 'c', timestamp: may(2) },
          { event: 'x', timestamp: may(3) },
        ],
      },
      { teamId: TEAM.exclusion },
    );
    await insertJourneys(
      stores,
      {
        chrome: [
          { event: 'a', timestamp: may(0), properties: { $browser: 'Chrome' } },
          { event: 'c', timestamp: may(2), properties: { $browser: 'Chrome' } },
        ],
        safari: [
          { event: 'a', timestamp: may(0), properties: { $browser: 'Safari' } },
          { event: 'b', timestamp: may(1), properties: { $browser: 'Safari' } },
          { event: 'c', timestamp: may(3), properties: { $browser: 'Safari' } },
        ],
      },
      { teamId: TEAM.breakdown },
    );
    await insertJourneys(
      stores,
      {
        converts: [
          { event: 'a', timestamp: may(0) },
          { event: 'x', timestamp: may(1) },
          { event: 'c', timestamp: may(2) },
          { event: 'after', timestamp: may(3) },
        ],
        drops: [
          { event: 'a', timestamp: may(0) },
          { event: 'y', timestamp: may(1) },
        ],
      },
      { teamId: TEAM.correlation },
    );
  });

  afterAll(async () => {
    await stores.close();
  });

  it('test_funnel_with_optional_steps: each step counts the actors whose furthest chain took it', async () => {
    const result = await steps(
      TEAM.optional,
      query(
        [
          { event: 'step one' },
          { event: 'step two', optionalInFunnel: true },
          { event: 'step three' },
          { event: 'step four', optionalInFunnel: true },
          { event: 'step five' },
        ],
        JANUARY_2012,
      ),
    );
    expect(result.map((s) => [s.name, s.count])).toEqual([
      ['step one', 8],
      ['step two', 3],
      ['step three', 7],
      ['step four', 3],
      ['step five', 4],
    ]);
    // The gaps are between required steps (one → three, three → five: two minutes each), reported
    // at the first and second later step as PostHog's funnel_udf.py reads `timings[i]`.
    expect(result.map((s) => s.average_conversion_time)).toEqual([null, 120, 120, null, null]);
  });

  it('test_funnel_with_optional_steps_same_event: an optional step between steps of the same event', async () => {
    const result = await steps(
      TEAM.sameEvent,
      query(
        [
          { event: 'same_event' },
          { event: 'same_event', optionalInFunnel: true },
          { event: 'same_event', properties: [{ key: '$current_url', operator: 'exact', value: 'url', type: 'event' }] },
          { event: 'same_event' },
        ],
        JANUARY_2012,
      ),
    );
    expect(result.map((s) => s.count)).toEqual([4, 2, 1, 1]);
  });

  it('the legacy filter takes optionalInFunnel on its events too', async () => {
    const result = await steps(TEAM.optional, {
      ...JANUARY_2012,
      events: [
        { id: 'step one', order: 0 },
        { id: 'step two', order: 1, optionalInFunnel: true },
        { id: 'step three', order: 2 },
      ],
    });
    expect(result.map((s) => s.count)).toEqual([8, 3, 7]);
  });

  it('strict funnels skip an optional step, but any other event still breaks the chain (steps.rs)', async () => {
    const result = await steps(
      TEAM.strict,
      query([{ event: 'a' }, { event: 'b', optionalInFunnel: true }, { event: 'c' }], MAY_2021, { funnelOrderType: 'strict' }),
    );
    // skips: a → c; takes: a → b → c; interrupted: "other" between a and c ends its chain.
    expect(result.map((s) => s.count)).toEqual([3, 1, 2]);
  });

  it('an exclusion after a skipped optional step excludes the chain it would continue (steps.rs)', async () => {
    const result = await steps(
      TEAM.exclusion,
      query([{ event: 'a' }, { event: 'b', optionalInFunnel: true }, { event: 'c' }], MAY_2021, {
        exclusions: [{ kind: 'FunnelExclusionEventsNode', event: 'x', funnelFromStep: 1, funnelToStep: 2 }],
      }),
    );
    // excluded_after_skip: x falls between a and c with b skipped, so a's chain is excluded;
    // excluded_after_conversion: x comes after c, when the chain is complete.
    expect(result.map((s) => s.count)).toEqual([1, 0, 1]);
  });

  it('breaks down by value with optional steps', async () => {
    const result = (await run(TEAM.breakdown, query([{ event: 'a' }, { event: 'b', optionalInFunnel: true }, { event: 'c' }], MAY_2021, {}))) as FunnelStep[];
    expect(result.map((s) => s.count)).toEqual([2, 1, 2]);
    const byBrowser = (await run(TEAM.breakdown, {
      ...query([{ event: 'a' }, { event: 'b', optionalInFunnel: true }, { event: 'c' }], MAY_2021),
      breakdown: '$browser',
      breakdown_type: 'event',
    })) as FunnelStep[][];
    const counts = Object.fromEntries(byBrowser.map((row) => [JSON.stringify(row[0]!.breakdown_value), row.map((s) => s.count)]));
    expect(counts).toEqual({ '["Chrome"]': [1, 0, 1], '["Safari"]': [1, 1, 1] });
    // Chrome converts a → c in 2 minutes, Safari in 3: the first gap (between required steps) is reported at step 1.
    const times = Object.fromEntries(byBrowser.map((row) => [JSON.stringify(row[0]!.breakdown_value), row.map((s) => s.average_conversion_time)]));
    expect(times).toEqual({ '["Chrome"]': [null, 120, null], '["Safari"]': [null, 180, null] });
  });

  it('correlates the events of a converted actor up to its last step taken', async () => {
    const body = query([{ event: 'a' }, { event: 'b', optionalInFunnel: true }, { event: 'c' }], MAY_2021);
    const answer = await service.runCorrelation({ id: TEAM.correlation, timezone: 'UTC' }, parseFunnelFilter(body), parseCorrelationOptions(body), NOW);
    const found = Object.fromEntries(answer.result.events.map((r) => [r.event.event, [r.success_count, r.failure_count]]));
    // x falls between a and c of the converted actor; "after" comes after its last step.
    expect(found).toEqual({ x: [1, 0], y: [0, 1] });
  });

  describe('test_validates_optional_funnel_steps (test_funnel_validation_rules.py)', () => {
    const refused = (body: Record<string, unknown>, message: string) => {
      let error: unknown;
      try {
        parseFunnelFilter(body);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(QueryFilterError);
      expect((error as QueryFilterError).message).toContain(message);
      expect((error as QueryFilterError).code).toBe('funnel_optional_steps_invalid');
    };

    it('unsupported_feature_combination: only ordered or strict funnels drawn as steps', () => {
      const message = 'Optional funnel steps are only supported in funnels with step order Sequential or Strict';
      const series = [{ event: 'step 1' }, { event: 'step 2', optionalInFunnel: true }];
      refused(query(series, MAY_2021, { funnelVizType: 'trends', funnelOrderType: 'ordered' }), message);
      refused(query(series, MAY_2021, { funnelVizType: 'time_to_convert' }), message);
      refused(query(series, MAY_2021, { funnelOrderType: 'unordered' }), message);
      expect(() => parseFunnelFilter(query(series, MAY_2021, { funnelOrderType: 'strict' }))).not.toThrow();
    });

    it('first_step_optional', () => {
      refused(query([{ event: 'step 1', optionalInFunnel: true }, { event: 'step 2' }], MAY_2021), 'The first step of a funnel cannot be optional.');
    });

    it('optional_step_matches_following_required_step', () => {
      refused(
        query([{ event: 'step 1' }, { event: 'step 2', optionalInFunnel: true }, { event: 'step 2' }], MAY_2021),
        'An optional step cannot be the same as the following required step.',
      );
    });

    it('optionalInFunnel must be a boolean', () => {
      expect(() => parseFunnelFilter(query([{ event: 'step 1' }, { event: 'step 2', optionalInFunnel: 'yes' }], MAY_2021))).toThrow(/optionalInFunnel/);
    });
  });
});
