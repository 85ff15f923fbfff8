import { jsonObjectBytesText } from '@sightline/clickhouse';
import { encodeIngestMessage, normalizeEvent, type IngestMessage, type RawEvent } from '@sightline/ingestion';
import { normalizeStep, type PreparedEvent } from './normalize.step';
import { parseStep } from './parse.step';

/**
 * The worker reads every bus format to the same prepared event: format 2 (the properties as
 * JSON text, carried into the insert as sent) and formats 1 and 0 (already in topics).
 */
const formatOne = (m: IngestMessage) => Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(m))]);
const formatZero = (m: IngestMessage) => Buffer.from(JSON.stringify({ ...m, data: JSON.stringify(m.data) }));

function prepared(value: Buffer): PreparedEvent {
  const reading = parseStep(value);
  if (reading.kind !== 'ok') throw new Error(JSON.stringify(reading));
  const event = normalizeStep(reading.value.message, 1, false, reading.value.knownClean, reading.value);
  if (event.kind !== 'ok') throw new Error(JSON.stringify(event));
  return event.value;
}

const messageOf = (raw: RawEvent, ip: string | null = '10.0.0.1', historicalMigration = false) => {
  const r = normalizeEvent(raw, { token: 't', teamId: 1, nowMs: Date.UTC(2024, 0, 1), sentAt: null, ip, historicalMigration });
  if (!r.ok) throw new Error(r.reason);
  return r.message;
};

const cases: [string, RawEvent, string | null, boolean][] = [
  ['plain properties, $ip added', { event: 'e', distinct_id: 'u', properties: { a: 1, b: 'x' } }, '10.0.0.1', false],
  ['no properties at all', { event: 'e', distinct_id: 'u' }, '10.0.0.1', false],
  ['empty properties, no address', { event: 'e', distinct_id: 'u', properties: {} }, null, false],
  ['its own $ip', { event: 'e', distinct_id: 'u', properties: { $ip: '1.2.3.4' } }, '10.0.0.1', false],
  ['a historical migration', { event: 'e', distinct_id: 'u', properties: { a: [1] } }, '10.0.0.1', true],
  [
    'every JSON value kind',
    {
      event: 'e',
      distinct_id: 'u',
      properties: {
        s: 'x"\\\n\t/',
        n: -1.5e-300,
        big: 1e21,
        z: 0,
        t: true,
        f: false,
        nul: null,
        arr: [1, 'a', null, [], {}],
        obj: { deep: { er: [{}] } },
        10: 'integer key',
      },
    },
    '10.0.0.1',
    false,
  ],
  ['unicode', { event: 'événement 中文', distinct_id: 'ü😀', properties: { ключ: 'значение 😀', emoji: '\u{1f600}', '': '' } }, '10.0.0.1', false],
  [
    'a NUL in a value, a key, the id and the name',
    { event: 'sign\u0000up', distinct_id: 'u\u00001', properties: { 'k\u0000': ['v\u0000'] } },
    '10.0.0.1',
    false,
  ],
  ['lone surrogates', { event: 'e\ud800', distinct_id: 'u\udc00', properties: { $set: { name: 'a\udc00b' }, ['k\ud800']: 1, ok: '😀' } }, '10.0.0.1', false],
  [
    'top-level $set and $set_once',
    { event: 'e', distinct_id: 'u', properties: { $set: { a: 1 } }, $set: { b: 2 }, $set_once: { c: 3 } } as RawEvent,
    '10.0.0.1',
    false,
  ],
  ['a $set inside the properties only', { event: 'e', distinct_id: 'u', properties: { $set: { a: 1 }, $set_once: { c: 3 } } }, '10.0.0.1', false],
  ['an elements chain', { event: '$autocapture', distinct_id: 'u', properties: { $elements_chain: 'a:nth-child="1"', x: 1 } }, '10.0.0.1', false],
  ['elements', { event: '$autocapture', distinct_id: 'u', properties: { $elements: [{ tag_name: 'a', attr__href: '/x' }] } }, '10.0.0.1', false],
  ['$groups', { event: 'e', distinct_id: 'u', properties: { $groups: { company: 'acme' } } }, '10.0.0.1', false],
  [
    'a key named __proto__',
    { event: 'e', distinct_id: 'u', properties: JSON.parse('{"__proto__":{"x":1},"a":2}') as Record<string, unknown> },
    '10.0.0.1',
    false,
  ],
  [
    'huge properties',
    { event: 'e', distinct_id: 'u', properties: { blob: 'x'.repeat(600_000), list: Array.from({ length: 5000 }, (_, i) => ({ i })) } },
    '10.0.0.1',
    false,
  ],
];

describe('bus formats in the worker', () => {
  it.each(cases)('reads %s the same from formats 2, 1 and 0', (_, raw, ip, historical) => {
    const message = messageOf(raw, ip, historical);
    const current = prepared(encodeIngestMessage(message));
    const { propertiesBytes, ...rest } = current;
    for (const old of [formatOne(message), formatZero(message)]) {
      const { propertiesBytes: none, ...same } = prepared(old);
      expect(none).toBeNull();
      expect(same).toEqual(rest);
    }
    // Carried text is exactly what serialising the properties would write.
    if (propertiesBytes) expect(jsonObjectBytesText(propertiesBytes)).toBe(JSON.stringify(current.properties));
  });

  it('carries the properties text untouched when normalisation changes nothing but the address', () => {
    const carried = (raw: RawEvent, ip: string | null = '10.0.0.1') => {
      const { propertiesBytes } = prepared(encodeIngestMessage(messageOf(raw, ip)));
      return propertiesBytes ? jsonObjectBytesText(propertiesBytes) : null;
    };
    expect(carried({ event: 'e', distinct_id: 'u', properties: { a: 1, $process_person_profile: false } })).toBe(
      '{"a":1,"$process_person_profile":false,"$ip":"10.0.0.1"}',
    );
    expect(carried({ event: 'e', distinct_id: 'u', properties: {} })).toBe('{"$ip":"10.0.0.1"}');
    expect(carried({ event: 'e', distinct_id: 'u', properties: { a: 'ü' } }, null)).toBe('{"a":"ü"}');
    // Changed properties are serialised again by the insert.
    expect(carried({ event: 'e', distinct_id: 'u', properties: { a: 'x\u0000' } })).toBeNull();
    expect(carried({ event: 'e', distinct_id: 'u', $set: { b: 1 } } as RawEvent)).toBeNull();
    expect(carried({ event: 'e', distinct_id: 'u', properties: { $groups: { company: 'acme' } } })).toBeNull();
  });
});
