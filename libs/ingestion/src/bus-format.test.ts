import { hasLoneSurrogate } from '@sightline/json-input';
import { decodeIngestMessage, encodeIngestMessage, holdsNoUnicodeEscape } from './bus-format';
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

/** Both formats' bytes of a message: format 1, and format 0 (the JSON alone, `data` as JSON text). */
const bothFormats = (m: IngestMessage): Buffer[] => [encodeIngestMessage(m), Buffer.from(JSON.stringify({ ...m, data: JSON.stringify(m.data) }))];

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
