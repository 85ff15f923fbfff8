import { nextCronRun } from './cron-scheduler';

const WEEKLY = '0 5 * * 0';

describe('nextCronRun', () => {
  it.each([
    ['a Wednesday', '2026-11-25T12:00:00Z', '2026-11-29T05:00:00.000Z'],
    ['a Sunday before 05:00', '2026-11-29T04:59:59Z', '2026-11-29T05:00:00.000Z'],
    ['a Sunday at 05:00 exactly (the next slot is a week later)', '2026-11-29T05:00:00Z', '2026-12-06T05:00:00.000Z'],
    ['a Sunday after 05:00', '2026-11-29T05:00:01Z', '2026-12-06T05:00:00.000Z'],
    ['a Saturday night, across a year end', '2022-12-31T23:30:00Z', '2023-01-01T05:00:00.000Z'],
  ])('from %s, the weekly job runs next on Sunday 05:00 UTC', (_when, from, expected) => {
    expect(nextCronRun(WEEKLY, new Date(from))?.toISOString()).toBe(expected);
  });

  it('is in UTC whatever the process timezone: a DST change in Europe does not move it', () => {
    // 2026-03-29 is the day Central Europe moves to summer time.
    expect(nextCronRun(WEEKLY, new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe('2026-03-29T05:00:00.000Z');
  });
});
