import { PayloadError, readCapturePayload } from './capture-payload';

describe('readCapturePayload', () => {
  it('reads a single event with its token', () => {
    const p = readCapturePayload({ api_key: 'phc_a', event: 'e', distinct_id: 'u' });
    expect(p.events).toHaveLength(1);
    expect(p.token).toBe('phc_a');
    expect(p.historicalMigration).toBe(false);
  });

  it('reads a batch envelope with sent_at and historical_migration', () => {
    const p = readCapturePayload({ api_key: 'phc_a', historical_migration: true, sent_at: '2024-01-01T00:00:00Z', batch: [{ event: 'a' }, { event: 'b' }] });
    expect(p.events).toHaveLength(2);
    expect(p).toMatchObject({ token: 'phc_a', sentAt: '2024-01-01T00:00:00Z', historicalMigration: true });
  });

  it('reads a bare array, taking the token from token, $token or properties.token', () => {
    expect(readCapturePayload([{ event: 'a', token: 'phc_t' }]).token).toBe('phc_t');
    expect(readCapturePayload([{ event: 'a', $token: 'phc_d' }]).token).toBe('phc_d');
    expect(readCapturePayload([{ event: 'a', properties: { token: 'phc_p' } }]).token).toBe('phc_p');
  });

  it('rejects events that disagree on their token', () => {
    expect(() =>
      readCapturePayload([
        { event: 'a', token: 'phc_1' },
        { event: 'b', token: 'phc_2' },
      ]),
    ).toThrow(PayloadError);
  });

  it('rejects empty batches and non-objects', () => {
    expect(() => readCapturePayload({ api_key: 'x', batch: [] })).toThrow('request holds no event');
    expect(() => readCapturePayload([])).toThrow(PayloadError);
    expect(() => readCapturePayload('text')).toThrow(PayloadError);
    expect(() => readCapturePayload(42)).toThrow(PayloadError);
  });

  it('rejects a batch envelope whose batch is not a list, instead of reading it as one event', () => {
    for (const batch of [{ a: 1 }, { event: 'e', distinct_id: 'u' }, 'events', 1, null]) {
      expect(() => readCapturePayload({ api_key: 'x', batch })).toThrow(new PayloadError('no_events', 'batch must be a list of events'));
    }
    // A single event that happens to carry a `batch` property is still a single event.
    expect(readCapturePayload({ api_key: 'x', event: 'e', batch: 'mine' }).events).toEqual([{ api_key: 'x', event: 'e', batch: 'mine' }]);
  });
});
