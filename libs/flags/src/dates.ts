/**
 * Date parsing for the is_date_* operators, as PostHog's flag service does it (rust/feature-flags/src/properties/property_matching.rs):
 * relative dates (`-7d`, `24h`, `2w`, `1m`, `1y`; the sign is optional and the number below
 * 10000), RFC 3339, bare dates and naive date-times (read as UTC: projects here evaluate flags
 * in UTC), then a lenient fallback.
 */

const RELATIVE_DATE = /^-?([0-9]+)([hdwmy])$/;
const BARE_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?$/;
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/** Calendar months back one at a time, clamping the day each step (as the Rust service does). */
function monthsBack(from: Date, months: number): Date {
  let year = from.getUTCFullYear();
  let month = from.getUTCMonth();
  let day = from.getUTCDate();
  for (let i = 0; i < months; i++) {
    if (month === 0) {
      month = 11;
      year -= 1;
    } else month -= 1;
    day = Math.min(day, daysInMonth(year, month));
  }
  const result = new Date(from.getTime());
  result.setUTCFullYear(year, month, day);
  return result;
}

function yearsBack(from: Date, years: number): Date {
  let year = from.getUTCFullYear();
  const month = from.getUTCMonth();
  let day = from.getUTCDate();
  for (let i = 0; i < years; i++) {
    year -= 1;
    if (month === 1) day = Math.min(day, daysInMonth(year, month));
  }
  const result = new Date(from.getTime());
  result.setUTCFullYear(year, month, day);
  return result;
}

export function parseRelativeDate(text: string, now: Date): Date | null {
  const match = RELATIVE_DATE.exec(text);
  if (!match) return null;
  const amount = Number(match[1]);
  if (amount >= 10_000) return null;
  switch (match[2]) {
    case 'h':
      return new Date(now.getTime() - amount * HOUR_MS);
    case 'd':
      return new Date(now.getTime() - amount * DAY_MS);
    case 'w':
      return new Date(now.getTime() - amount * 7 * DAY_MS);
    case 'm':
      return monthsBack(now, amount);
    default:
      return yearsBack(now, amount);
  }
}

function validDate(ms: number): Date | null {
  return Number.isFinite(ms) ? new Date(ms) : null;
}

/** A filter value or a string property value as an instant. */
export function parseDateString(text: string, now: Date): Date | null {
  const relative = parseRelativeDate(text, now);
  if (relative) return relative;
  const bare = BARE_DATE.exec(text);
  if (bare) return validDate(Date.UTC(Number(bare[1]), Number(bare[2]) - 1, Number(bare[3])));
  const dt = DATE_TIME.exec(text);
  if (dt) {
    const fraction = dt[7] ? Number(`0.${dt[7]}`) * 1000 : 0;
    let ms = Date.UTC(Number(dt[1]), Number(dt[2]) - 1, Number(dt[3]), Number(dt[4]), Number(dt[5]), Number(dt[6] ?? 0)) + fraction;
    const zone = dt[8];
    if (zone && zone !== 'Z' && zone !== 'z') {
      const sign = zone[0] === '-' ? -1 : 1;
      const digits = zone.slice(1).replace(':', '');
      ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
    }
    return validDate(ms);
  }
  // Lenient fallback for other common formats ("Jan 2 2024", RFC 2822), like the service's
  // dateparser; only strings that name their zone or carry no time are safe to read here.
  const parsed = Date.parse(/[a-z]/i.test(text) && !/(gmt|utc|z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text} UTC` : text);
  return validDate(parsed);
}

function fromUnixSeconds(seconds: number): Date | null {
  return validDate(Math.floor(seconds) * 1000 + Math.round((seconds % 1) * 1000));
}

/** A person/group property as an instant: numbers (and numeric strings) are unix seconds. */
export function parsePropertyDate(value: unknown, now: Date): Date | null {
  if (typeof value === 'number') return fromUnixSeconds(value);
  if (typeof value !== 'string') return null;
  if (FLOAT.test(value)) return fromUnixSeconds(Number(value));
  return parseDateString(value, now);
}

/**
 * How long the date comparisons of one evaluation keep their outcome as the clock advances
 * (ms; Infinity when none depends on the clock): a caller may reuse the evaluation that long.
 */
export interface DateMargin {
  ms: number;
}

/**
 * A month or year back clamps the day to a shorter month's last: as the clock advances it can
 * lag up to three days behind and then catch up at once, and between months of different
 * lengths it moves up to 31/28 times as fast as the clock.
 */
const CALENDAR_LAG_MS = 4 * DAY_MS;
const CALENDAR_SPEED = 31 / 28;

/**
 * Narrows `margin` by one comparison of a property date with a filter date made at `now`: a
 * relative filter date (`-30d`) advances with the clock (hours, days and weeks exactly; months
 * and years with the lag and speed above), so the outcome holds until it can reach the
 * property date; a fixed filter date never changes it. A relative property value (rare) gives
 * no margin.
 */
export function narrowDateMargin(margin: DateMargin, filterText: string, propertyValue: unknown, propDate: Date, filterDate: Date): void {
  const relativeFilter = RELATIVE_DATE.exec(filterText);
  if (typeof propertyValue === 'string' && RELATIVE_DATE.test(propertyValue)) {
    margin.ms = 0;
    return;
  }
  if (!relativeFilter) return;
  const ahead = propDate.getTime() - filterDate.getTime();
  const calendar = relativeFilter[2] === 'm' || relativeFilter[2] === 'y';
  let ms: number;
  if (!calendar) ms = ahead >= 0 ? ahead : Infinity;
  else if (ahead >= 0) ms = Math.max(0, Math.floor((ahead - CALENDAR_LAG_MS) / CALENDAR_SPEED));
  else ms = -ahead <= CALENDAR_LAG_MS ? 0 : Infinity;
  if (ms < margin.ms) margin.ms = ms;
}
