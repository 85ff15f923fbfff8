import { hasLoneSurrogate } from '@sightline/json-input';
import {
  busValueText,
  decodeBusValue,
  decodeIngestMessage,
  encodeIngestMessage,
  FORMAT2_FLAGS,
  FORMAT2_HEADER_BYTES,
  holdsNoUnicodeEscape,
  newFormat2Layout,
  readFormat2Layout,
} from './bus-format';
import { parseBusTime } from './bus-time';
import type { IngestMessage } from './ingest-message';

const message = (properties: Record<string, unknown>, distinctId = 'user'): IngestMessage => ({
  uuid: '0190a6f0-0000-7000-8000-000000000001',
  distinct_id: distinctId,
  ip: null,
  data: { event: 'e', distinct_id: distinctId, properties },
  now: '2024-01-01T00:00:00.000Z',
  sent_at: null,
  token: 'phc_x',
  team_id: 1,
  event: 'e',
  timestamp: '2024-01-01T00:00:00.000Z',
  historical_migration: false,
});

const formatOne = (m: IngestMessage) => Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(m))]);
/** Every format's bytes of a message: 2 (written now), 1, and 0 (the JSON alone, `data` as JSON text). */
const bothFormats = (m: IngestMessage): Buffer[] => [encodeIngestMessage(m), formatOne(m), Buffer.from(JSON.stringify({ ...m, data: JSON.stringify(m.data) }))];

function uncleanStrings(value: unknown): string[] {
  const unclean = (text: string) => text.includes('\u0000') || hasLoneSurrogate(text);
  if (typeof value === 'string') return unclean(value) ? [value] : [];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [...(unclean(k) ? [k] : []), ...uncleanStrings(v)]);
}

describe('holdsNoUnicodeEscape', () => {
  it('is true for the bytes of a message with plain text, quotes, backslashes and non-ASCII', () => {
    for (const value of bothFormats(message({ a: 'x"y\\z', url: 'https://e.com/?q=1', é: '中文 😀', n: [1, null] }))) {
      expect(holdsNoUnicodeEscape(value)).toBe(true);
    }
  });

  it.each([
    ['a NUL in a value', message({ a: 'x\u0000y' })],
    ['a NUL in a key', message({ ['k\u0000']: 1 })],
    ['a lone surrogate in a value', message({ a: 'x\ud800' })],
    ['a lone surrogate in a key', message({ ['\udc00k']: 1 })],
    ['a NUL in the distinct id', message({}, 'u\u0000')],
    ['another control character', message({ a: '\u0001' })],
  ])('is false for %s, in either format', (_, m) => {
    for (const value of bothFormats(m)) expect(holdsNoUnicodeEscape(value)).toBe(false);
  });

  it('is never true of bytes whose message holds a NUL or a lone surrogate (random text)', () => {
    // Code units drawn mostly from the troublesome ranges: NUL, controls, surrogates, ASCII.
    const pool = [0, 1, 0x1f, 0x22, 0x5c, 0x75, 0x41, 0xe9, 0x4e2d, 0xd800, 0xdbff, 0xdc00, 0xdfff];
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const text = () => String.fromCharCode(...Array.from({ length: 1 + Math.floor(random() * 6) }, () => pool[Math.floor(random() * pool.length)]!));
    let sawClean = 0;
    for (let i = 0; i < 2000; i++) {
      const m = message({ [text()]: text(), nested: { [text()]: [text()] } }, text());
      for (const value of bothFormats(m)) {
        if (!holdsNoUnicodeEscape(value)) continue;
        sawClean++;
        const decoded = decodeIngestMessage(value) as IngestMessage;
        const data = typeof decoded.data === 'string' ? (JSON.parse(decoded.data) as unknown) : decoded.data;
        expect(uncleanStrings({ ...decoded, data })).toEqual([]);
      }
    }
    expect(sawClean).toBeGreaterThan(0);
  });
});

describe('bus format 2', () => {
  const everyKind = {
    s: 'x"y\\z\n',
    n: -1.5e-300,
    big: 1e21,
    t: true,
    f: false,
    nul: null,
    arr: [1, 'a', null, [], {}],
    obj: { deep: [{ é: '中文 😀' }] },
    10: 'integer key',
    '': '',
  };
  const cases: [string, IngestMessage][] = [
    ['every JSON value kind', message(everyKind)],
    ['unicode in the plain strings', { ...message({ a: 1 }, 'ü😀中'), event: 'événement', token: 'phc_é' }],
    ['a NUL in the distinct id and a value', message({ a: 'x\u0000' }, 'u\u0000')],
    ['absent ip, sent_at and team; a historical migration', { ...message({}), ip: null, sent_at: null, team_id: null, historical_migration: true }],
    ['ip, sent_at and a large team id', { ...message({}), ip: '2001:db8::1', sent_at: '2024-01-01T00:00:01.000Z', team_id: 2_000_000_000 }],
    [
      'top-level $set and $set_once',
      { ...message({ $set: { a: 1 } }), data: { event: 'e', properties: { $set: { a: 1 } }, $set: { b: 2 }, $set_once: { c: 3 } } },
    ],
    ['huge properties', message({ blob: 'x'.repeat(900_000), list: Array.from({ length: 1000 }, (_, i) => ({ i })) })],
  ];

  it.each(cases)('decodes %s to the message encoded', (_, m) => {
    const value = encodeIngestMessage(m);
    expect(value[0]).toBe(2);
    expect(decodeIngestMessage(value)).toEqual(m);
    // The worker's reading: the properties' text as JSON.stringify wrote it, to the value's end.
    const reading = decodeBusValue(value);
    expect(reading.format).toBe(2);
    expect(value.toString('utf8', reading.propertiesStart)).toBe(JSON.stringify((m.data as Record<string, unknown>)['properties']));
    expect((reading.message as IngestMessage).distinct_id).toBe(m.distinct_id);
  });

  it("reads the timestamp and now once, as parseBusTime reads their text (formats 0 and 1 leave them to the worker's check)", () => {
    const times = ['2026-11-27T08:32:15.604Z', '2024-02-29T23:59:59.999Z', '2026-11-27T08:32:15Z', '2026-11-27T08:32:15.604+01:00', 'not a date', 'é 2026'];
    for (const timestamp of times)
      for (const now of [times[0]!, timestamp]) {
        const m = { ...message({ a: 1 }), timestamp, now };
        const reading = decodeBusValue(encodeIngestMessage(m));
        expect([timestamp, now, reading.timestampMs, reading.nowMs]).toEqual([timestamp, now, parseBusTime(timestamp), parseBusTime(now)]);
        for (const value of bothFormats(m).slice(1)) expect([decodeBusValue(value).timestampMs, decodeBusValue(value).nowMs]).toEqual([null, null]);
      }
  });

  it('leaves the message it encodes as it was, its keys in their order', () => {
    const m = { ...message({ a: 1 }), data: { properties: { a: 1 }, event: 'e', $set: { b: 2 } } };
    const before = JSON.stringify(m);
    encodeIngestMessage(m);
    expect(JSON.stringify(m)).toBe(before);
  });

  it('hands the worker the rest of the event only for a top-level $set or $set_once', () => {
    expect((decodeBusValue(encodeIngestMessage(message({ a: 1 }))).message as IngestMessage).data).toEqual({ properties: { a: 1 } });
    const withSet = { ...message({ a: 1 }), data: { event: 'e', properties: { a: 1 }, $set_once: { c: 3 } } };
    expect((decodeBusValue(encodeIngestMessage(withSet)).message as IngestMessage).data).toEqual(withSet.data);
  });

  it('a lone surrogate in a plain string becomes U+FFFD (what the worker makes of it in any format)', () => {
    const decoded = decodeIngestMessage(encodeIngestMessage(message({}, 'u\ud800'))) as IngestMessage;
    expect(decoded.distinct_id).toBe('u\ufffd');
  });

  it('says whether its JSON texts may hold a NUL or a lone surrogate, not its plain strings', () => {
    expect(decodeBusValue(encodeIngestMessage(message({ a: 'x' }))).jsonClean).toBe(true);
    expect(decodeBusValue(encodeIngestMessage(message({ a: 'x\u0000' }))).jsonClean).toBe(false);
    expect(decodeBusValue(encodeIngestMessage(message({ ['k\ud800']: 1 }))).jsonClean).toBe(false);
  });

  it('refuses a value whose lengths run past its end, and versions to come', () => {
    const value = encodeIngestMessage(message({ a: 1 }));
    for (const cut of [1, 10, 45, value.length - 30]) expect(() => decodeBusValue(value.subarray(0, cut))).toThrow('bus message format 2 is truncated');
    expect(() => decodeBusValue(Buffer.from([3, 0x7b, 0x7d]))).toThrow('unknown bus message format 3');
  });

  it('still decodes formats 1 and 0, with no properties text to carry', () => {
    const m = message({ a: 1 });
    for (const value of bothFormats(m).slice(1)) {
      expect(decodeIngestMessage(value)).toEqual(value[0] === 1 ? m : { ...m, data: JSON.stringify(m.data) });
      expect(decodeBusValue(value).propertiesStart).toBe(-1);
    }
  });

  it('is archived as JSON people can read: format 2 as the message in JSON, the others as their text', () => {
    const m = message(everyKind);
    expect(JSON.parse(busValueText(encodeIngestMessage(m)))).toEqual(m);
    expect(busValueText(formatOne(m))).toBe(`\u0001${JSON.stringify(m)}`);
  });

  it("reads format 2's layout: each field's end, the flags and the team id", () => {
    const m: IngestMessage = { ...message({ a: 1 }, 'ü-user'), ip: '10.0.0.1', sent_at: '2024-01-01T00:00:01.000Z', team_id: 42, historical_migration: true };
    const value = encodeIngestMessage(m);
    const layout = newFormat2Layout();
    readFormat2Layout(value, layout);
    const fields = [m.uuid, m.distinct_id, m.ip!, m.now, m.sent_at!, m.token, m.event, m.timestamp];
    const ends = [layout.uuidEnd, layout.distinctIdEnd, layout.ipEnd, layout.nowEnd, layout.sentAtEnd, layout.tokenEnd, layout.eventEnd, layout.timestampEnd];
    let start = FORMAT2_HEADER_BYTES;
    fields.forEach((field, i) => {
      expect(value.toString('utf8', start, ends[i])).toBe(field);
      start = ends[i]!;
    });
    expect(JSON.parse(value.toString('utf8', layout.propertiesStart))).toEqual({ a: 1 });
    expect(layout.teamId).toBe(42);
    const { HISTORICAL, HAS_TEAM, HAS_IP, HAS_SENT_AT, ASCII_STRINGS, TOP_LEVEL_UPDATES } = FORMAT2_FLAGS;
    expect(layout.flags).toBe(HISTORICAL | HAS_TEAM | HAS_IP | HAS_SENT_AT);
    readFormat2Layout(encodeIngestMessage({ ...message({}), data: { $set: { a: 1 } } }), layout);
    expect(layout.flags).toBe(HAS_TEAM | ASCII_STRINGS | TOP_LEVEL_UPDATES);
    for (const cut of [1, 10, 45, value.length - 30])
      expect(() => readFormat2Layout(value.subarray(0, cut), layout)).toThrow('bus message format 2 is truncated');
  });
});
