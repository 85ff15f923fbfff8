// The web app's builders hold a query in the address and send it as PostHog's insight filters; a
// saved insight's filters come back as the same query. These conversions, both ways.
import {
  completeFilters,
  convertSpan,
  filtersFromApi,
  funnelFilters,
  funnelQueryFromFilters,
  funnelQueryFromUrl,
  queryFromUrl,
  trendFilters,
  trendQueryFromFilters,
  type FunnelQuery,
  type TrendQuery,
} from '../apps/web/src/insight-query';
import { customRangeInterval, describeRange } from '../apps/web/src/query-builder/date-ranges';

const trend: TrendQuery = {
  series: [
    { event: '$pageview', math: 'total', properties: [{ key: '$browser', operator: 'exact', value: 'Chrome', type: 'event' }] },
    { event: '7', kind: 'actions', math: 'dau' },
    { event: 'purchase', math: 'sum', math_property: 'price' },
  ],
  breakdown: '$os',
  interval: 'week',
  date_from: '-30d',
  display: 'bar',
  compare: true,
  properties: [{ key: 'plan', operator: 'is_not', value: 'free', type: 'person' }],
  formula: 'A / B',
};

describe('trend queries', () => {
  it('become PostHog filters: events and actions keep their order, filters and formula go along', () => {
    expect(trendFilters(trend)).toEqual({
      insight: 'TRENDS',
      events: [
        { id: '$pageview', type: 'events', order: 0, math: 'total', properties: [{ key: '$browser', operator: 'exact', value: 'Chrome', type: 'event' }] },
        { id: 'purchase', type: 'events', order: 2, math: 'sum', math_property: 'price' },
      ],
      actions: [{ id: 7, type: 'actions', order: 1, math: 'dau' }],
      properties: [{ key: 'plan', operator: 'is_not', value: 'free', type: 'person' }],
      breakdown: '$os',
      breakdown_type: 'event',
      interval: 'week',
      date_from: '-30d',
      display: 'ActionsBar',
      compare: true,
      formula: 'A / B',
    });
  });

  it('come back from saved filters unchanged', () => {
    const saved = JSON.parse(JSON.stringify(trendFilters(trend))) as Record<string, unknown>;
    expect(trendQueryFromFilters(saved)).toEqual({
      ...trend,
      series: [trend.series[0], { ...trend.series[1], math_property: undefined }, { ...trend.series[2], kind: undefined }],
    });
  });

  it('break a world map down by country, whatever breakdown the query held', () => {
    const filters = trendFilters({ ...trend, display: 'world_map' });
    expect(filters).toMatchObject({ display: 'WorldMap', breakdown: '$geoip_country_code', breakdown_type: 'event' });
    expect(trendQueryFromFilters(filters)).toMatchObject({ display: 'world_map', breakdown: '' });
  });

  it('read the address, or fall back to the default query', () => {
    const url = new URL(`http://x/trends?q=${encodeURIComponent(JSON.stringify(trend))}`);
    expect(queryFromUrl(url)).toEqual(trend);
    expect(queryFromUrl(new URL('http://x/trends?q=%7Bbroken')).series).toEqual([{ event: '$pageview', math: 'total' }]);
    expect(queryFromUrl(new URL('http://x/trends?q=' + encodeURIComponent('{"series":[]}'))).series).toHaveLength(1);
  });

  it('carry a person, group or HogQL breakdown, a closed date range and the test-account filter both ways', () => {
    const query: TrendQuery = {
      ...trend,
      breakdown: 'plan',
      breakdown_type: 'person',
      date_from: '-1mStart',
      date_to: '-1mEnd',
      filter_test_accounts: true,
    };
    const filters = trendFilters(query);
    expect(filters).toMatchObject({ breakdown: 'plan', breakdown_type: 'person', date_from: '-1mStart', date_to: '-1mEnd', filter_test_accounts: true });
    expect(filters['breakdown_group_type_index']).toBeUndefined();
    expect(trendQueryFromFilters(JSON.parse(JSON.stringify(filters)) as Record<string, unknown>)).toMatchObject({
      breakdown: 'plan',
      breakdown_type: 'person',
      date_to: '-1mEnd',
      filter_test_accounts: true,
    });
    expect(trendFilters({ ...trend, breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 1 })).toMatchObject({
      breakdown_type: 'group',
      breakdown_group_type_index: 1,
    });
    expect(trendFilters({ ...trend, breakdown: '', breakdown_type: 'hogql' })).toMatchObject({ breakdown: undefined, breakdown_type: undefined });
    expect(
      funnelFilters({
        steps: ['a', 'b'],
        order: 'ordered',
        window_days: 14,
        date_from: '-7d',
        breakdown: 'properties.$os',
        breakdown_type: 'hogql',
        filter_test_accounts: true,
      }),
    ).toMatchObject({ breakdown: 'properties.$os', breakdown_type: 'hogql', filter_test_accounts: true });
  });

  it('are not read from filters without series', () => {
    expect(trendQueryFromFilters({ insight: 'TRENDS' })).toBeNull();
  });
});

describe('property filters', () => {
  it('are sent only when complete, numbers as numbers for numeric operators and no value when none is taken', () => {
    expect(
      completeFilters([
        { key: '', operator: 'exact', value: 'x', type: 'event' },
        { key: 'a', operator: 'exact', value: '', type: 'event' },
        { key: 'n', operator: 'gt', value: '4.5', type: 'event' },
        { key: 'm', operator: 'is_set', value: 'ignored', type: 'person' },
      ]),
    ).toEqual([
      { key: 'n', operator: 'gt', value: 4.5, type: 'event' },
      { key: 'm', operator: 'is_set', type: 'person' },
    ]);
  });

  it('are read from PostHog lists and nested groups, keeping event and person filters only', () => {
    expect(
      filtersFromApi({
        type: 'AND',
        values: [
          { type: 'OR', values: [{ key: 'a', value: ['x', 'y'], operator: 'exact', type: 'event' }] },
          { key: 'b', value: 3, operator: 'gt', type: 'person' },
          { key: 'id', value: 2, type: 'cohort' },
        ],
      }),
    ).toEqual([
      { key: 'a', operator: 'exact', value: 'x', type: 'event' },
      { key: 'b', operator: 'gt', value: 3, type: 'person' },
    ]);
    expect(filtersFromApi([{ key: 'c' }])).toEqual([{ key: 'c', operator: 'exact', value: undefined, type: 'event' }]);
    expect(filtersFromApi('nonsense')).toEqual([]);
  });
});

describe('funnel queries', () => {
  const funnel: FunnelQuery = {
    steps: ['$pageview', 'add_to_cart', 'purchase'],
    order: 'strict',
    window_days: 7,
    date_from: '-14d',
    breakdown: '$browser',
    viz: 'steps',
    properties: [{ key: '$os', operator: 'exact', value: 'Mac OS X', type: 'event' }],
  };

  it('become PostHog filters, the breakdown only in the steps view', () => {
    expect(funnelFilters(funnel)).toMatchObject({
      insight: 'FUNNELS',
      events: [
        { id: '$pageview', type: 'events', order: 0 },
        { id: 'add_to_cart', type: 'events', order: 1 },
        { id: 'purchase', type: 'events', order: 2 },
      ],
      funnel_order_type: 'strict',
      funnel_window_interval: 7,
      funnel_window_interval_unit: 'day',
      funnel_viz_type: 'steps',
      breakdown: '$browser',
      breakdown_type: 'event',
      properties: [{ key: '$os', operator: 'exact', value: 'Mac OS X', type: 'event' }],
    });
    expect(funnelFilters({ ...funnel, viz: 'trends' })).toMatchObject({ breakdown: undefined, interval: 'day', funnel_viz_type: 'trends' });
  });

  it('time to convert spans the chosen steps, kept inside the funnel and in order', () => {
    expect(funnelFilters({ ...funnel, viz: 'time_to_convert' })).toMatchObject({ funnel_from_step: 0, funnel_to_step: 2 });
    expect(convertSpan({ ...funnel, from_step: 1, to_step: 2 })).toEqual({ funnel_from_step: 1, funnel_to_step: 2 });
    expect(convertSpan({ ...funnel, from_step: 2, to_step: 1 })).toEqual({ funnel_from_step: 0, funnel_to_step: 1 });
    expect(convertSpan({ ...funnel, steps: ['a', 'b'], from_step: 1, to_step: 2 })).toEqual({ funnel_from_step: 0, funnel_to_step: 1 });
  });

  it('come back from saved filters, with steps in order', () => {
    const saved = JSON.parse(JSON.stringify(funnelFilters({ ...funnel, viz: 'time_to_convert', from_step: 1 }))) as Record<string, unknown>;
    (saved['events'] as unknown[]).reverse();
    expect(funnelQueryFromFilters(saved)).toEqual({ ...funnel, breakdown: undefined, viz: 'time_to_convert', interval: undefined, from_step: 1, to_step: 2 });
    expect(funnelQueryFromFilters({ insight: 'FUNNELS', events: [{ id: 'one' }] })).toBeNull();
    expect(funnelQueryFromUrl(new URL('http://x/funnels?q=' + encodeURIComponent('{"steps":["only"]}'))).steps).toEqual(['$pageview', 'signed_up']);
  });
});

describe('date ranges', () => {
  it('name a range the presets do not hold as PostHog words it, else as it is stored', () => {
    expect(describeRange('-7d')).toBe('Last 7 days');
    expect(describeRange('-1mStart', '-1mEnd')).toBe('Previous month');
    expect(describeRange('-45d')).toBe('Last 45 days');
    expect(describeRange('-1w')).toBe('Last 1 week');
    expect(describeRange('-3m')).toBe('Last 3 months');
    expect(describeRange('2024-01-01')).toBe('From 2024-01-01');
    expect(describeRange('2024-01-01', '2024-01-31')).toBe('2024-01-01 – 2024-01-31');
    expect(describeRange('mStart', '-1dEnd')).toBe('mStart – -1dEnd');
  });

  it('give a custom range PostHog’s default interval for its length', () => {
    expect(customRangeInterval('2024-01-01', '2024-01-01')).toBe('hour');
    expect(customRangeInterval('2024-01-01', '2024-01-05')).toBe('day');
    expect(customRangeInterval('2024-01-01', '2024-01-20')).toBe('week');
    expect(customRangeInterval('2024-01-01', '2024-03-15')).toBe('month');
    expect(customRangeInterval('2024-01-01', undefined, new Date('2024-01-03T10:00:00Z'))).toBe('day');
  });
});
