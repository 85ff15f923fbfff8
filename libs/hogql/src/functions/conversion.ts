import { fn, type HogQLFunction } from './function-spec';

/**
 * Type conversions (posthog/hogql/functions/clickhouse/conversions.py). toInt and toFloat read
 * their argument as text first and answer null for what is not a number (PostHog's
 * accurateCastOrNull): event and person properties are JSON text here. Left out: the internal
 * `_to*` names, and `reinterpret` beyond PostHog's fixed list.
 */
export const CONVERSION_FUNCTIONS: Record<string, HogQLFunction> = {
  toInt: fn('toInt64OrNull', 1, 1, { textArguments: true }),
  toFloat: fn('toFloat64OrNull', 1, 1, { textArguments: true }),
  toIntOrZero: fn('toInt64OrZero', 1, 1, { textArguments: true }),
  toFloatOrZero: fn('toFloat64OrZero', 1, 1, { textArguments: true }),
  toUUID: fn('toUUIDOrNull', 1, 1, { textArguments: true }),
  toUUIDOrDefault: fn('toUUIDOrDefault', 2, 2),
  toBool: fn('toBool', 1, 1),
  toTypeName: fn('toTypeName', 1, 1),
  cityHash64: fn('cityHash64', 1, 1),
  hex: fn('hex', 1, 1),
  unhex: fn('unhex', 1, 1),
  reinterpretAsUInt8: fn('reinterpretAsUInt8', 1, 1),
  reinterpretAsUInt16: fn('reinterpretAsUInt16', 1, 1),
  reinterpretAsUInt32: fn('reinterpretAsUInt32', 1, 1),
  reinterpretAsUInt64: fn('reinterpretAsUInt64', 1, 1),
  reinterpretAsInt8: fn('reinterpretAsInt8', 1, 1),
  reinterpretAsInt16: fn('reinterpretAsInt16', 1, 1),
  reinterpretAsInt32: fn('reinterpretAsInt32', 1, 1),
  reinterpretAsInt64: fn('reinterpretAsInt64', 1, 1),
  reinterpretAsFloat32: fn('reinterpretAsFloat32', 1, 1),
  reinterpretAsFloat64: fn('reinterpretAsFloat64', 1, 1),
  reinterpretAsUUID: fn('reinterpretAsUUID', 1, 1),
  UUIDv7ToDateTime: fn('UUIDv7ToDateTime', 1, 1),
};
