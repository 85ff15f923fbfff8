import { groupingPattern } from './paths.sql';
import { reachableEdges } from './paths.query';
import { parsePathsFilter } from './paths-filter';
import { pathsQueryToFilter } from './paths-query-node';

/** PostHog's TestClickhousePathsEdgeValidation (test_paths_query_runner_ee.py): which edges hang from a first step. */
describe('reachableEdges (PostHog validate_results)', () => {
  const edge = ([source, target]: [string, string]) => ({ source, target });
  const BASIC_PATH: [string, string][] = [
    ['1_a', '2_b'],
    ['2_b', '3_c'],
    ['3_c', '4_d'],
  ];
  const BASIC_PATH_2: [string, string][] = [
    ['1_x', '2_y'],
    ['2_y', '3_z'],
  ];
  const kept = (pairs: [string, string][]) => reachableEdges(pairs.map(edge)).map((e) => [e.source, e.target]);

  it('test_basic_forest', () => {
    expect(kept([...BASIC_PATH, ...BASIC_PATH_2])).toEqual([...BASIC_PATH, ...BASIC_PATH_2]);
  });
  it('test_basic_forest_with_dangling_edges', () => {
    expect(kept([...BASIC_PATH, ...BASIC_PATH_2, ['2_w', '3_z'], ['3_x', '4_d'], ['2_xxx', '3_yyy']])).toEqual([...BASIC_PATH, ...BASIC_PATH_2]);
  });
  it('test_basic_forest_with_dangling_and_cross_edges', () => {
    expect(kept([...BASIC_PATH, ...BASIC_PATH_2, ['2_w', '3_z'], ['3_x', '4_d'], ['2_y', '3_c']])).toEqual([...BASIC_PATH, ...BASIC_PATH_2, ['2_y', '3_c']]);
  });
  it('test_no_start_point', () => {
    expect(kept([...BASIC_PATH.slice(1), ...BASIC_PATH_2, ['2_w', '3_z'], ['3_x', '4_d']])).toEqual(BASIC_PATH_2);
  });
});

describe('groupingPattern (a path grouping as PostHog matches it)', () => {
  it('escapes what Python re.escape escapes, and makes each * any run of characters', () => {
    expect(groupingPattern('/bar/*/foo')).toBe('/bar/.*/foo');
    expect(groupingPattern('(a+)+')).toBe('\\(a\\+\\)\\+');
    expect(groupingPattern('/3?q=1')).toBe('/3\\?q=1');
    expect(groupingPattern('1.*')).toBe('1\\..*');
  });
});

describe('parsePathsFilter', () => {
  it("reads a PathsQuery node's pathsFilter with PostHog's defaults", () => {
    const filter = parsePathsFilter(pathsQueryToFilter({ kind: 'PathsQuery', pathsFilter: { stepLimit: 0, edgeLimit: null, minEdgeWeight: 0 } }));
    expect(filter).toMatchObject({ stepLimit: 5, edgeLimit: 50, minEdgeWeight: null, maxEdgeWeight: null, includeEventTypes: [], excludeEvents: [] });
  });

  it('refuses with the field named: bad types, non-RE2 cleaning rules, too many groupings', () => {
    const refused = (body: Record<string, unknown>) => {
      try {
        parsePathsFilter(body);
        return null;
      } catch (error) {
        return (error as { attr: string }).attr;
      }
    };
    expect(refused({ include_event_types: '$pageview' })).toBe('include_event_types');
    expect(refused({ local_path_cleaning_filters: [{ regex: '(a' }] })).toBe('local_path_cleaning_filters__0');
    expect(refused({ path_groupings: Array.from({ length: 101 }, (_, i) => `/${i}`) })).toBe('path_groupings');
    expect(refused({ step_limit: 51 })).toBe('step_limit');
    expect(refused({ edge_limit: -1 })).toBe('edge_limit');
    expect(refused({ sampling_factor: 0.1 })).toBe('sampling_factor');
  });
});
