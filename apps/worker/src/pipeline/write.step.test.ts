import type { ClickHouseClient } from '@sightline/clickhouse';
import { normalizeStep, type PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';
import { StepError } from './step-result';
import { ingestMessage } from '../testing/ingest-message';
import { writeStep } from './write.step';

/** A ClickHouse client that records inserts (or fails them as given). */
function recordingClient(fail?: Error) {
  const inserts: { table: string; rows: unknown[]; settings?: Record<string, unknown> }[] = [];
  const client = {
    insert: async (params: { table: string; values: unknown[]; clickhouse_settings?: Record<string, unknown> }) => {
      if (fail) throw fail;
      inserts.push({ table: params.table, rows: params.values, settings: params.clickhouse_settings });
    },
  };
  return { client: client as unknown as ClickHouseClient, inserts };
}

const prepared = (uuid: string): PreparedEvent => {
  const result = normalizeStep(ingestMessage({ uuid }), 1);
  if (result.kind !== 'ok') throw new Error('fixture');
  return result.value;
};
const enrichment: Enrichment = {
  personId: '6931a681-6e90-500d-8294-14582dcc2e3f',
  personPropertiesJson: '{}',
  personCreatedAtMs: null,
  personMode: 'full',
  groups: [],
};

describe('write step', () => {
  it('inserts the run as rows with a deduplication token made from their uuids', async () => {
    const { client, inserts } = recordingClient();
    const events = [prepared('0190a6f0-0000-7000-8000-000000000001'), prepared('0190a6f0-0000-7000-8000-000000000002')];
    await writeStep(client, events, [enrichment, enrichment], {});
    const eventsInsert = inserts.find((i) => i.table.endsWith('events'))!;
    expect(eventsInsert.rows.map((r) => (r as { uuid: string }).uuid)).toEqual(events.map((e) => e.uuid));
    const again = recordingClient();
    await writeStep(again.client, events, [enrichment, enrichment], {});
    const token = eventsInsert.settings?.['insert_deduplication_token'];
    expect(typeof token).toBe('string');
    expect(again.inserts.find((i) => i.table.endsWith('events'))!.settings?.['insert_deduplication_token']).toBe(token);
  });

  it('reports an unreachable ClickHouse as an outage of the run', async () => {
    const { client } = recordingClient(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    const failure = await writeStep(client, [prepared('0190a6f0-0000-7000-8000-000000000003')], [enrichment], {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StepError);
    expect(failure).toMatchObject({ step: 'write', outage: true });
  });
});
