import { DateTime } from 'luxon';
import { checkTimezone, DateRangeError, parseQueryDate, startOfInterval, type Interval } from '../common/date-range';
import type { RetentionPeriod } from './retention-filter';

/**
 * The most cells (start intervals × intervals looked ahead) one retention answer holds: 366
 * daily rows of 366 days is about 134,000.
 */
export const MAX_RETENTION_CELLS = 150_000;

/** A retention query's intervals (PostHog's QueryDateRangeWithIntervals, query_date_range.py). */
export interface RetentionDateRange {
  interval: Exclude<Interval, 'minute'>;
  timezone: string;
  weekStartDay: 0 | 1;
  /** The first instant counted: the start of the first start interval. */
  from: DateTime;
  /** The first instant not counted: the start of the interval after date_to's. */
  to: DateTime;
  /** The start of each start interval (PostHog's intervals_between of them), from `from`. */
  starts: DateTime[];
  /** Intervals looked ahead from each start interval, the start interval included (total_intervals). */
  lookahead: number;
}

export interface RetentionDateRangeInput {
  dateFrom: string | null;
  dateTo: string | null;
  period: RetentionPeriod;
  totalIntervals: number;
  timezone: string;
  weekStartDay: 0 | 1;
  nowMs: number;
  /** For `date_from: "all"`: the project's earliest event (now when it has none). */
  earliestEventMs?: number | null;
}

const UNIT: Record<RetentionDateRange['interval'], 'hours' | 'days' | 'weeks' | 'months'> = { hour: 'hours', day: 'days', week: 'weeks', month: 'months' };

/**
 * PostHog's retention dates: date_to (default now) is read as QueryDateRange reads it (the end
 * of its day, or for hours the end of its hour when relative), then pushed one interval on and
 * cut to the start of that interval: the first instant not counted. date_from is the start of
 * its interval when given, else `total_intervals` intervals before that end (the retention
 * form before PostHog's date range, still what a query without date_from means). The start
 * intervals step from date_from while before the end.
 */
export function resolveRetentionDateRange(input: RetentionDateRangeInput): RetentionDateRange {
  const zone = checkTimezone(input.timezone);
  const interval = input.period.toLowerCase() as RetentionDateRange['interval'];
  const unit = UNIT[interval];
  const now = DateTime.fromMillis(input.nowMs, { zone });
  let end: DateTime<boolean> = now;
  let toIsRelative = true;
  if (input.dateTo) {
    const parsed = parseQueryDate(input.dateTo, now, 'date_to');
    end = parsed.at;
    toIsRelative = parsed.deltaUnit !== null;
    // PostHog reads date_to with always_truncate: a relative one to the start of its unit.
    if (toIsRelative) end = parsed.deltaUnit === 'h' ? end.startOf('hour') : parsed.deltaUnit === 'M' || parsed.deltaUnit === 's' ? end : end.startOf('day');
  }
  if (interval !== 'hour') end = end.endOf('day');
  else if (toIsRelative) end = end.endOf('hour');
  const to = startOfInterval(end.plus({ [unit]: 1 }), interval, input.weekStartDay);

  let from: DateTime<boolean>;
  if (input.dateFrom === 'all') {
    from = DateTime.fromMillis(input.earliestEventMs ?? input.nowMs, { zone });
  } else if (input.dateFrom) {
    const parsed = parseQueryDate(input.dateFrom, now, 'date_from');
    // PostHog's relative_date_parse keeps an hours delta's time and cuts the others to their day.
    from = parsed.deltaUnit !== null && !['h', 'M', 's'].includes(parsed.deltaUnit) ? parsed.at.startOf('day') : parsed.at;
  } else {
    from = to.minus({ [unit]: input.totalIntervals });
  }
  from = startOfInterval(from, interval, input.weekStartDay);
  if (from >= to) throw new DateRangeError('date_from', 'date_from must be before date_to.');

  // The rows are counted before any is built: a long range of short intervals is refused at once.
  const approximateRows = Math.ceil(to.diff(from, unit).as(unit));
  if (approximateRows * input.totalIntervals > MAX_RETENTION_CELLS) {
    throw new DateRangeError(
      'date_from',
      `The retention table would hold ${approximateRows} × ${input.totalIntervals} cells; at most ${MAX_RETENTION_CELLS} are allowed. Narrow the date range, use a longer period or fewer intervals.`,
    );
  }
  const starts: DateTime[] = [];
  for (let at = from, i = 0; at < to; i++, at = from.plus({ [unit]: i })) starts.push(at);
  return { interval, timezone: zone, weekStartDay: input.weekStartDay, from, to, starts, lookahead: input.totalIntervals };
}
