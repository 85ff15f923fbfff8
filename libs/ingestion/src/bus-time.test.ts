import { busTimeOfBytes, parseBusTime } from './bus-time';

describe('parseBusTime', () => {
  it('reads toISOString times exactly as Date.parse does, over years 0 to 9999', () => {
    const edges = [
      '0000-01-01T00:00:00.000Z',
      '0000-02-28T23:59:59.999Z',
      '0000-03-01T00:00:00.000Z',
      '1899-12-31T12:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2000-02-28T00:00:00.001Z',
      '2024-02-29T10:00:00.000Z',
      '2100-03-01T00:00:00.000Z',
      '9999-12-28T23:59:59.999Z',
      '9999-12-31T23:59:59.999Z',
    ];
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const min = Date.parse('0000-01-01T00:00:00.000Z');
    let seed = 1;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const times = [...edges, ...Array.from({ length: 20_000 }, () => new Date(min + Math.floor(random() * (max - min))).toISOString())];
    for (const text of times) expect([text, parseBusTime(text)]).toEqual([text, Date.parse(text)]);
  });

  it('answers what Date.parse answers for any other text, NaN included', () => {
    const others = [
      '2026-11-27T08:32:15Z',
      '2026-11-27T08:32:15.604+01:00',
      '2026-11-27',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-11-00T00:00:00.000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-11-27T24:00:00.000Z',
      '2026-11-27T08:60:00.000Z',
      '2026-11-27T08:00:60.000Z',
      '2026-1a-27T08:32:15.604Z',
      '2026-11-27 08:32:15.604Z',
      '+002026-11-27T08:32:15.604Z',
      'not a date at all, no...',
      '',
    ];
    for (const text of others) expect([text, parseBusTime(text)]).toEqual([text, Date.parse(text)]);
    expect(parseBusTime('2026-13-01T00:00:00.000Z')).toBeNaN();
  });

  it('reads the same times from ASCII bytes, and leaves every other text to parseBusTime', () => {
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const min = Date.parse('0000-01-01T00:00:00.000Z');
    const max = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const times = Array.from({ length: 5_000 }, () => new Date(min + Math.floor(random() * (max - min))).toISOString()).filter((t) => t.length === 24);
    for (const text of times) {
      // Inside a larger buffer, as a bus message holds it.
      const bytes = Buffer.from(`ab${text}cd`, 'latin1');
      const read = busTimeOfBytes(bytes, 2, 2 + text.length);
      expect([text, read ?? parseBusTime(text)]).toEqual([text, Date.parse(text)]);
      if (Number(text.slice(8, 10)) <= 28) expect([text, read]).toEqual([text, Date.parse(text)]);
    }
    const others = [
      '2026-11-27T08:32:15Z',
      '2026-13-01T00:00:00.000Z',
      '2026-11-29T00:00:00.000Z',
      '2026-1a-27T08:32:15.604Z',
      '2026-11-27T08:32:15.604+1',
      '',
    ];
    for (const text of others) expect([text, busTimeOfBytes(Buffer.from(text, 'latin1'), 0, text.length)]).toEqual([text, undefined]);
  });
});
