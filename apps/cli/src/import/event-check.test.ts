import { checkEvent, stableEventUuid, type CheckContext } from './event-check';
import { createRecordMapper } from './formats';
import { UTC_TIMES } from './source-time';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const context: CheckContext = { times: UTC_TIMES, apiKey: 'phc_test', nowMs: NOW };
const mapPosthog = createRecordMapper('posthog', {});
const check = (record: Record<string, unknown>) => checkEvent(mapPosthog(record)[0]!, () => JSON.stringify(record), context);

describe('stable event ids', () => {
  it('keeps a source UUID, and derives the same UUID for the same source id or record on every run', () => {
    expect(stableEventUuid('5F0C6F8E-3C1A-4B7E-9D2F-1A2B3C4D5E6F', 'x')).toBe('5f0c6f8e-3c1a-4b7e-9d2f-1a2b3c4d5e6f');
    const fromId = stableEventUuid('ins-1', '');
    expect(fromId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(stableEventUuid(undefined, '{"event":"a"}')).toBe(stableEventUuid(undefined, '{"event":"a"}'));
    expect(stableEventUuid(undefined, '{"event":"a"}')).not.toBe(stableEventUuid(undefined, '{"event":"b"}'));
  });

  it('derives an id-less event from the record, so the same record gets the same uuid at any line of any file', () => {
    const record = { event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z' };
    const first = check(record);
    const again = checkEvent(mapPosthog({ ...record })[0]!, () => JSON.stringify({ ...record }), context);
    expect(first.ok && again.ok && first.event.uuid === again.event.uuid).toBe(true);
    const other = check({ ...record, timestamp: '2024-01-01T00:00:01Z' });
    expect(first.ok && other.ok && first.event.uuid !== other.event.uuid).toBe(true);
  });
});

describe('event checks', () => {
  it.each([
    [{ distinct_id: 'u', timestamp: '2024-01-01' }, 'missing_event'],
    [{ event: 'e', timestamp: '2024-01-01' }, 'missing_distinct_id'],
    [{ event: 'e', distinct_id: '  ', timestamp: '2024-01-01' }, 'missing_distinct_id'],
    [{ event: 'e', distinct_id: 'u', timestamp: 'soon' }, 'invalid_timestamp'],
    [{ event: 'e', distinct_id: 'u' }, 'missing_timestamp'],
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

  it('sends the JSON ingestion will store, the same as the event encoded', () => {
    const result = check({ event: 'e', distinct_id: 'u', timestamp: '2024-01-05T10:00:00Z', properties: { a: [1, { b: '"q"' }] } });
    if (!result.ok) throw new Error(result.reason);
    expect(result.text).toBe(JSON.stringify(result.event));
  });
});

describe('events the service would drop or rewrite are rejected with its reason', () => {
  const nested = (levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = { v: value };
    return value;
  };

  it('properties nested past 64 levels, as the gateway checks them (normalizeEvent)', () => {
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', properties: { deep: nested(70) } })).toEqual({
      ok: false,
      reason: 'nested_too_deeply',
    });
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', properties: { deep: nested(50) } })).toMatchObject({ ok: true });
  });

  it('a time more than 23 hours ahead, which the service clamps to now', () => {
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '2025-06-03T00:00:00Z' })).toEqual({ ok: false, reason: 'timestamp_in_future' });
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '2025-06-02T10:00:00Z' })).toMatchObject({ ok: true });
  });

  it('a distinct id longer than the 200 characters the service keeps (two ids would become one)', () => {
    expect(check({ event: 'e', distinct_id: 'x'.repeat(201), timestamp: '2024-01-01T00:00:00Z' })).toEqual({ ok: false, reason: 'distinct_id_too_long' });
  });

  it('an event whose bus message is over 1 MB in UTF-8 though under it in UTF-16 units', () => {
    expect(check({ event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', properties: { text: '漢'.repeat(400_000) } })).toEqual({
      ok: false,
      reason: 'event_too_large',
    });
  });
});
