import { DateTime, IANAZone } from 'luxon';

/**
 * How a source's times are read. `zone` is where times without a zone were written (IANA
 * name; `UTC` unless --timezone says otherwise). `epochIsLocal`: epoch numbers count seconds
 * of local wall-clock time rather than of UTC, as older Mixpanel projects export `time`.
 */
export interface TimeSettings {
  zone: string;
  epochIsLocal: boolean;
}

export const UTC_TIMES: TimeSettings = Object.freeze({ zone: 'UTC', epochIsLocal: false });

/** A time read from a source, changed from a form the service reads differently (counted in the report). */
export type TimeConversion = 'epoch_microseconds' | 'epoch_nanoseconds' | 'compact_date';

export type TimeReading =
  | {
      ok: true;
      /** ISO 8601 in UTC, with microseconds when the source had them. */
      iso: string;
      /** Milliseconds since the epoch (microseconds dropped). */
      ms: number;
      conversion: TimeConversion | null;
    }
  | { ok: false; reason: 'missing_timestamp' | 'invalid_timestamp' };

export const isKnownZone = (zone: string) => IANAZone.isValidZone(zone);

/** Calendar fields of a time; `micros` is the sub-millisecond part (0–999). */
interface Civil {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millis: number;
  micros: number;
}

/** 2024-05-03, 2024-05-03T10:00, …:00.123456, a space for the T, then Z, UTC, ±HH, ±HHMM or ±HH:MM (or nothing). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;
/** ISO 8601's basic date, `20240503`: epoch seconds to the service (a day in 1970). */
const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;
/** RFC 2822 / HTTP dates carry their zone in words or digits; without one they would be read in the machine's zone. */
const RFC2822_WITH_ZONE = /^[A-Za-z]{3},?\s+\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{2}:\d{2}(?::\d{2})?\s+(?:GMT|UTC|UT|Z|[+-]\d{4})$/;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The fields, if they name a real moment of the calendar (2024-02-30 does not). */
function checkedCivil(civil: Civil): Civil | null {
  const { year, month, day, hour, minute, second } = civil;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const probe = new Date(Date.UTC(year, month - 1, day));
  probe.setUTCFullYear(year);
  return probe.getUTCDate() === day && probe.getUTCMonth() === month - 1 ? civil : null;
}

/** Milliseconds since the epoch of a wall-clock time in `zone`. */
function zonedMs(civil: Civil, zone: string): number {
  if (zone === 'UTC') {
    const date = new Date(Date.UTC(civil.year, civil.month - 1, civil.day, civil.hour, civil.minute, civil.second, civil.millis));
    date.setUTCFullYear(civil.year);
    return date.getTime();
  }
  // A wall-clock time skipped by a daylight-saving change moves forward; a repeated one takes the earlier offset.
  return DateTime.fromObject(
    { year: civil.year, month: civil.month, day: civil.day, hour: civil.hour, minute: civil.minute, second: civil.second, millisecond: civil.millis },
    { zone },
  ).toMillis();
}

function reading(ms: number, micros: number, conversion: TimeConversion | null): TimeReading {
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return { ok: false, reason: 'invalid_timestamp' };
  const iso = new Date(ms).toISOString();
  return { ok: true, ms, conversion, iso: micros === 0 ? iso : `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z` };
}

/** The UTC wall clock of an instant, as calendar fields. */
function civilOfUtc(ms: number, micros: number): Civil {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millis: date.getUTCMilliseconds(),
    micros,
  };
}

/**
 * An epoch number by its size, as a number or numeric text: seconds below 10^11 (until year
 * 5138), then milliseconds, microseconds, nanoseconds. The service reads everything from 10^11
 * up as milliseconds, so microsecond and nanosecond epochs are converted here.
 */
function readEpoch(text: string, settings: TimeSettings): TimeReading {
  const value = Number(text);
  if (!Number.isFinite(value)) return { ok: false, reason: 'invalid_timestamp' };
  const size = Math.abs(value);
  let totalMicros: number;
  let conversion: TimeConversion | null = null;
  if (size < 1e11) totalMicros = Math.round(value * 1e6);
  else if (size < 1e14) totalMicros = Math.round(value * 1e3);
  else if (size < 1e17) {
    // Microseconds: beyond 2^53 a JSON number has already lost digits, so the text is read exactly.
    totalMicros = /^\d+$/.test(text) ? Number(BigInt(text)) : Math.round(value);
    conversion = 'epoch_microseconds';
  } else {
    totalMicros = /^\d+$/.test(text) ? Number(BigInt(text) / 1000n) : Math.round(value / 1e3);
    conversion = 'epoch_nanoseconds';
  }
  const ms = Math.floor(totalMicros / 1000);
  const micros = totalMicros - ms * 1000;
  if (!settings.epochIsLocal || settings.zone === 'UTC') return reading(ms, micros, conversion);
  return reading(zonedMs(civilOfUtc(ms, micros), settings.zone), micros, conversion);
}

function offsetMs(zone: string): number {
  if (zone === 'Z' || zone === 'z' || zone === 'UTC' || zone === 'GMT') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * HOUR + Number(digits.slice(2, 4) || '0') * MINUTE);
}

/**
 * Reads a source timestamp exactly, in UTC unless it says its zone (or `settings.zone` says
 * where zoneless times were written): never in the importing machine's zone, as `Date.parse`
 * would. Takes ISO 8601 (a space for the T, `+05` offsets, up to nine fraction digits, of
 * which microseconds are kept), `20240503`, RFC 2822 dates with a zone, and epoch numbers (see
 * readEpoch). Anything else, a truncated `2024-12-3` among them, is invalid rather than guessed.
 */
export function readSourceTime(value: unknown, settings: TimeSettings = UTC_TIMES): TimeReading {
  if (value === undefined || value === null || value === '') return { ok: false, reason: 'missing_timestamp' };
  if (typeof value === 'number') {
    if (Number.isInteger(value) && COMPACT_DATE.test(String(value))) return readSourceTime(String(value), settings);
    return readEpoch(String(value), settings);
  }
  if (typeof value !== 'string') return { ok: false, reason: 'invalid_timestamp' };
  const text = value.trim();
  const compact = COMPACT_DATE.exec(text);
  if (compact) {
    const civil = checkedCivil({ year: +compact[1]!, month: +compact[2]!, day: +compact[3]!, hour: 0, minute: 0, second: 0, millis: 0, micros: 0 });
    if (civil) return reading(zonedMs(civil, settings.zone), 0, 'compact_date');
  }
  if (DECIMAL.test(text)) return readEpoch(text, settings);
  const iso = ISO_TIME.exec(text);
  if (iso) {
    const fraction = (iso[7] ?? '').padEnd(6, '0');
    const civil = checkedCivil({
      year: +iso[1]!,
      month: +iso[2]!,
      day: +iso[3]!,
      hour: +(iso[4] ?? 0),
      minute: +(iso[5] ?? 0),
      second: +(iso[6] ?? 0),
      millis: +fraction.slice(0, 3),
      micros: +fraction.slice(3, 6),
    });
    if (!civil) return { ok: false, reason: 'invalid_timestamp' };
    const zone = iso[8];
    const ms = zone === undefined ? zonedMs(civil, settings.zone) : zonedMs(civil, 'UTC') - offsetMs(zone);
    return reading(ms, civil.micros, null);
  }
  if (RFC2822_WITH_ZONE.test(text)) return reading(Date.parse(text), 0, null);
  return { ok: false, reason: 'invalid_timestamp' };
}

/** `--from` / `--to` as a half-open range [fromMs, toBeforeMs); a bare date --to ends with its day. */
export function readTimeBound(raw: string, settings: TimeSettings, end: 'from' | 'to'): number | null {
  const text = raw.trim();
  if (!ISO_TIME.test(text)) return null;
  const read = readSourceTime(text, settings);
  if (!read.ok) return null;
  if (end === 'from') return read.ms;
  // A bare date names the whole day: up to the next day's midnight in the same zone.
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const next = DateTime.fromMillis(read.ms, { zone: settings.zone }).plus({ days: 1 }).toMillis();
    return next;
  }
  return read.ms + 1;
}
