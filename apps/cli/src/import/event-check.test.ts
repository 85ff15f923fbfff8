import { checkEvent, stableEventUuid } from './event-check';
import { mapRecord } from './formats';

describe('stable event ids', () => {
  it('keeps a source UUID, and derives the same UUID for the same source id or file line on every run', () => {
    expect(stableEventUuid('5F0C6F8E-3C1A-4B7E-9D2F-1A2B3C4D5E6F', 'f', 1)).toBe('5f0c6f8e-3c1a-4b7e-9d2f-1a2b3c4d5e6f');
    const fromId = stableEventUuid('ins-1', 'file-a', 1);
    expect(stableEventUuid('ins-1', 'file-b', 99)).toBe(fromId);
    expect(fromId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableEventUuid(undefined, 'file-a', 7)).toBe(stableEventUuid(undefined, 'file-a', 7));
    expect(stableEventUuid(undefined, 'file-a', 7)).not.toBe(stableEventUuid(undefined, 'file-a', 8));
  });
});

describe('event checks', () => {
  const check = (record: Record<string, unknown>) => checkEvent(mapRecord('posthog', record, {}), 'f', 1);
  it.each([
    [{ distinct_id: 'u', timestamp: '2024-01-01' }, 'missing_event'],
    [{ event: 'e', timestamp: '2024-01-01' }, 'missing_distinct_id'],
    [{ event: 'e', distinct_id: '  ', timestamp: '2024-01-01' }, 'missing_distinct_id'],
    [{ event: 'e', distinct_id: 'u', timestamp: 'soon' }, 'invalid_timestamp'],
    [{ event: 'e', distinct_id: 'u' }, 'invalid_timestamp'],
    [{ event: 'e', distinct_id: 'u', timestamp: '2024-01-01', properties: [1] }, 'invalid_properties'],
    [{ event: 'e', distinct_id: 'u', timestamp: '2024-01-01', properties: { big: 'x'.repeat(1_000_000) } }, 'event_too_large'],
  ])('%j is rejected as %s', (record, reason) => {
    expect(check(record)).toEqual({ ok: false, reason });
  });
  it('reads epoch seconds and milliseconds, numeric ids as text', () => {
    expect(check({ event: 'e', distinct_id: 7, timestamp: 1704448800 })).toMatchObject({
      ok: true,
      event: { distinct_id: '7', timestamp: '2024-01-05T10:00:00.000Z' },
    });
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '1704448800000' })).toMatchObject({ ok: true, event: { timestamp: '2024-01-05T10:00:00.000Z' } });
  });
});
