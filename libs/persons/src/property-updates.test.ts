import { isIllegalDistinctId } from './illegal-distinct-ids';
import { applyPropertyUpdates, personUpdatesFromEvent } from './property-updates';

describe('person property updates (docs/data-model.md#person-properties)', () => {
  it('applies $set_once, then $set, then $unset, and reports whether anything changed', () => {
    const target: Record<string, unknown> = { kept: 1, gone: 2 };
    expect(applyPropertyUpdates(target, { setOnce: { kept: 9, a: 'once', b: 'once' }, set: { b: 'set' }, unset: ['gone', 'absent'] })).toBe(true);
    expect(target).toEqual({ kept: 1, a: 'once', b: 'set' });
    expect(applyPropertyUpdates(target, { setOnce: { a: 'x' }, set: { b: 'set' }, unset: ['absent'] })).toBe(false);
  });

  it('compares object values by content, so an unchanged object does not cause a write', () => {
    const target: Record<string, unknown> = { o: { x: [1] } };
    expect(applyPropertyUpdates(target, { setOnce: {}, set: { o: { x: [1] } }, unset: [] })).toBe(false);
    expect(applyPropertyUpdates(target, { setOnce: {}, set: { o: { x: [2] } }, unset: [] })).toBe(true);
  });

  it('reads $unset as a list or as an object of keys', () => {
    expect(personUpdatesFromEvent({ $unset: ['a'] }).unset).toEqual(['a']);
    expect(personUpdatesFromEvent({ $unset: { b: null } }).unset).toEqual(['b']);
  });

  it('lifts campaign and device properties to $set and $initial_* $set_once, without overriding explicit values', () => {
    const u = personUpdatesFromEvent({ $browser: 'Firefox', utm_source: 'news', $set: { $browser: 'mine' }, $set_once: { $initial_utm_source: 'first' } });
    expect(u.set).toEqual({ $browser: 'mine', utm_source: 'news' });
    expect(u.setOnce).toEqual({ $initial_browser: 'Firefox', $initial_utm_source: 'first' });
  });

  it('does not lift the OS of server SDKs; falls back to $os_name for $initial_os', () => {
    expect(personUpdatesFromEvent({ $is_server: true, $os: 'Linux', $os_version: '6' }).set).toEqual({});
    expect(personUpdatesFromEvent({ $os_name: 'iOS' }).setOnce).toEqual({ $initial_os_name: 'iOS', $initial_os: 'iOS' });
  });
});

describe('illegal distinct ids (docs/data-model.md#distinct-ids)', () => {
  it.each(['anonymous', 'Anonymous', 'GUEST', '"undefined"', "'null'", 'null', '[object Object]', 'NaN', '0', ' ', ''])('%p is illegal', (id) => {
    expect(isIllegalDistinctId(id)).toBe(true);
  });
  it.each(['NULL', 'nan', 'user-1', '00', 'anonymous-1'])('%p is legal', (id) => {
    expect(isIllegalDistinctId(id)).toBe(false);
  });
});
