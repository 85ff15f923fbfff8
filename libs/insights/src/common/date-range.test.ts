import { formatDay, formatDayLabel, MAX_BUCKETS, parseRelativeDate, resolveDayRange, DateRangeError } from './date-range';

const now = Date.parse('2024-01-10T15:00:00Z');

describe('resolveDayRange (docs/http-api.md#trends)', () => {
  it('-7d gives 8 daily buckets, both ends inclusive', () => {
    const range = resolveDayRange(undefined, undefined, now);
    expect(range.days.map(formatDay)).toEqual(['2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07', '2024-01-08', '2024-01-09', '2024-01-10']);
    expect(range.days.map(formatDayLabel)[0]).toBe('3-Jan-2024');
    expect(new Date(range.fromMs).toISOString()).toBe('2024-01-03T00:00:00.000Z');
    expect(new Date(range.toMs).toISOString()).toBe('2024-01-10T23:59:59.999Z');
  });
  it('accepts absolute dates and mStart / yStart', () => {
    expect(resolveDayRange('2024-01-01', '2024-01-02', now).days.map(formatDay)).toEqual(['2024-01-01', '2024-01-02']);
    expect(formatDay(resolveDayRange('mStart', undefined, now).fromMs)).toBe('2024-01-01');
    expect(formatDay(parseRelativeDate('yStart', Date.parse('2024-06-10T00:00:00Z'), 'date_from').ms)).toBe('2024-01-01');
    expect(formatDay(parseRelativeDate('-1m', now, 'date_from').ms)).toBe('2023-12-10');
    expect(formatDay(parseRelativeDate('-2w', now, 'date_from').ms)).toBe('2023-12-27');
  });
  it('rejects nonsense and reversed ranges with the attribute named', () => {
    expect(() => resolveDayRange('last tuesday', undefined, now)).toThrow(DateRangeError);
    try {
      resolveDayRange('2024-02-01', '2024-01-01', now);
      throw new Error('no error');
    } catch (e) {
      expect((e as DateRangeError).attr).toBe('date_to');
    }
  });
});

describe('date ranges a client cannot abuse', () => {
  const attrOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof DateRangeError) return { attr: e.attr, message: e.message };
      throw e;
    }
    throw new Error('no error');
  };
  it.each(['-150000000d', '-99999999999999999999h', '-999999y', '-9'.padEnd(400, '9') + 'm', '0001-01-01', '2400-01-01'])(
    '%s is refused as out of range before anything is built',
    (value) => {
      const { attr, message } = attrOf(() => resolveDayRange(value, undefined, now));
      expect(attr).toBe('date_from');
      expect(message).toMatch(/outside the supported range/);
    },
  );
  it('a range with more day buckets than allowed is refused with the count', () => {
    const { attr, message } = attrOf(() => resolveDayRange('-20000d', undefined, now));
    expect(attr).toBe('date_from');
    expect(message).toBe('The date range holds 20001 day buckets; at most 3660 are allowed. Narrow the range or use a longer interval.');
    expect(resolveDayRange(`-${MAX_BUCKETS - 1}d`, undefined, now).days).toHaveLength(MAX_BUCKETS);
  });
  it.each(['2024-02-30', '2023-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-01-01T24:00', '2024-01-01 12:60:00', '2024-02-30T10:00:00Z'])(
    'the impossible date %s is refused',
    (value) => {
      expect(attrOf(() => parseRelativeDate(value, now, 'date_to'))).toEqual({ attr: 'date_to', message: expect.stringMatching(/does not exist/) });
    },
  );
  it('real leap days and datetimes with offsets are kept', () => {
    expect(formatDay(parseRelativeDate('2024-02-29', now, 'date_from').ms)).toBe('2024-02-29');
    expect(parseRelativeDate('2024-02-29T23:30:00+02:00', now, 'date_from')).toEqual({ ms: Date.parse('2024-02-29T21:30:00Z'), exact: true });
    expect(parseRelativeDate('2024-02-29 23:30', now, 'date_from')).toEqual({ ms: Date.parse('2024-02-29T23:30:00Z'), exact: true });
  });
  it('a long invalid value is cut short in the message', () => {
    const { message } = attrOf(() => parseRelativeDate('x'.repeat(10_000), now, 'date_from'));
    expect(message.length).toBeLessThan(200);
  });
});
