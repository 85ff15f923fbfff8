import { compilePropertyGroup, eventsTablePropertiesColumn, PropertyCompileError } from './compile';
import { QueryParams } from './query-params';
import { parsePropertyFilters } from './parse';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const all = { types: new Set(['event', 'person', 'group', 'cohort', 'element']) };

function compile(properties: unknown, cohort = true, elements = true) {
  const params = new QueryParams();
  const sql = compilePropertyGroup(parsePropertyFilters(properties, 'properties', all), {
    params,
    propertiesColumn: eventsTablePropertiesColumn,
    elementsChainColumn: elements ? 'elements_chain' : undefined,
    cohortMembership: cohort ? (id) => `person_id IN (SELECT person_id FROM cohort_members WHERE cohort_id = ${params.add(id, 'Int64')})` : undefined,
    nowMs: NOW,
  });
  return { sql, params: params.values };
}

describe('compilePropertyGroup', () => {
  it('binds every key and value as a parameter', () => {
    const { sql, params } = compile([{ key: "x'); DROP TABLE events; --", value: "' OR 1=1 --" }]);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('OR 1=1');
    expect(Object.values(params)).toEqual(["x'); DROP TABLE events; --", "' OR 1=1 --"]);
  });

  it('an empty group is true', () => {
    expect(compile(undefined).sql).toBe('1');
  });

  // Normalised snapshots of the shapes trends, funnels and person lists depend on.
  it.each([
    ['exact list on an event property', [{ key: 'plan', value: ['pro', 'team'] }]],
    ['is_not on a person property', [{ key: 'email', value: 'a@b.c', operator: 'is_not', type: 'person' }]],
    ['icontains on a group property', [{ key: 'name', value: '50%_off', operator: 'icontains', type: 'group', group_type_index: 2 }]],
    [
      'numbers, ranges and presence',
      {
        type: 'AND',
        values: [
          { key: 'n', value: 3, operator: 'gte' },
          { key: 'n', value: [1, 9], operator: 'between' },
          { key: 'm', operator: 'is_set' },
        ],
      },
    ],
    [
      'nested OR inside AND with a cohort',
      {
        type: 'AND',
        values: [
          {
            type: 'OR',
            values: [
              { key: 'a', value: '1' },
              { key: 'b', value: '2', operator: 'regex' },
            ],
          },
          { key: 'id', value: 7, type: 'cohort', operator: 'not_in' },
        ],
      },
    ],
    [
      'relative and absolute dates',
      [
        { key: 'signed_up', value: '-7d', operator: 'is_date_after' },
        { key: 'signed_up', value: '2024-01-01', operator: 'is_date_before' },
      ],
    ],
    [
      'element text, href, tag and selector',
      [
        { key: 'text', value: ['Buy', 'Order'], type: 'element' },
        { key: 'href', value: '/pricing', operator: 'icontains', type: 'element' },
        { key: 'tag_name', value: 'button', operator: 'is_not', type: 'element' },
        { key: 'selector', value: 'nav > a', type: 'element' },
      ],
    ],
    ['element text, every value excluded', [{ key: 'text', value: ['a', 'b'], operator: 'not_icontains', type: 'element' }]],
  ])('%s', (_name, properties) => {
    expect(compile(properties)).toMatchSnapshot();
  });

  it('refuses a stored number past Int64 (saved before parsing checked it) when compiling', () => {
    const stored = { type: 'AND' as const, values: [{ key: 'n', type: 'event', operator: 'gt', value: '9223372036854775808' }] };
    const ctx = { params: new QueryParams(), propertiesColumn: eventsTablePropertiesColumn, nowMs: NOW };
    expect(() => compilePropertyGroup(stored, ctx)).toThrow(
      new PropertyCompileError('Operator "gt" compares numbers between -9223372036854775808 and 9223372036854775807.'),
    );
    const between = { type: 'AND' as const, values: [{ key: 'n', type: 'event', operator: 'between', value: [1, 1e19] }] };
    expect(() => compilePropertyGroup(between, ctx)).toThrow(PropertyCompileError);
  });

  it('binds integers past 2^53 as their digits, which every ClickHouse client sends as they are', () => {
    const params = new QueryParams();
    params.add(9223372036854775807, 'Float64');
    params.add(-1e19, 'Float64');
    params.add(9007199254740991, 'Int64');
    params.add(0.5, 'Float64');
    expect(params.values).toEqual({ p0: '9223372036854775808', p1: '-10000000000000000000', p2: 9007199254740991, p3: 0.5 });
    expect(compile([{ key: 'n', operator: 'gt', value: '9007199254740993' }]).params).toMatchObject({ p1: '9007199254740992' });
  });

  it('refuses what the query cannot apply', () => {
    expect(() => compile([{ key: 'id', value: 1, type: 'cohort' }], false)).toThrow(PropertyCompileError);
    expect(() => compile([{ key: 'v', value: '1.0.0', operator: 'semver_gt' }])).toThrow('Operator "semver_gt" is not supported in queries.');
    expect(() => compile([{ key: 'text', value: 'x', type: 'element' }], true, false)).toThrow('Element filters are not supported in this query.');
  });
});
