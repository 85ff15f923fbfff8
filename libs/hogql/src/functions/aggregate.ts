import { fn, type HogQLFunction } from './function-spec';

/** The most elements an aggregate that collects values keeps (groupArray and its kin). */
export const MAX_COLLECTED_ELEMENTS = 10_000;

const agg = (clickhouse: string, min: number, max: number | null, extra: Partial<HogQLFunction> = {}) =>
  fn(clickhouse, min, max, { aggregate: true, ...extra });
const numeric = (clickhouse: string, min: number, max: number | null, extra: Partial<HogQLFunction> = {}) =>
  agg(clickhouse, min, max, { numericFirstArgument: true, ...extra });
const collecting = (clickhouse: string, min: number, max: number) =>
  agg(clickhouse, min, max, { minParams: 0, maxParams: 1, bound: { kind: 'max-size-parameter', argument: 0, max: MAX_COLLECTED_ELEMENTS } });
const leveled = (clickhouse: string, min: number, max: number, maxParams = 1) => numeric(clickhouse, min, max, { minParams: 1, maxParams });

/**
 * The combinators PostHog generates over its base aggregates (COMBINATORS in
 * posthog/hogql/functions/aggregations.py): each adds its suffix, may be followed by the
 * suffixes listed, and `If`/`ArgMin`/`ArgMax` take one more argument. Left out: `State`, `Merge`
 * (they answer and read ClickHouse's internal aggregation states, which only pre-aggregated
 * tables hold) and `Map` (no Sightline table has Map columns).
 */
const COMBINATORS: Record<string, { then: string[]; extraArgument: boolean }> = {
  If: { then: [], extraArgument: true },
  Array: { then: ['If', 'OrDefault', 'OrNull'], extraArgument: false },
  ForEach: { then: ['If', 'OrDefault', 'OrNull'], extraArgument: false },
  OrDefault: { then: ['If'], extraArgument: false },
  OrNull: { then: ['If'], extraArgument: false },
  ArgMin: { then: ['If', 'OrDefault', 'OrNull'], extraArgument: true },
  ArgMax: { then: ['If', 'OrDefault', 'OrNull'], extraArgument: true },
};
const COMBINED_BASES: Record<string, HogQLFunction> = {
  avg: numeric('avg', 1, 1),
  sum: numeric('sum', 1, 1),
  min: agg('min', 1, 1),
  max: agg('max', 1, 1),
  count: agg('count', 0, 1),
  countDistinct: agg('countDistinct', 1, 1),
  median: numeric('median', 1, 1),
};

function combinations(): Record<string, HogQLFunction> {
  const out: Record<string, HogQLFunction> = {};
  const grow = (base: string, spec: HogQLFunction, suffixes: string[]) => {
    if (suffixes.length > 0) {
      const extra = suffixes.filter((suffix) => COMBINATORS[suffix]!.extraArgument).length;
      const name = base + suffixes.join('');
      out[name] = { ...spec, clickhouse: name, minArgs: spec.minArgs + extra, maxArgs: spec.maxArgs + extra };
    }
    const next = suffixes.length === 0 ? Object.keys(COMBINATORS) : COMBINATORS[suffixes[suffixes.length - 1]!]!.then;
    for (const suffix of next) if (!suffixes.includes(suffix)) grow(base, spec, [...suffixes, suffix]);
  };
  for (const [base, spec] of Object.entries(COMBINED_BASES)) grow(base, spec, []);
  return out;
}

/**
 * Aggregates (HOGQL_AGGREGATIONS in posthog/hogql/functions/aggregations.py), only where the
 * caller allows aggregation. Those that collect values keep at most MAX_COLLECTED_ELEMENTS
 * (PostHog leaves it to the query's memory limit). Left out: the `*State`/`*Merge`/`*Map`
 * forms, the templates PostHog expands into other SQL (json_agg, string_agg, every, md5),
 * windowFunnel, and groupArrayMoving* (as long as their input).
 */
export const AGGREGATE_FUNCTIONS: Record<string, HogQLFunction> = {
  ...combinations(),
  count: agg('count', 0, 1, { caseInsensitive: true }),
  countIf: agg('countIf', 1, 2),
  countDistinctIf: agg('countDistinctIf', 1, 2),
  min: agg('min', 1, 1, { caseInsensitive: true }),
  minIf: agg('minIf', 2, 2),
  max: agg('max', 1, 1, { caseInsensitive: true }),
  maxIf: agg('maxIf', 2, 2),
  sum: numeric('sum', 1, 1, { caseInsensitive: true }),
  sumIf: numeric('sumIf', 2, 2),
  avg: numeric('avg', 1, 1, { caseInsensitive: true }),
  avgIf: numeric('avgIf', 2, 2),
  any: agg('any', 1, 1),
  anyIf: agg('anyIf', 2, 2),
  anyHeavy: agg('anyHeavy', 1, 1),
  anyHeavyIf: agg('anyHeavyIf', 2, 2),
  anyLast: agg('anyLast', 1, 1),
  anyLastIf: agg('anyLastIf', 2, 2),
  argMin: agg('argMin', 2, 2),
  argMinIf: agg('argMinIf', 3, 3),
  argMax: agg('argMax', 2, 2),
  argMaxIf: agg('argMaxIf', 3, 3),
  stddevPop: numeric('stddevPop', 1, 1),
  stddevPopIf: numeric('stddevPopIf', 2, 2),
  stddevSamp: numeric('stddevSamp', 1, 1),
  stddevSampIf: numeric('stddevSampIf', 2, 2),
  varPop: numeric('varPop', 1, 1),
  varPopIf: numeric('varPopIf', 2, 2),
  varSamp: numeric('varSamp', 1, 1),
  varSampIf: numeric('varSampIf', 2, 2),
  covarPop: numeric('covarPop', 2, 2),
  covarPopIf: numeric('covarPopIf', 3, 3),
  covarSamp: numeric('covarSamp', 2, 2),
  covarSampIf: numeric('covarSampIf', 3, 3),
  corr: numeric('corr', 2, 2),
  skewPop: numeric('skewPop', 1, 1),
  skewSamp: numeric('skewSamp', 1, 1),
  kurtPop: numeric('kurtPop', 1, 1),
  kurtSamp: numeric('kurtSamp', 1, 1),
  avgWeighted: numeric('avgWeighted', 2, 2),
  avgWeightedIf: numeric('avgWeightedIf', 3, 3),
  avgArray: agg('avgArrayOrNull', 1, 1),
  medianArray: agg('medianArrayOrNull', 1, 1),
  sumWithOverflow: numeric('sumWithOverflow', 1, 1),
  deltaSum: numeric('deltaSum', 1, 1),
  deltaSumTimestamp: numeric('deltaSumTimestamp', 2, 2),
  groupArray: collecting('groupArray', 1, 1),
  array_agg: collecting('groupArray', 1, 1),
  groupArrayIf: collecting('groupArrayIf', 2, 2),
  groupUniqArray: collecting('groupUniqArray', 1, 1),
  groupUniqArrayIf: collecting('groupUniqArrayIf', 2, 2),
  groupArraySample: agg('groupArraySample', 1, 1, {
    minParams: 1,
    maxParams: 2,
    bound: { kind: 'max-size-parameter', argument: 0, max: MAX_COLLECTED_ELEMENTS },
  }),
  groupArraySampleIf: agg('groupArraySampleIf', 2, 2, {
    minParams: 1,
    maxParams: 2,
    bound: { kind: 'max-size-parameter', argument: 0, max: MAX_COLLECTED_ELEMENTS },
  }),
  topK: agg('topK', 1, 1, { minParams: 1, maxParams: 1, bound: { kind: 'max-size-parameter', argument: 0, max: MAX_COLLECTED_ELEMENTS } }),
  groupBitAnd: agg('groupBitAnd', 1, 1),
  groupBitOr: agg('groupBitOr', 1, 1),
  groupBitXor: agg('groupBitXor', 1, 1),
  uniq: agg('uniq', 1, null),
  uniqIf: agg('uniqIf', 2, null),
  uniqExact: agg('uniqExact', 1, null),
  uniqExactIf: agg('uniqExactIf', 2, null),
  uniqHLL12: agg('uniqHLL12', 1, null),
  median: numeric('median', 1, 1),
  medianIf: numeric('medianIf', 2, 2),
  medianExact: numeric('medianExact', 1, 1),
  medianExactIf: numeric('medianExactIf', 2, 2),
  medianTiming: numeric('medianTiming', 1, 1),
  medianDeterministic: numeric('medianDeterministic', 2, 2),
  medianTDigest: numeric('medianTDigest', 1, 1),
  medianBFloat16: numeric('medianBFloat16', 1, 1),
  quantile: leveled('quantile', 1, 1),
  quantileIf: leveled('quantileIf', 2, 2),
  quantileExact: leveled('quantileExact', 1, 1),
  // PostHog lists quantiles without parameters yet passes them through; the levels are parameters.
  quantiles: leveled('quantiles', 1, 1, 20),
  quantilesIf: leveled('quantilesIf', 2, 2, 20),
  simpleLinearRegression: numeric('simpleLinearRegression', 2, 2),
  contingency: agg('contingency', 2, 2),
  cramersV: agg('cramersV', 2, 2),
  cramersVBiasCorrected: agg('cramersVBiasCorrected', 2, 2),
  theilsU: agg('theilsU', 2, 2),
  maxIntersections: agg('maxIntersections', 2, 2),
  maxIntersectionsPosition: agg('maxIntersectionsPosition', 2, 2),
};
