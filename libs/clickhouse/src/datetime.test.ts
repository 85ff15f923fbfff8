import { toClickHouseDateTime } from './datetime';

describe('toClickHouseDateTime', () => {
  it('formats UTC with microseconds, as toISOString would, across seconds, repeats and fractions', () => {
    const base = Date.parse('2024-02-29T23:59:58.000Z');
    const instants = [base, base + 7, base + 42, base + 999, base + 1000, base + 1001, base + 7, -1, -1000, 0, 1.9, Date.parse('1969-12-31T23:59:59.5Z')];
    for (const ms of instants) {
      const iso = new Date(Math.floor(ms)).toISOString();
      expect(toClickHouseDateTime(ms)).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 23)}000`);
    }
  });
});
