import { normalizeEvent } from '@sightline/ingestion';
import { IngestBusMessage, jsonLengthBound } from './ingest-bus-message';

const context = { token: 'phc_"quoted\\token', teamId: 1, nowMs: Date.UTC(2024, 0, 1), sentAt: null, ip: '10.0.0.1', historicalMigration: false };

function messageOf(event: Record<string, unknown>) {
  const result = normalizeEvent(event, context);
  if (!result.ok) throw new Error(result.reason);
  return result;
}

describe('ingest bus message', () => {
  it('encodes the IngestMessage once, when its value is first read, to the JSON of the message', () => {
    const { key, message } = messageOf({ event: 'e', distinct_id: 'u', properties: { a: 1 } });
    const busMessage = new IngestBusMessage(key, message);
    expect(busMessage.decoded).toBe(message);
    expect(busMessage.value).toBe(JSON.stringify(message));
    expect(busMessage.value).toBe(busMessage.value);
    expect(busMessage.key).toBe(key);
  });

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

  it('gives no bound for a nested value', () => {
    expect(jsonLengthBound({ nested: { a: 1 } })).toBe(Infinity);
  });
});
