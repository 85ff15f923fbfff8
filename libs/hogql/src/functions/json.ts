import { fn, type HogQLFunction } from './function-spec';

/** JSON functions (posthog/hogql/functions/clickhouse/json.py). */
export const JSON_FUNCTIONS: Record<string, HogQLFunction> = {
  isValidJSON: fn('isValidJSON', 1, 1),
  JSONHas: fn('JSONHas', 1, null),
  JSONLength: fn('JSONLength', 1, null),
  JSONArrayLength: fn('JSONArrayLength', 1, null),
  JSONType: fn('JSONType', 1, null),
  JSONExtract: fn('JSONExtract', 2, null, { bound: { kind: 'type-name', argument: -1, max: 0 } }),
  JSONExtractUInt: fn('JSONExtractUInt', 1, null),
  JSONExtractInt: fn('JSONExtractInt', 1, null),
  JSONExtractFloat: fn('JSONExtractFloat', 1, null),
  JSONExtractBool: fn('JSONExtractBool', 1, null),
  JSONExtractString: fn('JSONExtractString', 1, null),
  JSONExtractKeys: fn('JSONExtractKeys', 1, null),
  JSONExtractRaw: fn('JSONExtractRaw', 1, null),
  JSONExtractArrayRaw: fn('JSONExtractArrayRaw', 1, null),
  JSONExtractKeysAndValues: fn('JSONExtractKeysAndValues', 1, 3, { bound: { kind: 'type-name', argument: -1, max: 0 } }),
  JSONExtractKeysAndValuesRaw: fn('JSONExtractKeysAndValuesRaw', 1, null),
  JSON_VALUE: fn('JSON_VALUE', 2, null),
  toJSONString: fn('toJSONString', 1, 1),
};
