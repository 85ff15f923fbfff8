import { decodeIngestMessage, normalizeEvent } from '@sightline/ingestion';
import { IngestBusMessage } from './ingest-bus-message';

const context = { token: 'phc_"quoted\\token', teamId: 1, nowMs: Date.UTC(2024, 0, 1), sentAt: null, ip: '10.0.0.1', historicalMigration: false };

function messageOf(event: Record<string, unknown>) {
  const result = normalizeEvent(event, context);
  if (!result.ok) throw new Error(result.reason);
  return result;
}

describe('ingest bus message', () => {
  it('encodes the IngestMessage once, when its value is first read, in bus format 2', () => {
    const { key, message } = messageOf({ event: 'e', distinct_id: 'u', properties: { a: 1 } });
    const busMessage = new IngestBusMessage(key, message);
    expect(busMessage.decoded).toBe(message);
    expect(busMessage.value[0]).toBe(2);
    expect(decodeIngestMessage(busMessage.value)).toEqual(message);
    expect(busMessage.value).toBe(busMessage.value);
    expect(busMessage.key).toBe(key);
  });
});
