import { parseTrendFilter } from './trend-filter';
import { legacyFilterFromQuery } from '../common/legacy-query-string';
import { QueryFilterError } from '../common/query-filter-error';

const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof QueryFilterError) return { attr: e.attr, code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a QueryFilterError');
};

describe('parseTrendFilter', () => {
  it('accepts the interface example and fills PostHog defaults', () => {
    const f = parseTrendFilter({ events: [{ id: 'signup', math: 'total' }] });
    expect(f.series).toEqual([expect.objectContaining({ kind: 'events', id: 'signup', math: 'total', order: 0 })]);
    expect(f).toMatchObject({ interval: 'day', display: 'ActionsLineGraph', breakdown_limit: 25, compare: false, breakdowns: [] });
  });

  it('answers no series as an empty list rather than an error', () => {
    expect(parseTrendFilter({}).series).toEqual([]);
    expect(parseTrendFilter({ events: [] }).series).toEqual([]);
  });

  it('orders events and actions by order, letters following that order', () => {
    const f = parseTrendFilter({ events: [{ id: 'b', order: 1 }], actions: [{ id: 7, order: 0 }] });
    expect(f.series.map((s) => [s.kind, s.id])).toEqual([
      ['actions', 7],
      ['events', 'b'],
    ]);
  });

  it('accepts the document’s group shape, flat lists and nested groups', () => {
    const f = parseTrendFilter({
      events: [{ id: 'a', properties: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }] }],
      properties: {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'x', value: 1 }] },
          { key: 'email', operator: 'is_set', type: 'person' },
        ],
      },
    });
    expect(f.series[0]!.properties).toEqual({
      type: 'AND',
      values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }],
    });
    expect(f.properties.type).toBe('OR');
  });

  it('reads breakdowns of every shape', () => {
    expect(parseTrendFilter({ events: [{ id: 'a' }], breakdown: '$browser' }).breakdowns).toEqual([
      { type: 'event', property: '$browser', group_type_index: null, histogram_bin_count: null, normalize_url: false },
    ]);
    expect(parseTrendFilter({ events: [{ id: 'a' }], breakdown: [3, 'all'], breakdown_type: 'cohort' }).breakdowns.map((b) => b.property)).toEqual([3, 'all']);
    // A JSON list in a string, as PostHog's tests send it (json.dumps([cohort.pk, "all"])).
    expect(parseTrendFilter({ events: [{ id: 'a' }], breakdown: '[3, "all"]', breakdown_type: 'cohort' }).breakdowns.map((b) => b.property)).toEqual([
      3,
      'all',
    ]);
    expect(parseTrendFilter({ events: [{ id: 'a' }], breakdown: '[weird' }).breakdowns.map((b) => b.property)).toEqual(['[weird']);
    expect(
      parseTrendFilter({ events: [{ id: 'a' }], breakdown: 'name', breakdown_type: 'group', breakdown_group_type_index: 1 }).breakdowns[0]!.group_type_index,
    ).toBe(1);
    expect(
      parseTrendFilter({
        events: [{ id: 'a' }],
        breakdowns: [
          { property: 'a', type: 'event' },
          { property: 'b', type: 'person', histogram_bin_count: 5 },
        ],
      }).breakdowns,
    ).toHaveLength(2);
  });

  it.each([
    [{ events: [{ id: 5 }] }, 'events__0__id', 'invalid'],
    [{ events: 'signup' }, 'events', 'invalid'],
    [{ events: [{ id: 'a', math: 'p42' }] }, 'events__0__math', 'invalid_choice'],
    [{ events: [{ id: 'a', math: 'sum' }] }, 'events__0__math_property', 'required'],
    [{ events: [{ id: 'a', math: 'unique_group' }] }, 'events__0__math_group_type_index', 'required'],
    [{ events: [{ id: 'a', math: 'hogql' }] }, 'events__0__math_hogql', 'required'],
    [{ actions: [{ id: 'x' }] }, 'actions__0__id', 'invalid'],
    [{ events: [{ id: 'a' }], interval: 'fortnight' }, 'interval', 'invalid_choice'],
    [{ events: [{ id: 'a' }], display: 'Sparkles' }, 'display', 'invalid_choice'],
    [{ events: [{ id: 'a' }], breakdown: 'x', breakdown_type: 'planet' }, 'breakdown_type', 'invalid_choice'],
    [{ events: [{ id: 'a' }], breakdown: 'x', breakdown_type: 'group' }, 'breakdown_group_type_index', 'required'],
    [{ events: [{ id: 'a' }], breakdown: ['x'], breakdown_type: 'cohort' }, 'breakdown__0', 'invalid'],
    [{ events: [{ id: 'a' }], breakdowns: [{}, {}, {}, {}] }, 'breakdowns', 'max_length'],
    [{ events: [{ id: 'a' }], breakdown_limit: 0 }, 'breakdown_limit', 'min_value'],
    [{ events: [{ id: 'a' }], properties: [{ key: 'x', value: 'y', operator: 'near' }] }, 'properties__0', 'invalid_operator'],
    [{ events: [{ id: 'a' }], properties: [{ key: 'x', value: 'y', type: 'planet' }] }, 'properties__0', 'not_supported'],
    [{ events: [{ id: 'a', properties: [{ type: 'AND', values: [{ value: 'y' }] }] }] }, 'events__0__properties__0__values__0', 'invalid_input'],
    [{ events: [{ id: 'a' }], properties: 'x' }, 'properties', 'invalid_input'],
    [{ events: Array.from({ length: 51 }, () => ({ id: 'a' })) }, 'events', 'max_length'],
  ])('%j is a 400 naming %s', (body, attr, code) => {
    expect(errorOf(() => parseTrendFilter(body))).toMatchObject({ attr, code });
  });
});

describe('breakdown_limit', () => {
  // PostHog lowers a larger limit to MAX_BREAKDOWN_VALUES_LIMIT (trends/test/test_breakdown_limits.py).
  it.each([
    [undefined, 25],
    [50, 50],
    [250, 250],
    [1000, 250],
    ['100000', 250],
  ])('breakdown_limit %j gives %d breakdown values at most', (asked, expected) => {
    expect(parseTrendFilter({ events: [{ id: 'a' }], breakdown: 'b', breakdown_limit: asked }).breakdown_limit).toBe(expected);
  });
});

describe('legacyFilterFromQuery', () => {
  it('decodes JSON-encoded lists of the legacy GET form', () => {
    expect(legacyFilterFromQuery({ events: '[{"id":"a"}]', date_from: '-14d', compare: 'false', breakdowns: '[{"property":"a"}]' })).toEqual({
      events: [{ id: 'a' }],
      date_from: '-14d',
      compare: false,
      breakdowns: [{ property: 'a' }],
    });
  });
  it('reports invalid JSON', () => {
    expect(() => legacyFilterFromQuery({ events: '[{' })).toThrow(QueryFilterError);
  });
});
