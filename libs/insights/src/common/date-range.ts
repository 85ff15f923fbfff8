import { DateTime, IANAZone } from 'luxon';
import { CLICKHOUSE_TIME_ZONES } from '@sightline/clickhouse';

export class DateRangeError extends Error {
  constructor(
    readonly attr: string,
    message: string,
  ) {
    super(message);
  }
}

export const INTERVALS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * The instants a query may name: ClickHouse's DateTime64 range (1900-01-01 to 2299-12-31). Checked
 * on every parsed date before any arithmetic uses it, so `-150000000d` or `-999999y` is a 400
 * rather than an invalid Date further on.
 */
export const EARLIEST_QUERY_MS = Date.UTC(1900, 0, 1);
export const LATEST_QUERY_MS = Date.UTC(2300, 0, 1) - 1;

/** A date string in an error message, cut short: the value is the client's, of any length. */
const preview = (value: string) => (value.length > 40 ? `${value.slice(0, 40)}…` : value);

function withinQueryRange(dt: DateTime, value: string, attr: string): DateTime {
  const ms = dt.toMillis();
  if (!dt.isValid || !Number.isFinite(ms) || ms < EARLIEST_QUERY_MS || ms > LATEST_QUERY_MS) {
    throw new DateRangeError(attr, `Date "${preview(value)}" is outside the supported range (1900-01-01 to 2299-12-31).`);
  }
  return dt;
}

/**
 * A time zone both Node (dates are resolved here) and ClickHouse (buckets are cut there) know:
 * Node still accepts zones the tz database dropped years ago (`US/Pacific-New`, `SystemV/AST4`,
 * `Canada/East-Saskatchewan`), which ClickHouse refuses in every query.
 */
export const isKnownTimezone = (name: string) => CLICKHOUSE_TIME_ZONES.has(name) && isValidIanaZone(name);

/** Node's answer per zone name, kept: luxon builds an Intl.DateTimeFormat to find out, every call. */
const validIanaZones = new Map<string, boolean>();
function isValidIanaZone(name: string): boolean {
  let valid = validIanaZones.get(name);
  if (valid === undefined) validIanaZones.set(name, (valid = IANAZone.isValidZone(name)));
  return valid;
}

/** A project's timezone, checked: an unknown zone name is a 400 rather than silently UTC. */
export function checkTimezone(name: string, attr = 'timezone'): string {
  if (!isKnownTimezone(name)) throw new DateRangeError(attr, `Unknown timezone "${preview(name)}".`);
  return name;
}

/** Where a parsed date came from: its relative unit decides how the range truncates it. */
export interface ParsedDate {
  at: DateTime;
  /** The unit of a relative delta (`h`, `d`, …), or null for absolute dates. */
  deltaUnit: string | null;
  /** An ISO datetime (not a bare day): the client pinned the time. */
  exactTime: boolean;
  /** The N of a relative `-N<unit>` (0 when absent or absolute). */
  deltaAmount: number;
}

const ABSOLUTE_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const ABSOLUTE_DATETIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([zZ]|[+-]\d{2}:?\d{2})?$/;
/** posthog/utils.py relative_date_parse_with_delta_mapping: `-3d`, `mStart`, `-1wEnd`, … */
const RELATIVE = /^-?(\d+)?([hdwmqysHDWQY]|M)(Start|End)?$/;

function calendarDay(year: number, month: number, day: number, zone: string): DateTime | null {
  const dt = DateTime.fromObject({ year, month, day }, { zone });
  return dt.isValid && dt.year === year && dt.month === month && dt.day === day ? dt : null;
}

/**
 * PostHog's date strings, read in the project's timezone: ISO dates and datetimes (an explicit
 * offset wins), `-Nh -Nd -Nw -Nm -Nq -Ny` (`q` is 13 weeks, `M` minutes, `s` seconds), optionally
 * followed by `Start` / `End`, and bare positions such as `dStart`, `mStart`, `yStart`. Days that
 * do not exist (`2024-02-30`) and instants outside the supported range are refused.
 */
export function parseQueryDate(value: string, now: DateTime, attr: string): ParsedDate {
  const date = ABSOLUTE_DATE.exec(value);
  if (date) {
    const dt = calendarDay(Number(date[1]), Number(date[2]), Number(date[3]), now.zoneName!);
    if (!dt) throw new DateRangeError(attr, `Invalid date "${preview(value)}": that day does not exist.`);
    return { at: withinQueryRange(dt, value, attr), deltaUnit: null, exactTime: false, deltaAmount: 0 };
  }
  const datetime = ABSOLUTE_DATETIME.exec(value);
  if (datetime) {
    const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(datetime[i] ?? 0)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    if (calendarDay(year, month, day, 'UTC') === null || hour > 23 || minute > 59 || second > 59) {
      throw new DateRangeError(attr, `Invalid date "${preview(value)}": that time does not exist.`);
    }
    const millisecond = Number((datetime[7] ?? '0').padEnd(3, '0').slice(0, 3));
    const offset = datetime[8];
    const zone = offset
      ? offset.toUpperCase() === 'Z'
        ? 'UTC'
        : `UTC${offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset}`
      : now.zoneName!;
    const dt = DateTime.fromObject({ year, month, day, hour, minute, second, millisecond }, { zone }).setZone(now.zoneName!);
    return { at: withinQueryRange(dt, value, attr), deltaUnit: null, exactTime: true, deltaAmount: 0 };
  }
  const relative = RELATIVE.exec(value);
  if (relative && (relative[1] !== undefined || relative[3] !== undefined)) {
    // However large n is, luxon answers an invalid DateTime or one far out, which the range check refuses.
    const n = relative[1] === undefined ? 0 : Number(relative[1]);
    if (!Number.isSafeInteger(n) || n > 1_000_000)
      throw new DateRangeError(attr, `Date "${preview(value)}" is outside the supported range (1900-01-01 to 2299-12-31).`);
    const unit = relative[2] === 'M' ? 'M' : relative[2]!.toLowerCase();
    const minus: Record<string, object> = {
      h: { hours: n },
      d: { days: n },
      w: { weeks: n },
      m: { months: n },
      q: { weeks: 13 * n },
      y: { years: n },
      M: { minutes: n },
      s: { seconds: n },
    };
    let at = withinQueryRange(now.minus(minus[unit]!), value, attr);
    const position = relative[3];
    if (position) {
      if (position === 'Start') {
        if (unit === 'y') at = at.startOf('year');
        else if (unit === 'm' || unit === 'q') at = at.startOf('month');
        else if (unit === 'h') at = at.startOf('hour');
        else at = at.startOf('day');
      } else if (unit === 'y') {
        // PostHog's yEnd only sets the day to 31 (clamped), leaving the month: kept as it behaves.
        at = at.set({ day: Math.min(31, at.daysInMonth ?? 31) }).endOf('day');
      } else if (unit === 'm' || unit === 'q') at = at.endOf('month');
      else if (unit === 'h') at = at.endOf('hour');
      else at = at.endOf('day');
    }
    return { at, deltaUnit: unit, exactTime: false, deltaAmount: n };
  }
  throw new DateRangeError(
    attr,
    `Invalid date "${preview(value)}": use YYYY-MM-DD, an ISO datetime, or a relative date such as -7d, -24h, -1m, mStart or yStart.`,
  );
}

/** The most buckets one series may have: ten years of days. */
export const MAX_BUCKETS = 3660;

/**
 * How many buckets of `intervalMs` cover [fromMs, toMs], both ends included: computed, never
 * counted, so a huge range is refused before any list is built.
 */
export function checkBucketCount(fromMs: number, toMs: number, intervalMs: number, intervalName: string): number {
  const buckets = Math.floor((toMs - fromMs) / intervalMs) + 1;
  if (buckets > MAX_BUCKETS) {
    throw new DateRangeError(
      'date_from',
      `The date range holds ${buckets} ${intervalName} buckets; at most ${MAX_BUCKETS} are allowed. Narrow the range or use a longer interval.`,
    );
  }
  return buckets;
}

const APPROX_INTERVAL_MS: Record<Interval, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 28 * 86_400_000 };

/** Start of the bucket holding `at`: weeks start on Sunday (0) or Monday (1), as the project says. */
export function startOfInterval(at: DateTime, interval: Interval, weekStartDay: 0 | 1): DateTime {
  switch (interval) {
    case 'minute':
      return at.startOf('minute');
    case 'hour':
      return at.startOf('hour');
    case 'day':
      return at.startOf('day');
    case 'month':
      return at.startOf('month');
    case 'week': {
      // luxon weekdays: Monday 1 … Sunday 7.
      const day = at.startOf('day');
      const back = weekStartDay === 1 ? day.weekday - 1 : day.weekday % 7;
      return day.minus({ days: back });
    }
  }
}

export interface QueryDateRangeInput {
  dateFrom?: string | null;
  dateTo?: string | null;
  interval: Interval;
  timezone: string;
  weekStartDay: 0 | 1;
  nowMs: number;
  /** Use date_from and date_to as given, without widening them to whole days or hours. */
  explicitDate?: boolean;
  /** For `date_from: "all"`: the project's earliest event (now when it has none). */
  earliestEventMs?: number | null;
  /**
   * Told how many buckets the range holds, and may refuse them by throwing: before they are
   * built for minutes and hours (counted exactly from the timestamps), after for longer intervals.
   */
  checkBuckets?: (count: number) => void;
}

export interface QueryDateRange {
  interval: Interval;
  timezone: string;
  weekStartDay: 0 | 1;
  from: DateTime;
  /** Inclusive end. */
  to: DateTime;
  /** Bucket starts, both ends included; the first is `from` aligned to its interval. */
  buckets: DateTime[];
  /**
   * The first instant whose events count (PostHog's date_from_with_adjusted_start_of_interval):
   * the start of date_from's bucket, or of its day for weeks (a week that starts before date_from
   * counts nothing before it); date_from itself for an explicit range, hour and minute
   * intervals from a relative date, and a day interval from an hours delta (`-24h`).
   */
  eventsFrom: DateTime;
  /** date_from as PostHog's QueryDateRange.date_from() answers it (before any day truncation). */
  queryFrom: DateTime;
  /** The days of a `-Nd` date_from (0 otherwise), and whether date_to was relative: compare reads them. */
  fromDeltaDays: number;
  toIsRelative: boolean;
  /** Whether events count from the start of date_from's interval (see eventsFrom). */
  startsAtInterval: boolean;
}

const isHourly = (interval: Interval) => interval === 'hour' || interval === 'minute';

/**
 * PostHog's QueryDateRange (posthog/hogql_queries/utils/query_date_range.py): date_from defaults to
 * today − 7 days at 00:00; for day, week and month intervals date_from is truncated to 00:00 and
 * date_to pushed to 23:59:59.999999; for hour intervals an hours-delta date_from keeps its hour and a
 * relative date_to is pushed to the end of its hour (minute: of its minute). Buckets start at
 * date_from aligned to its interval and step while the start is not after date_to.
 */
export function resolveQueryDateRange(input: QueryDateRangeInput): QueryDateRange {
  const zone = checkTimezone(input.timezone);
  const now = DateTime.fromMillis(input.nowMs, { zone });
  const interval = input.interval;
  let from: DateTime;
  let fromDeltaDays = 0;
  // PostHog's use_start_of_interval: whether events count from the start of date_from's interval.
  let startsAtInterval = !input.explicitDate;
  if (input.dateFrom === 'all') {
    from = DateTime.fromMillis(input.earliestEventMs ?? input.nowMs, { zone });
  } else if (input.dateFrom) {
    const parsed = parseQueryDate(input.dateFrom, now, 'date_from');
    from = parsed.at;
    if (!input.explicitDate && interval !== 'minute' && parsed.deltaUnit !== null && !parsed.exactTime) {
      from = parsed.deltaUnit === 'h' || parsed.deltaUnit === 'M' || parsed.deltaUnit === 's' ? from.startOf('hour') : from.startOf('day');
    }
    if (parsed.deltaUnit === 'd') fromDeltaDays = parsed.deltaAmount;
    if (parsed.deltaUnit !== null && (isHourly(interval) || (interval === 'day' && parsed.deltaUnit === 'h'))) startsAtInterval = false;
  } else {
    from = now.startOf('day').minus({ days: 7 });
  }
  const queryFrom = from;
  if (!input.explicitDate && !isHourly(interval)) from = from.startOf('day');

  let to: DateTime = now;
  let toIsRelative = true;
  if (input.dateTo) {
    const parsed = parseQueryDate(input.dateTo, now, 'date_to');
    to = parsed.at;
    toIsRelative = parsed.deltaUnit !== null;
  }
  if (!input.explicitDate) {
    if (!isHourly(interval)) to = to.endOf('day');
    else if (toIsRelative) to = interval === 'hour' ? to.endOf('hour') : to.endOf('minute');
  }
  if (to < from) throw new DateRangeError('date_to', 'date_to must not be before date_from.');
  const first = startOfInterval(from, interval, input.weekStartDay);
  checkBucketCount(first.toMillis(), to.toMillis(), APPROX_INTERVAL_MS[interval], interval);
  const buckets: DateTime[] = [];
  // Minutes and hours are exact milliseconds (luxon's plus adds them so): made from the
  // timestamp, several times cheaper than plus, for the few thousand buckets a range may hold.
  const stepMs = isHourly(interval) ? APPROX_INTERVAL_MS[interval] : 0;
  // A query refused for its size is refused before thousands of buckets are made for nothing.
  if (stepMs) input.checkBuckets?.(Math.floor((to.toMillis() - first.toMillis()) / stepMs) + 1);
  const options = {
    zone: first.zone,
    locale: first.locale ?? undefined,
    numberingSystem: first.numberingSystem ?? undefined,
    outputCalendar: first.outputCalendar ?? undefined,
  };
  const next = (at: DateTime) => (stepMs ? DateTime.fromMillis(at.toMillis() + stepMs, options) : at.plus({ [`${interval}s`]: 1 }));
  for (let at = first; at <= to; at = next(at)) {
    buckets.push(at);
    if (buckets.length > MAX_BUCKETS) throw new DateRangeError('date_from', `The date range holds more than ${MAX_BUCKETS} ${interval} buckets.`);
  }
  if (!stepMs) input.checkBuckets?.(buckets.length);
  return {
    interval,
    timezone: zone,
    weekStartDay: input.weekStartDay,
    from,
    to,
    buckets,
    eventsFrom: eventsFromOf(queryFrom, first, interval, startsAtInterval),
    queryFrom,
    fromDeltaDays,
    toIsRelative: Boolean(input.dateTo) && toIsRelative,
    startsAtInterval,
  };
}

function eventsFromOf(queryFrom: DateTime, firstBucket: DateTime, interval: Interval, startsAtInterval: boolean): DateTime {
  if (!startsAtInterval) return queryFrom;
  return interval === 'week' ? queryFrom.startOf('day') : firstBucket;
}

/** Wall-clock arithmetic, as Python's on datetimes sharing one tzinfo (PostHog's compare periods). */
const wallClock = (at: DateTime): DateTime => at.setZone('UTC', { keepLocalTime: true });
const inZone = (at: DateTime, zone: string): DateTime => at.setZone(zone, { keepLocalTime: true });
const sameTime = (at: DateTime, like: DateTime): DateTime =>
  at.set({ hour: like.hour, minute: like.minute, second: like.second, millisecond: like.millisecond });

/**
 * The period `compare: true` answers next to `range`, as PostHog's get_compare_period_dates
 * (posthog/utils.py) aligns it: as long as the current one and ending where it starts, then
 * given the current period's time of day (hour intervals: its hour, minute and second); a
 * `-7d`, `-14d`, … day range starts a day later, so weekdays line up
 * (test_trends_compare_day_interval_relative_range).
 */
export function previousPeriod(range: QueryDateRange): QueryDateRange {
  const zone = range.timezone;
  const from = wallClock(range.queryFrom);
  const to = wallClock(range.to);
  const diffMs = to.toMillis() - from.toMillis();
  let newFrom = from.minus({ milliseconds: diffMs });
  let newTo = from;
  if (range.interval === 'hour') {
    newFrom = sameTime(newFrom, from);
    newTo = newFrom.plus({ milliseconds: diffMs }).set({ minute: to.minute, second: to.second, millisecond: to.millisecond });
  } else if (range.interval !== 'minute') {
    newFrom = sameTime(newFrom, from);
    if (range.interval === 'day' && range.fromDeltaDays > 0 && range.fromDeltaDays % 7 === 0 && !range.toIsRelative) newFrom = newFrom.plus({ days: 1 });
    newTo = sameTime(newFrom.plus({ milliseconds: diffMs }), to);
  }
  return comparedPeriod(range, inZone(newFrom, zone), inZone(newTo, zone));
}

/**
 * The period `compare_to` (such as `-1w`, `-1m`) names, as PostHog's QueryCompareToDateRange:
 * it starts that far before the current date_from and is as long as the current period.
 */
export function shiftDateRange(range: QueryDateRange, shift: { amount: number; unit: 'hours' | 'days' | 'weeks' | 'months' | 'years' }): QueryDateRange {
  const from = wallClock(range.queryFrom);
  const start = from.minus({ [shift.unit]: shift.amount });
  const end = start.plus({ milliseconds: wallClock(range.to).toMillis() - from.toMillis() });
  return comparedPeriod(range, inZone(start, range.timezone), inZone(end, range.timezone));
}

/** The range from `queryFrom` to `end` with `range`'s interval and settings, its buckets made as the current ones. */
function comparedPeriod(range: QueryDateRange, queryFrom: DateTime, end: DateTime): QueryDateRange {
  const first = startOfInterval(queryFrom, range.interval, range.weekStartDay);
  const buckets: DateTime[] = [];
  for (let at = first; at <= end && buckets.length <= MAX_BUCKETS; at = at.plus({ [`${range.interval}s`]: 1 })) buckets.push(at);
  return {
    ...range,
    from: isHourly(range.interval) ? queryFrom : queryFrom.startOf('day'),
    to: end,
    buckets,
    queryFrom,
    eventsFrom: eventsFromOf(queryFrom, first, range.interval, range.startsAtInterval),
  };
}

/** `compare_to` (`-1w`, `-2d`, `-1m`, `-1y`, `-3h`) as an amount and unit. */
export function parseCompareTo(value: string): { amount: number; unit: 'hours' | 'days' | 'weeks' | 'months' | 'years' } {
  const match = /^-(\d{1,4})([hdwmqy])$/.exec(value);
  if (!match) throw new DateRangeError('compare_to', `Invalid compare_to "${preview(value)}": use a relative date such as -1d, -1w, -1m or -1y.`);
  const amount = Number(match[1]);
  // A quarter is 13 weeks, as in PostHog's relative dates (get_delta_mapping_for).
  const unit = ({ h: 'hours', d: 'days', w: 'weeks', m: 'months', q: 'weeks', y: 'years' } as const)[match[2] as 'h'];
  return { amount: match[2] === 'q' ? amount * 13 : amount, unit };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** English month names, whatever the machine's locale, as PostHog writes them. */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const monthName = (at: DateTime) => MONTHS[at.month - 1]!;

/**
 * `days[i]`: `YYYY-MM-DD`, or `YYYY-MM-DD HH:MM:SS` for hour and minute intervals (project time).
 * Written from the fields, not with toFormat, which parses its pattern on every call: a trend
 * formats each of up to a few thousand buckets.
 */
export const formatBucketDay = (at: DateTime, interval: Interval) => {
  const day = `${pad(at.year, 4)}-${pad(at.month)}-${pad(at.day)}`;
  return isHourly(interval) ? `${day} ${pad(at.hour)}:${pad(at.minute)}:${pad(at.second)}` : day;
};

/** Month names in English whatever the machine's locale, as PostHog writes them. */
const format = (at: DateTime, pattern: string) => at.toFormat(pattern, { locale: 'en-US' });

/** An ISO datetime as PostHog's JSON encoder writes it: offset, `Z` for UTC, no milliseconds when zero. */
export function isoDateTime(at: DateTime): string {
  // An end of period (…:59.999) stands for …:59.999999, as PostHog's microsecond ends do.
  const text =
    at.millisecond === 999 ? at.toISO({ includeOffset: true })!.replace('.999', '.999999') : at.toISO({ suppressMilliseconds: true, includeOffset: true })!;
  return text.replace(/\+00:00$/, 'Z');
}

/**
 * `labels[i]` as PostHog's trends runner forms them: day `5-Jan-2024`; hour and minute
 * `5-Jan 14:00`; month `Jan 2024`; week the bucket's days clipped to the query range:
 * `3–6 Jan`, `29-Dec – 4-Jan`, `29-Dec-2023 – 4-Jan-2024`, or one day `3-Jan-2024`.
 */
export function formatBucketLabel(at: DateTime, range: QueryDateRange): string {
  switch (range.interval) {
    // As toFormat's 'd-LLL HH:mm', 'd-LLL-yyyy' and 'LLL yyyy' in en-US, from the fields.
    case 'minute':
    case 'hour':
      return `${at.day}-${monthName(at)} ${pad(at.hour)}:${pad(at.minute)}`;
    case 'day':
      return `${at.day}-${monthName(at)}-${pad(at.year, 4)}`;
    case 'month':
      return `${monthName(at)} ${pad(at.year, 4)}`;
    case 'week': {
      const start = at < range.from.startOf('day') ? range.from.startOf('day') : at;
      const lastDay = at.plus({ days: 6 });
      const end = lastDay > range.to ? range.to.startOf('day') : lastDay;
      if (start.hasSame(end, 'day')) return format(start, 'd-LLL-yyyy');
      if (start.hasSame(end, 'month')) return `${start.day}–${format(end, 'd LLL')}`;
      if (start.hasSame(end, 'year')) return `${format(start, 'd-LLL')} – ${format(end, 'd-LLL')}`;
      return `${format(start, 'd-LLL-yyyy')} – ${format(end, 'd-LLL-yyyy')}`;
    }
  }
}
