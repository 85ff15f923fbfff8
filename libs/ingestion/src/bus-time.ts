const DIGIT_0 = 0x30;
const DASH = 0x2d;
const COLON = 0x3a;
const DOT = 0x2e;
const LETTER_T = 0x54;
const LETTER_Z = 0x5a;
const MS_PER_DAY = 86_400_000;

/** The number the digits text[from, to) spell; -1 if any is not a digit. */
function digitsAt(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (month 1-12), by the civil-from-days arithmetic of H. Hinnant's date algorithms. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * Date.parse for the times a bus message carries (`timestamp`, `now`), which the gateway writes
 * with toISOString: "2026-11-27T08:32:15.604Z". That exact shape is read from its digits (the
 * worker reads two or three per event, and Date.parse's general parser costs about as much as a
 * tenth of the event's JSON); anything else, and any day past the 28th (whether it exists
 * depends on the month), goes to Date.parse, so the answer is always Date.parse's.
 */
export function parseBusTime(text: string): number {
  if (
    text.length !== 24 ||
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    text.charCodeAt(10) !== LETTER_T ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    text.charCodeAt(19) !== DOT ||
    text.charCodeAt(23) !== LETTER_Z
  )
    return Date.parse(text);
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  const ms = digitsAt(text, 20, 23);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0)
    return Date.parse(text);
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/**
 * parseBusTime of the time whose text is the ASCII bytes[start, end) (bus format 2 keeps `timestamp`
 * and `now` so), read from the bytes without making the text: the toISOString shape with a day up
 * to the 28th, as parseBusTime reads it; undefined for anything else, whose text then goes to
 * parseBusTime.
 */
export function busTimeOfBytes(bytes: Uint8Array, start: number, end: number): number | undefined {
  if (
    end - start !== 24 ||
    bytes[start + 4] !== DASH ||
    bytes[start + 7] !== DASH ||
    bytes[start + 10] !== LETTER_T ||
    bytes[start + 13] !== COLON ||
    bytes[start + 16] !== COLON ||
    bytes[start + 19] !== DOT ||
    bytes[start + 23] !== LETTER_Z
  )
    return undefined;
  const year = digitBytesAt(bytes, start, 4);
  const month = digitBytesAt(bytes, start + 5, 2);
  const day = digitBytesAt(bytes, start + 8, 2);
  const hour = digitBytesAt(bytes, start + 11, 2);
  const minute = digitBytesAt(bytes, start + 14, 2);
  const second = digitBytesAt(bytes, start + 17, 2);
  const ms = digitBytesAt(bytes, start + 20, 3);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0)
    return undefined;
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/** The number the `count` digit bytes from `from` spell; -1 if any is not a digit. */
function digitBytesAt(bytes: Uint8Array, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = bytes[i]! - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
