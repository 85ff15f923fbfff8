import { encodeIngestMessage, normalizeEvent } from '@sightline/ingestion';
import { checkIngestMessage, parseStep } from './parse.step';
import { ingestMessage } from '../testing/ingest-message';

describe('parse step', () => {
  it('passes a message the gateway wrote', () => {
    const message = ingestMessage();
    expect(parseStep(Buffer.from(JSON.stringify(message)))).toEqual({ kind: 'ok', value: expect.objectContaining({ message }) });
  });

  it('passes a message in bus format 2 (binary, the properties as text), 1 (a version byte, the event nested) and 0 (JSON, the event as text)', () => {
    const r = normalizeEvent(
      { event: 'e', distinct_id: 'u', properties: { a: 1 } },
      { token: 't', teamId: 1, nowMs: 0, sentAt: null, ip: null, historicalMigration: false },
    );
    if (!r.ok) throw new Error(r.reason);
    // Format 2 parses the properties only (the rest of the event is not read without a top-level $set).
    expect(parseStep(encodeIngestMessage(r.message))).toEqual({
      kind: 'ok',
      value: {
        message: { ...r.message, data: { properties: { a: 1 } } },
        bytes: expect.any(Buffer),
        propertiesStart: expect.any(Number),
        knownClean: true,
        namesKnownClean: false,
        // Read from the message's bytes once, for the check and for normalisation.
        timestampMs: 0,
        nowMs: 0,
      },
    });
    const formatOne = Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(r.message))]);
    expect(parseStep(formatOne)).toEqual({
      kind: 'ok',
      value: { message: r.message, bytes: null, propertiesStart: -1, knownClean: true, namesKnownClean: true, timestampMs: 0 },
    });
    const formatZero = { ...r.message, data: JSON.stringify(r.message.data) };
    expect(parseStep(Buffer.from(JSON.stringify(formatZero)))).toEqual({ kind: 'ok', value: expect.objectContaining({ message: formatZero }) });
    expect(parseStep(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(r.message))]))).toEqual({
      kind: 'dead-letter',
      error: 'value is not a bus message: unknown bus message format 3',
    });
    expect(parseStep(encodeIngestMessage({ ...r.message, timestamp: '2026-13-01T00:00:00.000Z' }))).toEqual({
      kind: 'dead-letter',
      error: 'timestamp is not a date',
    });
    const truncated = encodeIngestMessage(r.message).subarray(0, 40);
    expect(parseStep(truncated)).toEqual({ kind: 'dead-letter', error: 'value is not a bus message: bus message format 2 is truncated' });
  });

  it('dead-letters what can never become an event, saying why', () => {
    expect(parseStep(Buffer.from('{not json'))).toMatchObject({ kind: 'dead-letter', error: expect.stringMatching(/^value is not JSON/) });
    const { uuid: _uuid, ...withoutUuid } = ingestMessage();
    expect(parseStep(Buffer.from(JSON.stringify(withoutUuid)))).toEqual({ kind: 'dead-letter', error: 'field uuid is missing or not a string' });
    for (const field of ['uuid', 'distinct_id', 'data', 'now', 'token', 'event', 'timestamp'] as const) {
      expect(parseStep(Buffer.from(JSON.stringify({ ...ingestMessage(), [field]: 1 })))).toEqual({
        kind: 'dead-letter',
        error: `field ${field} is missing or not a string`,
      });
    }
    for (const notAnObject of ['null', '7', '"text"']) {
      expect(parseStep(Buffer.from(notAnObject))).toEqual({ kind: 'dead-letter', error: 'field uuid is missing or not a string' });
    }
    expect(parseStep(Buffer.from(JSON.stringify(ingestMessage({ timestamp: 'yesterday' }))))).toEqual({
      kind: 'dead-letter',
      error: 'timestamp is not a date',
    });
  });

  it('checks a message the in-process bus hands over undecoded as it checks a parsed one', () => {
    const { uuid: _uuid, ...withoutUuid } = ingestMessage();
    const messages: unknown[] = [
      ingestMessage(),
      withoutUuid,
      ingestMessage({ timestamp: 'yesterday' }),
      ingestMessage({ data: 1 as unknown as string }),
      null,
      'text',
    ];
    for (const message of messages) {
      const parsed = parseStep(Buffer.from(JSON.stringify(message)));
      expect(checkIngestMessage(message)).toEqual(parsed.kind === 'ok' ? { kind: 'ok', value: parsed.value.message } : parsed);
    }
    expect(checkIngestMessage(null)).toEqual({ kind: 'dead-letter', error: 'field uuid is missing or not a string' });
  });
});
