import { decodeEventsCursor, encodeEventsCursor } from './events-cursor';

describe('events cursor', () => {
  it('round-trips a position', () => {
    const cursor = { timestamp: '2026-03-02 10:00:00.123456', uuid: '0190c1d2-0000-7000-8000-000000000001' };
    expect(decodeEventsCursor(encodeEventsCursor(cursor))).toEqual(cursor);
  });

  it.each(['', 'not base64 json', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('["2026-03-02", "x"]').toString('base64url'), 'x'.repeat(300)])(
    'refuses %j',
    (text) => {
      expect(decodeEventsCursor(text)).toBeNull();
    },
  );
});
