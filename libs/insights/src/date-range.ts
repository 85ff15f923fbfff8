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
 * PostHog's relative and absolute date strings (UTC): `-7d`, `-2w`, `-1m`, `-1y`, `-6h`,
 * `mStart`, `yStart`, `dStart`, `YYYY-MM-DD`, or an ISO datetime. Returns the instant and
 * whether the string pinned an exact time (hours, ISO datetimes).
 */
export function parseRelativeDate(value: string, nowMs: number, attr: string): { ms: number; exact: boolean } {
  const relative = /^-(\d+)([hdwmyq])$/.exec(value);
  if (relative) {
    const n = Number(relative[1]);
    switch (relative[2]) {
      case 'h':
        return { ms: nowMs - n * 3_600_000, exact: true };
      case 'd':
        return { ms: nowMs - n * DAY_MS, exact: false };
      case 'w':
        return { ms: nowMs - n * 7 * DAY_MS, exact: false };
      case 'm':
        return { ms: addMonths(nowMs, -n), exact: false };
      case 'q':
        return { ms: addMonths(nowMs, -3 * n), exact: false };
      default:
        return { ms: addMonths(nowMs, -12 * n), exact: false };
    }
  }
  const now = new Date(nowMs);
  if (value === 'dStart') return { ms: startOfUtcDay(nowMs), exact: false };
  if (value === 'mStart') return { ms: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), exact: false };
  if (value === 'yStart') return { ms: Date.UTC(now.getUTCFullYear(), 0, 1), exact: false };
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const ms = Date.parse(`${value}T00:00:00Z`);
    if (!Number.isNaN(ms)) return { ms, exact: false };
  } else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value)) {
    const ms = Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value.replace(' ', 'T')}Z`);
    if (!Number.isNaN(ms)) return { ms, exact: true };
  }
  throw new DateRangeError(attr, `Invalid date "${value}": use YYYY-MM-DD or a relative date such as -7d, -1m, mStart or yStart.`);
}

export interface DayRange {
  fromMs: number;
  /** inclusive end, pushed to the end of its day */
  toMs: number;
  /** UTC midnights of every bucket, both ends included */
  days: number[];
}

/** Day-interval range: date_from truncated to its day, date_to pushed to 23:59:59.999999. */
export function resolveDayRange(dateFrom: string | undefined, dateTo: string | undefined, nowMs: number): DayRange {
  const from = startOfUtcDay(parseRelativeDate(dateFrom ?? '-7d', nowMs, 'date_from').ms);
  const to = startOfUtcDay(dateTo ? parseRelativeDate(dateTo, nowMs, 'date_to').ms : nowMs) + DAY_MS - 1;
  if (to < from) throw new DateRangeError('date_to', 'date_to must not be before date_from.');
  const days: number[] = [];
  for (let d = from; d <= to; d += DAY_MS) days.push(d);
  if (days.length > 3660) throw new DateRangeError('date_from', 'The date range spans more than ten years of days; narrow it.');
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
