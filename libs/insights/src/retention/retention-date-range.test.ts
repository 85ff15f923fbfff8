import { DateRangeError } from '../common/date-range';
import { resolveRetentionDateRange, type RetentionDateRangeInput } from './retention-date-range';

const NOW = Date.parse('2024-06-05T10:30:00Z'); // a Wednesday
const range = (input: Partial<RetentionDateRangeInput>) =>
  resolveRetentionDateRange({ dateFrom: null, dateTo: null, period: 'Day', totalIntervals: 11, timezone: 'UTC', weekStartDay: 0, nowMs: NOW, ...input });
const iso = (r: ReturnType<typeof range>) => ({ from: r.from.toISO(), to: r.to.toISO(), rows: r.starts.length });

describe("retention date range (PostHog's QueryDateRangeWithIntervals)", () => {
  it('ends after date_to’s interval and starts total_intervals before that end', () => {
    expect(iso(range({}))).toEqual({ from: '2024-05-26T00:00:00.000Z', to: '2024-06-06T00:00:00.000Z', rows: 11 });
    expect(iso(range({ dateTo: '2024-06-01T06:00:00' }))).toEqual({ from: '2024-05-22T00:00:00.000Z', to: '2024-06-02T00:00:00.000Z', rows: 11 });
  });

  it('keeps an absolute hour of date_to for hours; a relative one ends with its hour', () => {
    expect(iso(range({ period: 'Hour', dateTo: '2020-06-10T16:13:00' }))).toMatchObject({ to: '2020-06-10T17:00:00.000Z', from: '2020-06-10T06:00:00.000Z' });
    expect(iso(range({ period: 'Hour', totalIntervals: 2 }))).toMatchObject({ to: '2024-06-05T11:00:00.000Z', from: '2024-06-05T09:00:00.000Z' });
  });

  it('cuts weeks at the project week start and months at their first day', () => {
    expect(iso(range({ period: 'Week', totalIntervals: 2 }))).toEqual({ from: '2024-05-26T00:00:00.000Z', to: '2024-06-09T00:00:00.000Z', rows: 2 });
    expect(iso(range({ period: 'Week', totalIntervals: 2, weekStartDay: 1 }))).toEqual({
      from: '2024-05-27T00:00:00.000Z',
      to: '2024-06-10T00:00:00.000Z',
      rows: 2,
    });
    expect(iso(range({ period: 'Month', totalIntervals: 3, dateTo: '2024-01-31' }))).toEqual({
      from: '2023-11-01T00:00:00.000Z',
      to: '2024-02-01T00:00:00.000Z',
      rows: 3,
    });
  });

  it('starts at date_from’s interval when given, in the project timezone', () => {
    const r = range({ dateFrom: '2024-06-01', dateTo: '2024-06-03', timezone: 'Asia/Tokyo' });
    expect([r.from.toISO(), r.to.toISO(), r.starts.length]).toEqual(['2024-06-01T00:00:00.000+09:00', '2024-06-04T00:00:00.000+09:00', 3]);
  });

  it('refuses a table past the cell bound, and a date_from after date_to', () => {
    expect(() => range({ period: 'Hour', dateFrom: '2000-01-01', totalIntervals: 100 })).toThrow(DateRangeError);
    expect(() => range({ dateFrom: '2024-07-01', dateTo: '2024-06-01' })).toThrow(DateRangeError);
  });
});
