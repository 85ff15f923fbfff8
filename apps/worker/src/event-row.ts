import { toClickHouseDateTime, type EventRow } from '@sightline/clickhouse';
import { personUuidFor, type IngestMessage } from '@sightline/ingestion';

export class InvalidMessageError extends Error {}

/** Parses a bus message; anything that is not an IngestMessage can never succeed (dead letter). */
export function parseIngestMessage(value: Buffer): IngestMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (error) {
    throw new InvalidMessageError(`value is not JSON: ${(error as Error).message}`);
  }
  const m = parsed as Partial<IngestMessage>;
  for (const field of ['uuid', 'distinct_id', 'data', 'now', 'token', 'event', 'timestamp'] as const) {
    if (typeof m?.[field] !== 'string') throw new InvalidMessageError(`field ${field} is missing or not a string`);
  }
  if (Number.isNaN(Date.parse(m.timestamp!))) throw new InvalidMessageError('timestamp is not a date');
  return m as IngestMessage;
}

/**
 * The events row for a message. Person processing (a later pipeline step) will fill the
 * person columns; until then the person id is the deterministic one for the distinct id.
 */
export function toEventRow(message: IngestMessage, teamId: number): EventRow {
  let properties: Record<string, unknown> = {};
  try {
    const data = JSON.parse(message.data) as { properties?: Record<string, unknown> };
    if (data && typeof data.properties === 'object' && data.properties !== null) properties = data.properties;
  } catch {
    throw new InvalidMessageError('data is not JSON');
  }
  if (message.ip && properties['$ip'] === undefined) properties = { ...properties, $ip: message.ip };
  return {
    uuid: message.uuid,
    event: message.event,
    properties: JSON.stringify(properties),
    timestamp: toClickHouseDateTime(Date.parse(message.timestamp)),
    team_id: teamId,
    distinct_id: message.distinct_id,
    elements_chain: '',
    created_at: toClickHouseDateTime(Date.parse(message.now)),
    person_id: personUuidFor(teamId, message.distinct_id),
    person_properties: '',
    person_mode: properties['$process_person_profile'] === false ? 'propertyless' : 'full',
  };
}
