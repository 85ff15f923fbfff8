import type { IngestMessage } from '@sightline/ingestion';
import { normalizeStep } from './normalize.step';
import { ingestMessage } from '../testing/ingest-message';

/** The event as JSON text (bus format 0) or as the object itself (format 1, and in-process). */
const formats = {
  text: (message: IngestMessage) => message,
  object: (message: IngestMessage) => ({ ...message, data: JSON.parse(message.data as string) as Record<string, unknown> }),
};

describe('normalize step', () => {
  it('merges top-level $set and $set_once into the properties, the top level winning', () => {
    const result = normalizeStep(ingestMessage({}, { properties: { $set: { a: 1, b: 1 } }, $set: { b: 2 }, $set_once: { first: 'x' } }), 7);
    expect(result).toMatchObject({ kind: 'ok', value: { teamId: 7, properties: { $set: { a: 1, b: 2 }, $set_once: { first: 'x' } } } });
  });

  it('adds the capture address as $ip unless the event has one', () => {
    expect(normalizeStep(ingestMessage(), 1)).toMatchObject({ value: { properties: { $ip: '10.0.0.1' } } });
    expect(normalizeStep(ingestMessage({}, { properties: { $ip: '1.2.3.4' } }), 1)).toMatchObject({ value: { properties: { $ip: '1.2.3.4' } } });
  });

  it('does not take the address of a historical migration for the person’s: it is the importing machine', () => {
    const imported = normalizeStep(ingestMessage({ historical_migration: true }), 1);
    expect(imported).toMatchObject({ kind: 'ok', value: { historical: true } });
    expect((imported as { value: { properties: Record<string, unknown> } }).value.properties).not.toHaveProperty('$ip');
    const withSourceIp = normalizeStep(ingestMessage({ historical_migration: true }, { properties: { $ip: '203.0.113.9' } }), 1);
    expect(withSourceIp).toMatchObject({ value: { properties: { $ip: '203.0.113.9' } } });
  });

  it.each(Object.keys(formats))('strips NUL characters from every string, keys and ids included (event as %s)', (format) => {
    const as = formats[format as keyof typeof formats];
    const result = normalizeStep(as(ingestMessage({ distinct_id: 'u\u00001', event: 'sign\u0000up' }, { properties: { 'k\u0000': ['v\u0000'] } })), 1);
    expect(result).toMatchObject({ kind: 'ok', value: { distinctId: 'u1', event: 'signup', properties: { k: ['v'] } } });
  });

  it.each(Object.keys(formats))('replaces lone surrogates, which PostgreSQL refuses in jsonb, so the event is not dead-lettered (event as %s)', (format) => {
    const as = formats[format as keyof typeof formats];
    const result = normalizeStep(as(ingestMessage({ distinct_id: 'u\ud800' }, { properties: { $set: { name: 'a\udc00b', ['k\ud800']: 1 }, ok: '😀' } })), 1);
    expect(result).toMatchObject({ kind: 'ok', value: { distinctId: 'u\ufffd', properties: { $set: { name: 'a\ufffdb', 'k\ufffd': 1 }, ok: '😀' } } });
  });

  it('marks personless events and reads times and the elements chain', () => {
    const result = normalizeStep(ingestMessage({}, { properties: { $process_person_profile: false, $elements_chain: 'a:nth-child="1"' } }), 1);
    expect(result).toMatchObject({
      value: {
        processPerson: false,
        elementsChain: 'a:nth-child="1"',
        timestampMs: Date.parse('2024-01-10T14:59:00Z'),
        createdAtMs: Date.parse('2024-01-10T15:00:00Z'),
      },
    });
  });

  it('turns autocapture’s $elements list into the elements chain and drops the list', () => {
    const result = normalizeStep(ingestMessage({}, { properties: { $elements: [{ tag_name: 'button', $el_text: 'Buy', nth_child: 1, nth_of_type: 1 }] } }), 1);
    expect(result).toMatchObject({ kind: 'ok', value: { elementsChain: 'button:nth-child="1"nth-of-type="1"text="Buy"' } });
    expect((result as { value: { properties: Record<string, unknown> } }).value.properties).not.toHaveProperty('$elements');
  });

  it('prefers a sent $elements_chain to the list, and keeps neither in the properties (the chain has its column)', () => {
    const result = normalizeStep(ingestMessage({}, { properties: { $elements_chain: 'a:nth-child="1"', $elements: [{ tag_name: 'button' }], x: 1 } }), 1);
    expect(result).toMatchObject({ kind: 'ok', value: { elementsChain: 'a:nth-child="1"' } });
    expect((result as { value: { properties: Record<string, unknown> } }).value.properties).toEqual({ x: 1, $ip: '10.0.0.1' });
  });

  it('leaves an event object the in-process bus handed over unchanged, so a retried run normalises it the same way', () => {
    const message = formats.object(
      ingestMessage({}, { $set: { b: 2 }, properties: { $set: { a: 1 }, $elements: [{ tag_name: 'a', attr_class: ['x'] }], $elements_chain: '' } }),
    );
    const before = structuredClone(message);
    const first = normalizeStep(message, 1, true);
    expect(message).toEqual(before);
    expect(normalizeStep(message, 1, true)).toEqual(first);
    expect(first).toMatchObject({
      kind: 'ok',
      value: { elementsChain: expect.stringMatching(/^a:/), properties: { $set: { a: 1, b: 2 }, $ip: '10.0.0.1' } },
    });
  });

  it('gives the same event when told the bytes held no escape, for an event that needs no cleaning', () => {
    const message = ingestMessage({}, { $set: { b: 2 }, properties: { $set: { a: 1 }, $elements_chain: 'a:nth-child="1"', text: 'é 😀' } });
    expect(normalizeStep(structuredClone(message), 1, false, true)).toEqual(normalizeStep(structuredClone(message), 1));
  });

  it('dead-letters an event whose data is not a JSON object', () => {
    expect(normalizeStep(ingestMessage({ data: '[1]' }), 1)).toEqual({ kind: 'dead-letter', error: 'data is not a JSON object' });
    expect(normalizeStep(ingestMessage({ data: [1] as unknown as Record<string, unknown> }), 1)).toEqual({
      kind: 'dead-letter',
      error: 'data is not a JSON object',
    });
    expect(normalizeStep(ingestMessage({ data: '{' }), 1)).toMatchObject({ kind: 'dead-letter', error: expect.stringMatching(/^data is not JSON/) });
  });
});
