import { applyHistoricalUpdates, applyLiveUpdates, emptyUpdateTimes, type PropertyUpdateTimes } from './property-update-times';
import type { Properties, PropertyUpdates } from './property-updates';

const T1 = Date.parse('2024-01-01T00:00:00Z');
const T2 = Date.parse('2024-02-01T00:00:00Z');
const T3 = Date.parse('2024-03-01T00:00:00Z');
const set = (values: Properties): PropertyUpdates => ({ set: values, setOnce: {}, unset: [] });
const setOnce = (values: Properties): PropertyUpdates => ({ set: {}, setOnce: values, unset: [] });
const unset = (...keys: string[]): PropertyUpdates => ({ set: {}, setOnce: {}, unset: keys });

function person(): { properties: Properties; times: PropertyUpdateTimes } {
  return { properties: {}, times: emptyUpdateTimes() };
}

describe('historical person property updates, by event time', () => {
  it('keeps the latest $set whatever order the events arrive in', () => {
    for (const order of [
      [T1, T2, T3],
      [T3, T1, T2],
      [T2, T3, T1],
    ]) {
      const p = person();
      for (const t of order) applyHistoricalUpdates(p.properties, p.times, set({ plan: `plan-${t}` }), t);
      expect(p.properties).toEqual({ plan: `plan-${T3}` });
      expect(p.times).toEqual({ updatedAt: { plan: '2024-03-01T00:00:00.000Z' }, operation: { plan: 'set' } });
    }
  });

  it('changes nothing when an event already applied is sent again', () => {
    const p = person();
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'old' }), T1);
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'new' }), T2);
    expect(applyHistoricalUpdates(p.properties, p.times, set({ plan: 'old' }), T1)).toBe(false);
    expect(applyHistoricalUpdates(p.properties, p.times, set({ plan: 'new' }), T2)).toBe(false);
    expect(p.properties).toEqual({ plan: 'new' });
  });

  it('keeps the earliest $set_once, and lets $set replace a $set_once value (PostHog cases 4, 7, 8, 10)', () => {
    const p = person();
    applyHistoricalUpdates(p.properties, p.times, setOnce({ first: 'b' }), T2);
    applyHistoricalUpdates(p.properties, p.times, setOnce({ first: 'a' }), T1);
    applyHistoricalUpdates(p.properties, p.times, setOnce({ first: 'c' }), T3);
    expect(p.properties).toEqual({ first: 'a' });
    applyHistoricalUpdates(p.properties, p.times, set({ first: 'set' }), T1);
    expect(p.properties).toEqual({ first: 'set' });
    applyHistoricalUpdates(p.properties, p.times, setOnce({ first: 'earlier' }), T1 - 1);
    expect(p.properties).toEqual({ first: 'set' });
  });

  it('does not let an older $set bring back what a later $unset removed', () => {
    const p = person();
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'a' }), T1);
    applyHistoricalUpdates(p.properties, p.times, unset('plan'), T3);
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'b' }), T2);
    expect(p.properties).toEqual({});
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'c' }), T3 + 1);
    expect(p.properties).toEqual({ plan: 'c' });
  });

  it('never replaces a value written live; a live write forgets the historical time', () => {
    const p = person();
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'imported', other: 'x' }), T1);
    expect(applyLiveUpdates(p.properties, p.times, set({ plan: 'live' }))).toBe(true);
    expect(p.times).toEqual({ updatedAt: { other: '2024-01-01T00:00:00.000Z' }, operation: { other: 'set' } });
    applyHistoricalUpdates(p.properties, p.times, set({ plan: 'newer import', other: 'y' }), T2);
    expect(p.properties).toEqual({ plan: 'live', other: 'y' });
    const live: Properties = { email: 'live@x.io' };
    applyHistoricalUpdates(live, emptyUpdateTimes(), { set: { email: 'old@x.io' }, setOnce: {}, unset: ['email'] }, T3);
    expect(live).toEqual({ email: 'live@x.io' });
  });
});
