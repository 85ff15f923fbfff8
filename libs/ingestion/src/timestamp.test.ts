import { computeTimestamp, parseTimestamp } from './timestamp';

const now = Date.parse('2024-01-01T00:00:06Z');
const base = { timestamp: undefined, offset: undefined, sentAt: undefined, nowMs: now, ignoreSentAt: false };

describe('computeTimestamp (PostHog capture rules)', () => {
  it('defaults to now', () => expect(computeTimestamp(base)).toBe(now));

  it('uses the client timestamp without sent_at', () => {
    expect(computeTimestamp({ ...base, timestamp: '2023-12-31T10:00:00Z' })).toBe(Date.parse('2023-12-31T10:00:00Z'));
  });

  it('corrects clock skew with sent_at (docs/data-model.md#timestamps)', () => {
    const ts = computeTimestamp({ ...base, timestamp: '2024-01-01T00:00:00Z', sentAt: '2024-01-01T00:00:05Z' });
    expect(new Date(ts).toISOString()).toBe('2024-01-01T00:00:01.000Z');
  });

  it('ignores sent_at when $ignore_sent_at is set', () => {
    const ts = computeTimestamp({ ...base, timestamp: '2024-01-01T00:00:00Z', sentAt: '2024-01-01T00:00:05Z', ignoreSentAt: true });
    expect(new Date(ts).toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  it('lets offset win over everything', () => {
    expect(computeTimestamp({ ...base, timestamp: '2020-01-01T00:00:00Z', sentAt: '2020-01-01T00:00:00Z', offset: 6000 })).toBe(now - 6000);
  });

  it('clamps more than 23 h in the future to now', () => {
    expect(computeTimestamp({ ...base, timestamp: '2024-01-02T00:00:00Z' })).toBe(now);
    const within = Date.parse('2024-01-01T22:00:00Z');
    expect(computeTimestamp({ ...base, timestamp: '2024-01-01T22:00:00Z' })).toBe(within);
  });

  it('falls back to now for unparseable timestamps', () => {
    expect(computeTimestamp({ ...base, timestamp: 'yesterday-ish' })).toBe(now);
  });
});

describe('parseTimestamp', () => {
  it('reads UTC texts ending in Z as Date.parse does, unreadable ones as null', () => {
    expect(parseTimestamp('2024-01-01T00:00:00.123Z')).toBe(Date.UTC(2024, 0, 1, 0, 0, 0, 123));
    expect(parseTimestamp('2024-01-01 10:00:00Z')).toBe(Date.parse('2024-01-01 10:00:00Z'));
    expect(parseTimestamp('2024-01-01T10:00Z')).toBe(Date.UTC(2024, 0, 1, 10));
    expect(parseTimestamp('not a dateZ')).toBeNull();
    expect(parseTimestamp('Z')).toBeNull();
  });
  it('normalises +HH zones', () => expect(parseTimestamp('2024-01-01T02:00:00+02')).toBe(Date.parse('2024-01-01T00:00:00Z')));
  it('reads epoch seconds and milliseconds', () => {
    expect(parseTimestamp(1704067200)).toBe(1704067200000);
    expect(parseTimestamp(1704067200000)).toBe(1704067200000);
  });
});
