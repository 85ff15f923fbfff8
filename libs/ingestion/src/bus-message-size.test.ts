import { exceedsBusMessageBytes, jsonLengthBound, MAX_EVENT_MESSAGE_BYTES } from './bus-message-size';
import { normalizeEvent } from './ingest-message';

const context = { token: 'phc_"quoted\\token', teamId: 1, nowMs: Date.UTC(2024, 0, 1), sentAt: null, ip: '10.0.0.1', historicalMigration: false };

function messageOf(event: Record<string, unknown>) {
  const result = normalizeEvent(event, context);
  if (!result.ok) throw new Error(result.reason);
  return result;
}

describe('bus message size', () => {
  it.each([
    ['plain text', 'hello'],
    ['quotes and backslashes', '"\\"\\\\"'],
    ['control characters', '\u0000\u0001\u001f\n\t'],
    ['lone surrogates', '\ud800x\udfff'],
    ['non-ASCII', 'é漢字😀'],
  ])('bounds the JSON length of a message from above: %s', (_name, text) => {
    const { message } = messageOf({ event: text, distinct_id: text, sent_at: text, properties: { [text]: text, n: -2.2250738585072014e-308 } });
    expect(jsonLengthBound(message)).toBeGreaterThanOrEqual(JSON.stringify(message).length);
    const flat = { s: text, n: -1.7976931348623157e308, b: false, z: null };
    expect(jsonLengthBound(flat)).toBeGreaterThanOrEqual(JSON.stringify(flat).length);
  });

  it('bounds nested objects and arrays too (the event is nested in its message)', () => {
    const nested = { nested: { a: 1, s: '"\u0000é', list: [1, 'x', { b: null }, []] }, empty: {} };
    expect(jsonLengthBound(nested)).toBeGreaterThanOrEqual(JSON.stringify(nested).length);
  });

  it('measures a message only when it may be over the cap, in UTF-8 bytes', () => {
    const small = messageOf({ event: 'e', distinct_id: 'u', properties: { a: 1 } }).message;
    expect(
      exceedsBusMessageBytes(small, () => {
        throw new Error('encoded');
      }),
    ).toBe(false);
    // 400,000 CJK characters: 400,000 UTF-16 units but 1.2 MB of UTF-8.
    const cjk = messageOf({ event: 'e', distinct_id: 'u', properties: { text: '漢'.repeat(400_000) } }).message;
    expect(JSON.stringify(cjk).length).toBeLessThan(MAX_EVENT_MESSAGE_BYTES);
    expect(exceedsBusMessageBytes(cjk)).toBe(true);
  });
});
