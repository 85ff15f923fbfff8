import { v5 as uuidv5, validate, version } from 'uuid';
import { normalizeEvent, PERSON_UUID_NAMESPACE, personUuidFor } from './ingest-message';

const ctx = { token: 'phc_x', teamId: 1, nowMs: Date.parse('2024-01-01T00:00:06Z'), sentAt: null, ip: '1.2.3.4', historicalMigration: false };

describe('normalizeEvent', () => {
  it('drops events without a name or distinct id, with the reason', () => {
    expect(normalizeEvent({ distinct_id: 'u' }, ctx)).toEqual({ ok: false, reason: 'missing_event_name' });
    expect(normalizeEvent({ event: '', distinct_id: 'u' }, ctx)).toEqual({ ok: false, reason: 'missing_event_name' });
    expect(normalizeEvent({ event: 'e' }, ctx)).toEqual({ ok: false, reason: 'missing_distinct_id' });
    expect(normalizeEvent({ event: 'e', distinct_id: null }, ctx)).toEqual({ ok: false, reason: 'missing_distinct_id' });
    expect(normalizeEvent({ event: 'e', distinct_id: '' }, ctx)).toEqual({ ok: false, reason: 'empty_distinct_id' });
    expect(normalizeEvent({ event: 'e', distinct_id: '   ' }, ctx)).toEqual({ ok: false, reason: 'empty_distinct_id' });
  });

  it('builds the bus message keyed token:distinct_id', () => {
    const r = normalizeEvent(
      { event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', properties: { a: 1 } },
      { ...ctx, sentAt: '2024-01-01T00:00:05Z' },
    );
    if (!r.ok) throw new Error('dropped');
    expect(r.key).toBe('phc_x:u');
    expect(r.message).toMatchObject({
      distinct_id: 'u',
      ip: '1.2.3.4',
      token: 'phc_x',
      team_id: 1,
      event: 'e',
      timestamp: '2024-01-01T00:00:01.000Z',
      historical_migration: false,
    });
    expect(r.message.data).toMatchObject({ event: 'e', properties: { a: 1 }, uuid: r.message.uuid });
  });

  it('writes each request’s own time, requests interleaved, and an event without a timestamp at it', () => {
    const ctxAt = (nowMs: number) => ({ token: 't', teamId: 1, nowMs, sentAt: null, ip: null, historicalMigration: false });
    for (const nowMs of [Date.UTC(2024, 0, 1), Date.UTC(2025, 5, 6, 7, 8, 9, 10), Date.UTC(2024, 0, 1)]) {
      const r = normalizeEvent({ event: 'e', distinct_id: 'u' }, ctxAt(nowMs));
      const dated = normalizeEvent({ event: 'e', distinct_id: 'u', timestamp: '2023-03-04T05:06:07.089Z' }, ctxAt(nowMs));
      if (!r.ok || !dated.ok) throw new Error('dropped');
      expect(r.message.now).toBe(new Date(nowMs).toISOString());
      expect(r.message.timestamp).toBe(new Date(nowMs).toISOString());
      expect(dated.message.now).toBe(new Date(nowMs).toISOString());
      expect(dated.message.timestamp).toBe('2023-03-04T05:06:07.089Z');
    }
  });

  it("copies the event in the client's key order, new keys last, a `__proto__` key kept as data", () => {
    const raw = JSON.parse('{"properties":{"a":1},"event":"e","__proto__":{"polluted":true},"distinct_id":42,"x":[1]}') as Record<string, unknown>;
    const r = normalizeEvent(raw, ctx);
    if (!r.ok) throw new Error('dropped');
    const data = r.message.data as Record<string, unknown>;
    expect(Object.keys(data)).toEqual(['properties', 'event', '__proto__', 'distinct_id', 'x', 'uuid']);
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(data['polluted']).toBeUndefined();
    expect(JSON.parse(JSON.stringify(data))).toEqual({ ...raw, distinct_id: '42', uuid: r.message.uuid });
    // The input is left as it was.
    expect(raw['uuid']).toBeUndefined();
    expect(raw['distinct_id']).toBe(42);
    const plain = normalizeEvent({ event: 'e', distinct_id: 'u', timestamp: 1 }, ctx);
    expect(plain.ok && Object.keys(plain.message.data)).toEqual(['event', 'distinct_id', 'timestamp', 'uuid', 'properties']);
  });

  it('gives every event its own time of arrival when requests arrive at different times', () => {
    const first = normalizeEvent({ event: 'e', distinct_id: 'u' }, ctx);
    const later = normalizeEvent({ event: 'e', distinct_id: 'u' }, { ...ctx, nowMs: ctx.nowMs + 1500 });
    const again = normalizeEvent({ event: 'e', distinct_id: 'u' }, ctx);
    expect([first.ok && first.message.now, later.ok && later.message.now, again.ok && again.message.now]).toEqual([
      '2024-01-01T00:00:06.000Z',
      '2024-01-01T00:00:07.500Z',
      '2024-01-01T00:00:06.000Z',
    ]);
  });

  it('keeps a valid client uuid and assigns a UUIDv7 otherwise', () => {
    const kept = normalizeEvent({ event: 'e', distinct_id: 'u', uuid: '018CC2F3-0000-7000-8000-000000000001' }, ctx);
    expect(kept.ok && kept.message.uuid).toBe('018cc2f3-0000-7000-8000-000000000001');
    const assigned = normalizeEvent({ event: 'e', distinct_id: 'u', uuid: 'not-a-uuid' }, ctx);
    if (!assigned.ok) throw new Error('dropped');
    expect(validate(assigned.message.uuid) && version(assigned.message.uuid)).toBe(7);
  });

  it('stringifies non-string distinct ids, reads properties.distinct_id, and truncates to 200', () => {
    const n = normalizeEvent({ event: 'e', distinct_id: 42 }, ctx);
    expect(n.ok && n.message.distinct_id).toBe('42');
    const o = normalizeEvent({ event: 'e', distinct_id: { number: 3, string: 'a' } }, ctx);
    expect(o.ok && o.message.distinct_id).toBe('{"number":3,"string":"a"}');
    const p = normalizeEvent({ event: 'e', properties: { distinct_id: 'from-props' } }, ctx);
    expect(p.ok && p.message.distinct_id).toBe('from-props');
    const long = normalizeEvent({ event: 'e', distinct_id: 'x'.repeat(300) }, ctx);
    expect(long.ok && long.message.distinct_id.length).toBe(200);
  });
});

describe('personUuidFor', () => {
  it('is the deterministic UUIDv5 of "team:distinct_id"', () => {
    const id = personUuidFor(2, 'user-1');
    expect(version(id)).toBe(5);
    expect(personUuidFor(2, 'user-1')).toBe(id);
    expect(personUuidFor(3, 'user-1')).not.toBe(id);
  });

  it('equals the UUIDv5 of the name as text under the namespace as text (any characters)', () => {
    const long = 'x'.repeat(300) + 'é'.repeat(300);
    for (const distinctId of ['user-1', 'ünïcödé 😀', '', long, 'short again', ...Array.from({ length: 64 }, (_, i) => `id-${i}`)]) {
      expect(personUuidFor(7, distinctId)).toBe(uuidv5(`7:${distinctId}`, PERSON_UUID_NAMESPACE));
    }
    expect(personUuidFor(1, 'a')).toBe('84877a1c-03f2-5cfd-8633-cf112f0d565a');
  });
});

describe('events nested too deeply', () => {
  it('are dropped with their own reason rather than failing the request', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(normalizeEvent({ event: 'e', distinct_id: 'u', properties: { deep } }, ctx)).toEqual({ ok: false, reason: 'nested_too_deeply' });
    let fine: unknown = 1;
    for (let i = 0; i < 60; i++) fine = { level: fine };
    expect(normalizeEvent({ event: 'e', distinct_id: 'u', properties: { fine } }, ctx)).toMatchObject({ ok: true });
  });
});
