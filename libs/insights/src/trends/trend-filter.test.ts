import { parseTrendFilter, trendFilterFromQuery, TrendFilterError } from './trend-filter';

const attrOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof TrendFilterError) return e.attr;
    throw e;
  }
  throw new Error('expected a TrendFilterError');
};

describe('parseTrendFilter', () => {
  it('accepts the interface example', () => {
    const f = parseTrendFilter({ events: [{ id: 'signup', math: 'total' }] });
    expect(f.events[0]!.id).toBe('signup');
  });
  it('requires events', () => {
    expect(attrOf(() => parseTrendFilter({}))).toBe('events');
    expect(attrOf(() => parseTrendFilter({ events: [] }))).toBe('events');
  });
  it('names the field of a type error', () => {
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 5 }] }))).toBe('events__0__id');
    expect(attrOf(() => parseTrendFilter({ events: 'signup' }))).toBe('events');
  });
  it('refuses what is not supported yet instead of answering wrongly', () => {
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a', math: 'sum' }] }))).toBe('events__0__math');
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a' }], breakdown: '$browser' }))).toBe('breakdown');
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a' }], interval: 'hour' }))).toBe('interval');
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a' }], properties: [{ key: 'x', value: 'y', type: 'person' }] }))).toBe('properties__0');
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a', properties: [{ key: 'x', value: 'y', operator: 'icontains' }] }] }))).toBe(
      'events__0__properties__0',
    );
    expect(attrOf(() => parseTrendFilter({ events: [{ id: 'a' }], properties: 'x' }))).toBe('properties');
  });
  it('accepts exact event-property filters on the query and on a series, as a list or an AND group', () => {
    const f = parseTrendFilter({
      events: [{ id: 'a', properties: [{ key: 'plan', value: ['pro', 'team'], operator: 'exact', type: 'event' }] }],
      properties: { type: 'AND', values: [{ key: '$feature_flag', value: 'beta' }] },
    });
    expect(f.properties).toEqual([{ key: '$feature_flag', type: 'event', operator: 'exact', value: 'beta' }]);
    expect(f.events[0]!.properties).toEqual([{ key: 'plan', type: 'event', operator: 'exact', value: ['pro', 'team'] }]);
  });
});

describe('trendFilterFromQuery', () => {
  it('decodes JSON-encoded lists of the legacy GET form', () => {
    expect(trendFilterFromQuery({ events: '[{"id":"a"}]', date_from: '-14d', compare: 'false' })).toEqual({
      events: [{ id: 'a' }],
      date_from: '-14d',
      compare: false,
    });
  });
  it('reports invalid JSON', () => {
    expect(() => trendFilterFromQuery({ events: '[{' })).toThrow(TrendFilterError);
  });
});
