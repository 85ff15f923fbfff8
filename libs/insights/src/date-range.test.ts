import { formatDay, formatDayLabel, parseRelativeDate, resolveDayRange, DateRangeError } from './date-range';

const now = Date.parse('2024-01-10T15:00:00Z');

describe('resolveDayRange (compat §14.3)', () => {
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
