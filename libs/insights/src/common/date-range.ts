const DAY_MS = 86_400_000;

export class DateRangeError extends Error {
  constructor(
    readonly attr: string,
    message: string,
  ) {
    super(message);
  }
}

const startOfUtcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.getTime();
}

/**
 * The instants a query may name: ClickHouse's DateTime64 range (1900-01-01 to 2299-12-31). Checked
 * on every parsed date before any arithmetic uses it, so `-150000000d` or `-999999y` is a 400
 * rather than an invalid Date further on.
 */
export const EARLIEST_QUERY_MS = Date.UTC(1900, 0, 1);
export const LATEST_QUERY_MS = Date.UTC(2300, 0, 1) - 1;

function withinQueryRange(ms: number, value: string, attr: string): number {
  if (!Number.isFinite(ms) || ms < EARLIEST_QUERY_MS || ms > LATEST_QUERY_MS) {
    throw new DateRangeError(attr, `Date "${preview(value)}" is outside the supported range (1900-01-01 to 2299-12-31).`);
  }
  return ms;
}

/** A date string in an error message, cut short: the value is the client's, of any length. */
const preview = (value: string) => (value.length > 40 ? `${value.slice(0, 40)}…` : value);

/**
 * Midnight UTC of a calendar day, or null when the day does not exist (Date.parse rolls
 * 2024-02-30 over to March). setUTCFullYear, because Date.UTC reads years 0–99 as 1900–1999.
 */
function calendarDayMs(year: number, month: number, day: number): number | null {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : null;
}

const ABSOLUTE_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ABSOLUTE_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([zZ]|[+-]\d{2}:?\d{2})?$/;

/**
 * PostHog's relative and absolute date strings (UTC): `-7d`, `-2w`, `-1m`, `-1y`, `-6h`,
 * `mStart`, `yStart`, `dStart`, `YYYY-MM-DD`, or an ISO datetime. Returns the instant and
 * whether the string pinned an exact time (hours, ISO datetimes). Days that do not exist
 * (`2024-02-30`) and instants outside the supported range are refused.
 */
export function parseRelativeDate(value: string, nowMs: number, attr: string): { ms: number; exact: boolean } {
  const relative = /^-(\d+)([hdwmyq])$/.exec(value);
  if (relative) {
    // However large n is, the arithmetic below stays a number (or NaN), which the range check refuses.
    const n = Number(relative[1]);
    switch (relative[2]) {
      case 'h':
        return { ms: withinQueryRange(nowMs - n * 3_600_000, value, attr), exact: true };
      case 'd':
        return { ms: withinQueryRange(nowMs - n * DAY_MS, value, attr), exact: false };
      case 'w':
        return { ms: withinQueryRange(nowMs - n * 7 * DAY_MS, value, attr), exact: false };
      case 'm':
        return { ms: withinQueryRange(addMonths(nowMs, -n), value, attr), exact: false };
      case 'q':
        return { ms: withinQueryRange(addMonths(nowMs, -3 * n), value, attr), exact: false };
      default:
        return { ms: withinQueryRange(addMonths(nowMs, -12 * n), value, attr), exact: false };
    }
  }
  const now = new Date(nowMs);
  if (value === 'dStart') return { ms: startOfUtcDay(nowMs), exact: false };
  if (value === 'mStart') return { ms: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), exact: false };
  if (value === 'yStart') return { ms: Date.UTC(now.getUTCFullYear(), 0, 1), exact: false };
  const date = ABSOLUTE_DATE.exec(value);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const ms = calendarDayMs(year, month, day);
    if (ms === null) throw new DateRangeError(attr, `Invalid date "${value}": that day does not exist.`);
    return { ms: withinQueryRange(ms, value, attr), exact: false };
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
    if (calendarDayMs(year, month, day) === null || hour > 23 || minute > 59 || second > 59) {
      throw new DateRangeError(attr, `Invalid date "${value}": that time does not exist.`);
    }
    const ms = Date.parse(datetime[7] ? value : `${value.replace(' ', 'T')}Z`);
    return { ms: withinQueryRange(ms, value, attr), exact: true };
  }
  throw new DateRangeError(attr, `Invalid date "${preview(value)}": use YYYY-MM-DD or a relative date such as -7d, -1m, mStart or yStart.`);
}

export interface DayRange {
  fromMs: number;
  /** inclusive end, pushed to the end of its day */
  toMs: number;
  /** UTC midnights of every bucket, both ends included */
  days: number[];
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

/** Day-interval range: date_from truncated to its day, date_to pushed to 23:59:59.999999. */
export function resolveDayRange(dateFrom: string | undefined, dateTo: string | undefined, nowMs: number): DayRange {
  const from = startOfUtcDay(parseRelativeDate(dateFrom ?? '-7d', nowMs, 'date_from').ms);
  const to = startOfUtcDay(dateTo ? parseRelativeDate(dateTo, nowMs, 'date_to').ms : nowMs) + DAY_MS - 1;
  if (to < from) throw new DateRangeError('date_to', 'date_to must not be before date_from.');
  const buckets = checkBucketCount(from, to, DAY_MS, 'day');
  const days = Array.from({ length: buckets }, (_, i) => from + i * DAY_MS);
  return { fromMs: from, toMs: to, days };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `YYYY-MM-DD` */
export const formatDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** PostHog's day label `%-d-%b-%Y`, e.g. `5-Jan-2024`. */
export function formatDayLabel(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`;
}
