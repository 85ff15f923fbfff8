import { createTestStores, insertJourneys, journeyPersonUuid, type TestStores } from '@sightline/testkit';
import { QueryFilterError } from '../common/query-filter-error';
import { createQueryService, type QueryService } from '../runners/query-service';

/**
 * The actors behind a trend's point (PostHog's InsightActorsQuery over a TrendsQuery, in an
 * ActorsQuery, as its actors modal asks): each point's actors are exactly those its unique-user
 * count holds, and its total count is the sum of their event counts.
 */
const NOW = Date.parse('2024-03-10T12:00:00Z');
const PEOPLE = {
  ann: [
    { event: 'view', timestamp: '2024-03-08 10:00:00', properties: { $browser: 'Chrome' } },
    { event: 'view', timestamp: '2024-03-08 11:00:00', properties: { $browser: 'Chrome' } },
    { event: 'view', timestamp: '2024-03-09 09:00:00', properties: { $browser: 'Firefox' } },
  ],
  ben: [{ event: 'view', timestamp: '2024-03-08 12:00:00', properties: { $browser: 'Firefox' } }],
  cat: [
    { event: 'view', timestamp: '2024-03-09 13:00:00', properties: { $browser: 'Chrome' } },
    { event: 'other', timestamp: '2024-03-09 14:00:00', properties: {} },
  ],
  dan: [{ event: 'view', timestamp: '2024-03-01 08:00:00', properties: { $browser: 'Safari' } }],
};

describe('trend actors (InsightActorsQuery over a TrendsQuery)', () => {
  let stores: TestStores;
  let service: QueryService;
  const project = { id: 1, timezone: 'UTC' };

  beforeAll(async () => {
    stores = await createTestStores('trendactors');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await insertJourneys(stores, PEOPLE, { personProperties: { ann: { plan: 'pro' }, ben: { plan: 'free' }, cat: { plan: 'free' } } });
  });
  afterAll(() => stores.close());

  const trendsQuery = (extra: Record<string, unknown> = {}) => ({
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'view', math: 'total' }],
    dateRange: { date_from: '2024-03-05', date_to: '2024-03-10' },
    interval: 'day',
    ...extra,
  });
  const actors = async (source: Record<string, unknown>, point: Record<string, unknown>, page: Record<string, unknown> = {}) => {
    const answer = await service.runNode(
      project,
      { kind: 'ActorsQuery', select: ['id', 'event_count'], ...page, source: { kind: 'InsightActorsQuery', source, ...point } },
      NOW,
    );
    return answer as { results: [string, number][]; hasMore: boolean; columns: string[] };
  };
  const uuid = (person: string) => journeyPersonUuid(person);
  const trend = async (source: Record<string, unknown>) =>
    (await service.runNode(project, source, NOW)) as { results: { days: string[]; data: number[]; breakdown_value?: unknown; aggregated_value?: number }[] };

  it('lists the actors of a day, each with its events there, as many as the point counts', async () => {
    const answer = await actors(trendsQuery(), { day: '2024-03-08' });
    expect(answer.columns).toEqual(['id', 'event_count']);
    expect(answer.results).toEqual(
      [
        [uuid('ann'), 2],
        [uuid('ben'), 1],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    // Every day's actors hold the day's count (total: their events; dau: themselves).
    const total = (await trend(trendsQuery())).results[0]!;
    const dau = (await trend(trendsQuery({ series: [{ kind: 'EventsNode', event: 'view', math: 'dau' }] }))).results[0]!;
    for (const [i, day] of total.days.entries()) {
      const rows = (await actors(trendsQuery(), { day })).results;
      expect([day, rows.reduce((sum, [, n]) => sum + n, 0), rows.length]).toEqual([day, total.data[i], dau.data[i]]);
    }
  });

  it('keeps one breakdown value, a person-property one too', async () => {
    const byBrowser = trendsQuery({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } });
    expect((await actors(byBrowser, { day: '2024-03-09', breakdown: 'Chrome' })).results.map(([id]) => id)).toEqual([uuid('cat')]);
    expect((await actors(byBrowser, { day: '2024-03-09', breakdown: 'Firefox' })).results.map(([id]) => id)).toEqual([uuid('ann')]);
    const byPlan = trendsQuery({ breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' }, trendsFilter: { display: 'ActionsTable' } });
    const free = (await actors(byPlan, { breakdown: 'free' })).results;
    expect(free.map(([id]) => id).sort()).toEqual([uuid('ben'), uuid('cat')].sort());
    const table = (await trend(byPlan)).results.find((s) => JSON.stringify(s.breakdown_value) === JSON.stringify(['free']) || s.breakdown_value === 'free');
    expect(free.reduce((sum, [, n]) => sum + n, 0)).toBe(table!.aggregated_value);
  });

  it('reads a total-value display over the whole range, and the previous period when asked', async () => {
    const table = trendsQuery({ trendsFilter: { display: 'ActionsTable' } });
    expect((await actors(table, {})).results.map(([id]) => id).sort()).toEqual([uuid('ann'), uuid('ben'), uuid('cat')].sort());
    const compared = trendsQuery({ compareFilter: { compare: true }, trendsFilter: { display: 'ActionsTable' } });
    expect((await actors(compared, { compare: 'previous' })).results.map(([id]) => id)).toEqual([uuid('dan')]);
  });

  it('pages by id', async () => {
    const table = trendsQuery({ trendsFilter: { display: 'ActionsTable' } });
    const first = await actors(table, {}, { limit: 2 });
    const second = await actors(table, {}, { limit: 2, offset: 2 });
    expect([first.results.length, first.hasMore, second.results.length, second.hasMore]).toEqual([2, true, 1, false]);
  });

  // "Other", cohort and histogram breakdowns and first-time and group maths: trend-actors-posthog.int.test.ts.
  it('refuses a day outside the trend, a breakdown value of the wrong shape and a search', async () => {
    await expect(actors(trendsQuery(), { day: '2023-01-01' })).rejects.toThrow(QueryFilterError);
    const byBrowser = trendsQuery({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } });
    await expect(actors(byBrowser, { day: '2024-03-09', breakdown: ['Chrome', 'Firefox'] })).rejects.toMatchObject({ attr: 'query__source__breakdown' });
    await expect(actors(trendsQuery(), { day: '2024-03-08' }, { search: 'ann' })).rejects.toBeInstanceOf(QueryFilterError);
  });
});
