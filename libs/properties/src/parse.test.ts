import { filtersOf, parsePropertyFilters, PropertyFilterError } from './parse';

const events = { types: new Set(['event', 'person', 'group', 'cohort']) };
const problem = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof PropertyFilterError) return { attr: error.attr, code: error.code, message: error.message };
    throw error;
  }
  throw new Error('no error');
};

describe('parsePropertyFilters', () => {
  const filter = { key: 'plan', value: 'pro', operator: 'exact', type: 'event' };

  it("reads PostHog's legacy dict form, the operator after __ in the key", () => {
    expect(parsePropertyFilters({ $browser: 'Safari', $os__icontains: 'mac' }, 'properties', events)).toEqual({
      type: 'AND',
      values: [
        { key: '$browser', value: 'Safari', operator: 'exact', type: 'event' },
        { key: '$os', value: 'mac', operator: 'icontains', type: 'event' },
      ],
    });
    // A property named "key" (test_basic_funnel_with_derivative_steps sends {"key": "val"}).
    expect(filtersOf(parsePropertyFilters({ key: 'val' }, 'properties', events))).toEqual([{ key: 'key', value: 'val', operator: 'exact', type: 'event' }]);
  });

  it('reads every shape clients send as one group', () => {
    expect(parsePropertyFilters(undefined, 'properties', events)).toEqual({ type: 'AND', values: [] });
    expect(parsePropertyFilters({}, 'properties', events)).toEqual({ type: 'AND', values: [] });
    expect(parsePropertyFilters([filter], 'properties', events)).toEqual({ type: 'AND', values: [filter] });
    expect(parsePropertyFilters({ type: 'OR', values: [filter] }, 'properties', events)).toEqual({ type: 'OR', values: [filter] });
    // The list-of-groups shape of a series' properties.
    expect(parsePropertyFilters([{ type: 'AND', values: [filter] }], 'events__0__properties', events)).toEqual({
      type: 'AND',
      values: [{ type: 'AND', values: [filter] }],
    });
    const nested = {
      type: 'AND',
      values: [
        { type: 'OR', values: [filter, { ...filter, value: 'team' }] },
        { key: 'n', value: 3, operator: 'gt' },
      ],
    };
    expect(filtersOf(parsePropertyFilters(nested, 'properties', events)).map((f) => f.key)).toEqual(['plan', 'plan', 'n']);
  });

  it('fills defaults: type event, operator exact, cohort operator in with a numeric id', () => {
    expect(parsePropertyFilters([{ key: 'plan', value: 'pro' }], 'properties', events).values[0]).toEqual({ ...filter });
    expect(parsePropertyFilters([{ key: 'id', value: '12', type: 'cohort' }], 'properties', events).values[0]).toEqual({
      key: 'id',
      value: 12,
      type: 'cohort',
      operator: 'in',
    });
  });

  it('reads "precalculated-cohort" and "static-cohort" as cohort filters where cohorts apply (PostHog clean_properties.py)', () => {
    for (const type of ['precalculated-cohort', 'static-cohort']) {
      expect(parsePropertyFilters([{ key: 'id', value: 7, type }], 'properties', events).values[0]).toEqual({
        key: 'id',
        value: 7,
        type: 'cohort',
        operator: 'in',
      });
      expect(problem(() => parsePropertyFilters([{ key: 'id', value: 7, type }], 'properties', { types: new Set(['event']) }))).toMatchObject({
        code: 'not_supported',
        message: `Property filters of type "${type}" are not supported here (supported: event).`,
      });
    }
  });

  it('names the field of the first problem', () => {
    expect(problem(() => parsePropertyFilters([filter, { value: 1 }], 'properties', events))).toMatchObject({
      attr: 'properties__1',
      message: 'A property filter needs a key.',
    });
    expect(problem(() => parsePropertyFilters({ type: 'AND', values: [{ key: 'k', type: 'session' }] }, 'properties', events))).toMatchObject({
      attr: 'properties__values__0',
      code: 'not_supported',
    });
    expect(problem(() => parsePropertyFilters([{ key: 'k', operator: 'vibes', value: 1 }], 'p', events))).toMatchObject({ code: 'invalid_operator' });
    expect(problem(() => parsePropertyFilters([{ key: 'k', operator: 'regex', value: 'a(?=b)' }], 'p', events))).toMatchObject({ code: 'invalid_value' });
    expect(problem(() => parsePropertyFilters([{ key: 'k', operator: 'gt', value: 'many' }], 'p', events))).toMatchObject({
      message: 'Operator "gt" needs a number.',
    });
    expect(problem(() => parsePropertyFilters([{ key: 'k', operator: 'between', value: [1] }], 'p', events))).toMatchObject({ code: 'invalid_input' });
    expect(problem(() => parsePropertyFilters([{ key: 'k', type: 'group', value: 'x' }], 'p', events))).toMatchObject({
      message: expect.stringMatching(/group_type_index/),
    });
    expect(problem(() => parsePropertyFilters([{ key: 'k', value: Array.from({ length: 1001 }, () => 'v') }], 'p', events))).toMatchObject({
      attr: 'p__0__value',
      code: 'max_length',
    });
  });

  it('checks element filters: what they read, and selectors and tags by exact or is_not only', () => {
    const elements = { types: new Set(['element']) };
    expect(parsePropertyFilters([{ key: 'selector', value: 'nav > a', operator: 'is_not', type: 'element' }], 'p', elements).values).toHaveLength(1);
    expect(problem(() => parsePropertyFilters([{ key: 'class', value: 'x', type: 'element' }], 'p', elements))).toMatchObject({
      attr: 'p__0',
      code: 'invalid_input',
    });
    expect(problem(() => parsePropertyFilters([{ key: 'tag_name', value: 'a', operator: 'icontains', type: 'element' }], 'p', elements))).toMatchObject({
      attr: 'p__0',
      code: 'not_supported',
    });
    expect(problem(() => parsePropertyFilters([{ key: 'text', value: '(', operator: 'regex', type: 'element' }], 'p', elements))).toMatchObject({
      code: 'invalid_value',
    });
  });

  it('takes numbers for numeric operators within Int64 only, integer texts compared exactly', () => {
    const numeric = (operator: string, value: unknown) => () => parsePropertyFilters([{ key: 'n', operator, value }], 'p', events);
    for (const value of ['9223372036854775807', '-9223372036854775808', '9007199254740993', '1.5', -1e18, ' 42 ']) {
      expect(numeric('gt', value)()).toMatchObject({ values: [{ value }] });
    }
    for (const [operator, value] of [
      ['gt', '9223372036854775808'],
      ['lte', '-9223372036854775809'],
      ['min', '1e19'],
      ['max', '-1.5e300'],
      ['lt', ['99999999999999999999']],
      ['between', ['1', '9223372036854775808']],
      ['not_between', ['-9223372036854775809', '1']],
    ] as const) {
      expect(problem(numeric(operator, value))).toEqual({
        attr: 'p__0__value',
        code: 'max_value',
        message: `Operator "${operator}" compares numbers between -9223372036854775808 and 9223372036854775807.`,
      });
    }
    // Other operators compare text: any digits go.
    expect(numeric('exact', '9223372036854775808')()).toMatchObject({ values: [{ value: '9223372036854775808' }] });
  });

  it('lets a caller narrow the operators', () => {
    expect(
      problem(() => parsePropertyFilters([{ key: 'k', operator: 'icontains', value: 'x' }], 'p', { ...events, operators: new Set(['exact']) })),
    ).toMatchObject({
      code: 'not_supported',
    });
  });
});
