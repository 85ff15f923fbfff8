import type { FunctionSpec } from './function-spec';

/** Date and time functions: HogQL name → ClickHouse name and allowed argument counts. */
export const DATE_FUNCTIONS: Record<string, FunctionSpec> = {
  toDate: { sql: 'toDate', min: 1, max: 2 },
  toDateTime: { sql: 'toDateTime', min: 1, max: 2 },
  toStartOfMinute: { sql: 'toStartOfMinute', min: 1, max: 2 },
  toStartOfHour: { sql: 'toStartOfHour', min: 1, max: 2 },
  toStartOfDay: { sql: 'toStartOfDay', min: 1, max: 2 },
  toStartOfWeek: { sql: 'toStartOfWeek', min: 1, max: 3 },
  toStartOfMonth: { sql: 'toStartOfMonth', min: 1, max: 2 },
  toStartOfYear: { sql: 'toStartOfYear', min: 1, max: 2 },
  toYear: { sql: 'toYear', min: 1, max: 2 },
  toMonth: { sql: 'toMonth', min: 1, max: 2 },
  toDayOfWeek: { sql: 'toDayOfWeek', min: 1, max: 3 },
  toDayOfMonth: { sql: 'toDayOfMonth', min: 1, max: 2 },
  toHour: { sql: 'toHour', min: 1, max: 2 },
  toMinute: { sql: 'toMinute', min: 1, max: 2 },
  dateDiff: { sql: 'dateDiff', min: 3, max: 4 },
  now: { sql: 'now', min: 0, max: 0 },
  today: { sql: 'today', min: 0, max: 0 },
  toIntervalSecond: { sql: 'toIntervalSecond', min: 1, max: 1 },
  toIntervalMinute: { sql: 'toIntervalMinute', min: 1, max: 1 },
  toIntervalHour: { sql: 'toIntervalHour', min: 1, max: 1 },
  toIntervalDay: { sql: 'toIntervalDay', min: 1, max: 1 },
  toIntervalWeek: { sql: 'toIntervalWeek', min: 1, max: 1 },
  toIntervalMonth: { sql: 'toIntervalMonth', min: 1, max: 1 },
  toIntervalYear: { sql: 'toIntervalYear', min: 1, max: 1 },
};

/**
 * Which argument of a function names a time zone (ClickHouse's optional last argument of its
 * date functions). A constant one is checked by the printer, so an unknown zone is named in a 400.
 */
export const TIME_ZONE_ARGUMENT: Record<string, number> = {
  toDate: 1,
  toDateTime: 1,
  toStartOfMinute: 1,
  toStartOfHour: 1,
  toStartOfDay: 1,
  toStartOfWeek: 2,
  toStartOfMonth: 1,
  toStartOfYear: 1,
  toYear: 1,
  toMonth: 1,
  toDayOfWeek: 2,
  toDayOfMonth: 1,
  toHour: 1,
  toMinute: 1,
  dateDiff: 3,
};
