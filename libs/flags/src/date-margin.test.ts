import { matchProperty } from './property-match';
import type { DateMargin } from './dates';

const DAY_MS = 86_400_000;

/** A small deterministic generator, so a failure names a reproducible case. */
function generator(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe('date margin of the is_date_* operators', () => {
  it('is Infinity for fixed filter dates and narrows to the time a relative comparison keeps its outcome', () => {
    const now = new Date(Date.UTC(2026, 2, 10));
    const margin: DateMargin = { ms: Infinity };
    matchProperty({ key: 'd', operator: 'is_date_before', value: '2026-01-01', type: 'person' }, { d: '2025-06-01' }, now, margin);
    expect(margin.ms).toBe(Infinity);
    matchProperty(
      { key: 'd', operator: 'is_date_after', value: '-7d', type: 'person' },
      { d: new Date(now.getTime() - 2 * DAY_MS).toISOString() },
      now,
      margin,
    );
    expect(margin.ms).toBe(5 * DAY_MS);
    matchProperty({ key: 'd', operator: 'is_date_after', value: '-7d', type: 'person' }, { d: '-1d' }, now, margin);
    expect(margin.ms).toBe(0); // a relative property value: no margin
  });

  it('never lets a comparison change its outcome within the margin it reported (hours to years, month ends included)', () => {
    const random = generator(42);
    const units = ['h', 'd', 'w', 'm', 'y'];
    const operators = ['is_date_before', 'is_date_after', 'is_date_exact'];
    let checked = 0;
    for (let i = 0; i < 3000; i++) {
      // Clocks spread over month ends and leap days.
      const now = new Date(Date.UTC(2024, Math.floor(random() * 24), 25 + Math.floor(random() * 7), Math.floor(random() * 24)));
      const value = `-${1 + Math.floor(random() * 14)}${units[Math.floor(random() * units.length)]}`;
      const operator = operators[Math.floor(random() * operators.length)]!;
      const property = new Date(now.getTime() - random() * 500 * DAY_MS).toISOString();
      const filter = { key: 'd', operator, value, type: 'person' as const };
      const margin: DateMargin = { ms: Infinity };
      const outcome = matchProperty(filter, { d: property }, now, margin);
      const horizon = Math.min(margin.ms, 120 * DAY_MS);
      for (const fraction of [0.01, 0.25, 0.5, 0.75, 0.999]) {
        const later = new Date(now.getTime() + Math.floor(horizon * fraction));
        if (later.getTime() - now.getTime() >= margin.ms) continue;
        expect({
          i,
          now: now.toISOString(),
          value,
          operator,
          property,
          later: later.toISOString(),
          outcome: matchProperty(filter, { d: property }, later),
        }).toEqual({
          i,
          now: now.toISOString(),
          value,
          operator,
          property,
          later: later.toISOString(),
          outcome,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });
});
