import type { IngestMessage } from '@sightline/ingestion';

/** A bus message as the gateway writes it, for the pipeline steps' unit tests. */
export function ingestMessage(overrides: Partial<IngestMessage> = {}, event: Record<string, unknown> = {}): IngestMessage {
  return {
    uuid: '0190a6f0-0000-7000-8000-000000000001',
    distinct_id: 'user-1',
    ip: '10.0.0.1',
    data: JSON.stringify({ event: 'signup', distinct_id: 'user-1', properties: { plan: 'pro' }, ...event }),
    now: '2024-01-10T15:00:00.000Z',
    sent_at: null,
    token: 'phc_test',
    team_id: 1,
    event: 'signup',
    timestamp: '2024-01-10T14:59:00.000Z',
    historical_migration: false,
    ...overrides,
  };
}
