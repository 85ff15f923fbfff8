import { fn, type HogQLFunction } from './function-spec';

/** The most elements a function told a size may build (range, arrayResize, arrayWithConstant). */
export const MAX_BUILT_ARRAY_ELEMENTS = 10_000;

const lambda = (clickhouse: string, min: number, max: number | null) => fn(clickhouse, min, max, { lambdas: true });
const sized = (clickhouse: string, min: number, max: number, argument: number, smallest: number) =>
  fn(clickhouse, min, max, { bound: { kind: 'size-argument', argument, min: smallest, max: MAX_BUILT_ARRAY_ELEMENTS } });

/**
 * Array functions and those shared by arrays and strings (posthog/hogql/functions/clickhouse/
 * arrays.py), with the tuple functions of mapping.py. The higher-order ones take lambdas. Those
 * that build an array of a size they are told take that size as a constant up to
 * MAX_BUILT_ARRAY_ELEMENTS (PostHog leaves it to the query's memory limit). Left out:
 * generateSeries (a table function) and untuple (it spreads a tuple into columns of a SELECT).
 */
export const ARRAY_FUNCTIONS: Record<string, HogQLFunction> = {
  empty: fn('empty', 1, 1),
  notEmpty: fn('notEmpty', 1, 1),
  isEmpty: fn('empty', 1, 1),
  isNotEmpty: fn('notEmpty', 1, 1),
  length: fn('length', 1, 1, { caseInsensitive: true }),
  reverse: fn('reverse', 1, 1, { caseInsensitive: true }),
  array: fn('array', 0, null),
  range: fn('range', 1, 3, { bound: { kind: 'range', argument: 0, max: MAX_BUILT_ARRAY_ELEMENTS } }),
  arrayConcat: fn('arrayConcat', 2, null),
  arrayElement: fn('arrayElement', 2, 2),
  has: fn('has', 2, 2),
  hasAll: fn('hasAll', 2, 2),
  hasAny: fn('hasAny', 2, 2),
  hasSubstr: fn('hasSubstr', 2, 2),
  indexOf: fn('indexOf', 2, 2),
  arrayCount: lambda('arrayCount', 1, null),
  countEqual: fn('countEqual', 2, 2),
  arrayEnumerate: fn('arrayEnumerate', 1, 1),
  arrayEnumerateUniq: fn('arrayEnumerateUniq', 2, null),
  arrayPopBack: fn('arrayPopBack', 1, 1),
  arrayPopFront: fn('arrayPopFront', 1, 1),
  arrayPushBack: fn('arrayPushBack', 2, 2),
  arrayPushFront: fn('arrayPushFront', 2, 2),
  // A negative size keeps the array's end.
  arrayResize: sized('arrayResize', 2, 3, 1, -MAX_BUILT_ARRAY_ELEMENTS),
  arraySlice: fn('arraySlice', 2, 3),
  arraySort: lambda('arraySort', 1, null),
  arrayReverseSort: lambda('arrayReverseSort', 1, null),
  arrayUniq: fn('arrayUniq', 1, null),
  arrayJoin: fn('arrayJoin', 1, 1),
  arrayDifference: fn('arrayDifference', 1, 1),
  arrayDistinct: fn('arrayDistinct', 1, 1),
  arrayEnumerateDense: fn('arrayEnumerateDense', 1, 1),
  arrayIntersect: fn('arrayIntersect', 1, null),
  arrayReduce: fn('arrayReduce', 2, null, { bound: { kind: 'aggregate-name', argument: 0, max: 0 } }),
  arrayReverse: fn('arrayReverse', 1, 1),
  arrayFilter: lambda('arrayFilter', 2, null),
  arrayFlatten: fn('arrayFlatten', 1, 1),
  arrayCompact: fn('arrayCompact', 1, 1),
  arrayZip: fn('arrayZip', 2, null),
  arrayAUC: fn('arrayAUC', 2, 2),
  arrayMap: lambda('arrayMap', 2, null),
  arrayFill: lambda('arrayFill', 2, null),
  arrayFold: lambda('arrayFold', 3, null),
  arrayWithConstant: sized('arrayWithConstant', 2, 2, 0, 0),
  arraySplit: lambda('arraySplit', 2, null),
  arrayReverseFill: lambda('arrayReverseFill', 2, null),
  arrayReverseSplit: lambda('arrayReverseSplit', 2, null),
  arrayRotateLeft: fn('arrayRotateLeft', 2, 2),
  arrayRotateRight: fn('arrayRotateRight', 2, 2),
  arrayExists: lambda('arrayExists', 1, null),
  arrayAll: lambda('arrayAll', 1, null),
  arrayFirst: lambda('arrayFirst', 2, null),
  arrayLast: lambda('arrayLast', 2, null),
  arrayFirstIndex: lambda('arrayFirstIndex', 2, null),
  arrayLastIndex: lambda('arrayLastIndex', 2, null),
  arrayMin: lambda('arrayMin', 1, 2),
  arrayMax: lambda('arrayMax', 1, 2),
  arraySum: lambda('arraySum', 1, 2),
  arrayAvg: lambda('arrayAvg', 1, 2),
  arrayCumSum: lambda('arrayCumSum', 1, null),
  arrayCumSumNonNegative: lambda('arrayCumSumNonNegative', 1, null),
  arrayProduct: fn('arrayProduct', 1, 1),
  arrayStringConcat: fn('arrayStringConcat', 1, 2),
  tuple: fn('tuple', 0, null),
  tupleElement: fn('tupleElement', 2, 3),
  tupleHammingDistance: fn('tupleHammingDistance', 2, 2),
  tupleToNameValuePairs: fn('tupleToNameValuePairs', 1, 1),
  tuplePlus: fn('tuplePlus', 2, 2),
  tupleMinus: fn('tupleMinus', 2, 2),
  tupleMultiply: fn('tupleMultiply', 2, 2),
  tupleDivide: fn('tupleDivide', 2, 2),
  tupleNegate: fn('tupleNegate', 1, 1),
  tupleMultiplyByNumber: fn('tupleMultiplyByNumber', 2, 2),
  tupleDivideByNumber: fn('tupleDivideByNumber', 2, 2),
  dotProduct: fn('dotProduct', 2, 2),
};
