import { DateTime } from 'luxon';

/** The zone a ClickHouse DateTime type writes its values in ('UTC' when it names none: the server's). */
const DATE_TIME_TYPE = /^(?:Nullable\()?DateTime(?:64)?(?:\((?:\d+)?(?:,\s*)?(?:'([^']+)')?\))?\)?$/;

/** Whether values of a ClickHouse type are date-times dateTimeInZone rewrites. */
export const isDateTimeType = (type: string): boolean => DATE_TIME_TYPE.test(type);

/** A ClickHouse date-time value as ISO 8601 in the project's time zone (as PostHog answers them), or the value as it was. */
export function dateTimeInZone(value: unknown, type: string, timezone: string): unknown {
  const match = DATE_TIME_TYPE.exec(type);
  if (!match || typeof value !== 'string') return value;
  const at = DateTime.fromSQL(value, { zone: match[1] ?? 'UTC' });
  return at.isValid ? at.setZone(timezone).toISO({ suppressMilliseconds: true }) : value;
}
