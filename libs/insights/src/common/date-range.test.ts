import { DateTime } from 'luxon';
import {
  checkTimezone,
  DateRangeError,
  formatBucketDay,
  formatBucketLabel,
  isoDateTime,
  MAX_BUCKETS,
  parseCompareTo,
  parseQueryDate,
  previousPeriod,
  resolveQueryDateRange,
  shiftDateRange,
  type Interval,
} from './date-range';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const range = (dateFrom: string | null, dateTo: string | null, interval: Interval = 'day', timezone = 'UTC', weekStartDay: 0 | 1 = 0) =>
  resolveQueryDateRange({ dateFrom, dateTo, interval, timezone, weekStartDay, nowMs: NOW });
const days = (r: ReturnType<typeof range>) => r.buckets.map((b) => formatBucketDay(b, r.interval));
const labels = (r: ReturnType<typeof range>) => r.buckets.map((b) => formatBucketLabel(b, r));

describe('resolveQueryDateRange (PostHog QueryDateRange)', () => {
  it('the bucket example: -7d by day gives 8 buckets, both ends inclusive', () => {
    const r = range(null, null);
    expect(days(r)).toEqual(['2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07', '2024-01-08', '2024-01-09', '2024-01-10']);
    expect(labels(r)[0]).toBe('3-Jan-2024');
    expect(isoDateTime(r.from)).toBe('2024-01-03T00:00:00Z');
    expect(isoDateTime(r.to)).toBe('2024-01-10T23:59:59.999999Z');
  });

  it('weeks start on Sunday (or Monday) with labels clipped to the range', () => {
    const sunday = range('-7d', null, 'week');
    expect(days(sunday)).toEqual(['2023-12-31', '2024-01-07']);
    expect(labels(sunday)).toEqual(['3–6 Jan', '7–10 Jan']);
    expect(days(range('-7d', null, 'week', 'UTC', 1))).toEqual(['2024-01-01', '2024-01-08']);
    expect(labels(range('2023-12-20', '2024-01-10', 'week'))[2]).toBe('31-Dec-2023 – 6-Jan-2024');
    expect(labels(range('2024-01-20', '2024-02-10', 'week'))[2]).toBe('28-Jan – 3-Feb');
    expect(labels(range('2023-12-30', '2024-01-10', 'week'))[0]).toBe('30-Dec-2023');
  });

  it('-24h by hour keeps the hour: 25 buckets ending with the current hour', () => {
    const r = range('-24h', null, 'hour');
    expect(r.buckets).toHaveLength(25);
    expect(days(r)[0]).toBe('2024-01-09 15:00:00');
    expect(labels(r)[0]).toBe('9-Jan 15:00');
    expect(r.to.toISO()).toBe('2024-01-10T15:59:59.999Z');
  });

  it('months, minutes, dStart/mStart/yStart and the project timezone', () => {
    expect(labels(range('-2m', null, 'month'))).toEqual(['Nov 2023', 'Dec 2023', 'Jan 2024']);
    expect(range('-10M', null, 'minute').buckets).toHaveLength(11);
    expect(days(range('mStart', null))[0]).toBe('2024-01-01');
    expect(days(range('yStart', '2024-01-01'))).toEqual(['2024-01-01']);
    expect(days(range('dStart', null))).toEqual(['2024-01-10']);
    const tokyo = range(null, null, 'day', 'Asia/Tokyo');
    // 15:00 UTC is already Jan 11 in Tokyo.
    expect(days(tokyo)[7]).toBe('2024-01-11');
    expect(isoDateTime(tokyo.from)).toBe('2024-01-04T00:00:00+09:00');
  });

  it('reads ISO dates in the project timezone and keeps explicit offsets', () => {
    const now = DateTime.fromMillis(NOW, { zone: 'Europe/Paris' });
    expect(parseQueryDate('2024-01-05', now, 'date_from').at.toISO()).toBe('2024-01-05T00:00:00.000+01:00');
    expect(parseQueryDate('2024-01-05T10:00:00Z', now, 'date_from').at.toUTC().toISO()).toBe('2024-01-05T10:00:00.000Z');
    expect(parseQueryDate('2024-1-5', now, 'date_from').at.day).toBe(5);
    expect(parseQueryDate('-1q', now, 'date_from').at.toISODate()).toBe('2023-10-11');
  });

  it('the previous period is as long as the current one and ends on its first day (PostHog get_compare_period_dates)', () => {
    const r = range(null, null);
    const previous = previousPeriod(r);
    expect(days(previous)).toEqual(['2023-12-26', '2023-12-27', '2023-12-28', '2023-12-29', '2023-12-30', '2023-12-31', '2024-01-01', '2024-01-02']);
    expect(previous.to.toISO()).toBe('2024-01-02T23:59:59.999Z');
    // -7d: one day later, so the weekdays line up (test_trends_compare_day_interval_relative_range).
    expect(days(previousPeriod(range('-7d', null)))).toEqual([
      '2023-12-27',
      '2023-12-28',
      '2023-12-29',
      '2023-12-30',
      '2023-12-31',
      '2024-01-01',
      '2024-01-02',
      '2024-01-03',
    ]);
    // Hours keep the current period's hours.
    const hours = previousPeriod(range('dStart', null, 'hour'));
    expect([hours.buckets.length, formatBucketDay(hours.buckets[0]!, 'hour'), hours.to.toISO()]).toEqual([
      16,
      '2024-01-09 00:00:00',
      '2024-01-09T15:59:59.999Z',
    ]);
  });

  it('compare_to starts that far before date_from and lasts as long as the current period (PostHog QueryCompareToDateRange)', () => {
    const march = range('2024-03-01', '2024-03-31');
    const previous = shiftDateRange(march, parseCompareTo('-1m'));
    expect([days(previous)[0], days(previous).at(-1), previous.buckets.length]).toEqual(['2024-02-01', '2024-03-02', 31]);
    expect(parseCompareTo('-1q')).toEqual({ amount: 13, unit: 'weeks' });
  });

  it('counts events from date_from: its bucket start, its day for weeks, itself for hours deltas and explicit dates', () => {
    expect(range('2024-01-04', null, 'week').eventsFrom.toISO()).toBe('2024-01-04T00:00:00.000Z');
    expect(range('2024-01-04', null, 'month').eventsFrom.toISO()).toBe('2024-01-01T00:00:00.000Z');
    expect(range('-24h', null).eventsFrom.toISO()).toBe('2024-01-09T15:00:00.000Z');
    expect(range('-24h', null).buckets[0]!.toISO()).toBe('2024-01-09T00:00:00.000Z');
    const explicit = resolveQueryDateRange({
      dateFrom: '2024-01-05T10:20:00Z',
      dateTo: '2024-01-06T10:20:00Z',
      interval: 'day',
      timezone: 'UTC',
      weekStartDay: 0,
      nowMs: NOW,
      explicitDate: true,
    });
    expect([explicit.eventsFrom.toISO(), explicit.to.toISO()]).toEqual(['2024-01-05T10:20:00.000Z', '2024-01-06T10:20:00.000Z']);
  });
});

describe('date ranges a client cannot abuse', () => {
  const errorOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof DateRangeError) return { attr: e.attr, message: e.message };
      throw e;
    }
    throw new Error('no error');
  };
  it.each(['-150000000d', '-99999999999999999999h', '-999999y', '-9'.padEnd(400, '9') + 'm', '0001-01-01', '2400-01-01'])(
    '%s is refused as out of range',
    (value) => {
      const { attr, message } = errorOf(() => range(value, null));
      expect(attr).toBe('date_from');
      expect(message).toMatch(/outside the supported range/);
    },
  );
  it('a time zone must be one ClickHouse knows, not only one Node knows', () => {
    for (const zone of ['US/Pacific-New', 'SystemV/AST4', 'Canada/East-Saskatchewan', 'Mars/Olympus']) {
      expect(errorOf(() => checkTimezone(zone))).toEqual({ attr: 'timezone', message: `Unknown timezone "${zone}".` });
      expect(errorOf(() => range(null, null, 'day', zone))).toEqual({ attr: 'timezone', message: `Unknown timezone "${zone}".` });
    }
    expect(checkTimezone('America/Los_Angeles')).toBe('America/Los_Angeles');
  });
  it('tells checkBuckets the bucket count, for minutes and hours before any bucket is built', () => {
    for (const [dateFrom, interval] of [
      ['-47h', 'minute'],
      ['-30d', 'hour'],
      ['-30d', 'day'],
      ['-1y', 'week'],
      ['-3y', 'month'],
    ] as const) {
      const told: number[] = [];
      const r = resolveQueryDateRange({ dateFrom, interval, timezone: 'Europe/Berlin', weekStartDay: 1, nowMs: NOW, checkBuckets: (n) => told.push(n) });
      expect(told).toEqual([r.buckets.length]);
    }
    // A refusal stops a minute range before its 2,821 bucket DateTimes are made.
    const made = jest.spyOn(DateTime, 'fromMillis');
    try {
      const refuse = () => {
        throw new DateRangeError('interval', 'too many points');
      };
      expect(() => resolveQueryDateRange({ dateFrom: '-47h', interval: 'minute', timezone: 'UTC', weekStartDay: 0, nowMs: NOW, checkBuckets: refuse })).toThrow(
        'too many points',
      );
      expect(made.mock.calls.length).toBeLessThan(10);
    } finally {
      made.mockRestore();
    }
  });

  it('a range with more buckets than allowed is refused with the count', () => {
    expect(errorOf(() => range('-20000d', null)).message).toBe(
      'The date range holds 20001 day buckets; at most 3660 are allowed. Narrow the range or use a longer interval.',
    );
    expect(range(`-${MAX_BUCKETS - 1}d`, null).buckets).toHaveLength(MAX_BUCKETS);
  });
  it.each(['2024-02-30', '2023-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-01-01T24:00', '2024-01-01 12:60:00', '2024-02-30T10:00:00Z'])(
    'the impossible date %s is refused',
    (value) => {
      expect(errorOf(() => range('-30d', value))).toEqual({ attr: 'date_to', message: expect.stringMatching(/does not exist/) });
    },
  );
  it('an unknown timezone, a reversed range and nonsense are refused', () => {
    expect(errorOf(() => range(null, null, 'day', 'Mars/Olympus')).attr).toBe('timezone');
    expect(errorOf(() => range('2024-02-01', '2024-01-01')).attr).toBe('date_to');
    expect(errorOf(() => range('last tuesday', null)).message.length).toBeLessThan(200);
  });
});
