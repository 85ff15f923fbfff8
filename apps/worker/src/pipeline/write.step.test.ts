import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { RowBinaryWriter, writeEventValues, type ClickHouseClient } from '@sightline/clickhouse';
import { WrittenCopies } from '@sightline/persons';
import { normalizeStep, type PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';
import { StepError } from './step-result';
import { ingestMessage } from '../testing/ingest-message';
import { deduplicationTokenOf, writeStep } from './write.step';
import { toEventValues } from './event-row';

/**
 * A ClickHouse client that records inserts through exec (JSON bodies as rows, a RowBinary
 * body as its bytes), or fails them as given.
 */
function recordingClient(fail?: Error) {
  const inserts: { table: string; rows: unknown[]; body: Buffer; settings?: Record<string, unknown> }[] = [];
  const client = {
    exec: async (params: { query: string; values: AsyncIterable<string | Buffer>; clickhouse_settings?: Record<string, unknown> }) => {
      if (fail) throw fail;
      const chunks: Buffer[] = [];
      for await (const chunk of params.values) chunks.push(Buffer.from(chunk));
      const body = Buffer.concat(chunks);
      const [, table, format] = /^INSERT INTO (\w+) (?:\([\w, ]+\) )?FORMAT (JSONEachRow|RowBinary)$/.exec(params.query)!;
      const rows = format === 'JSONEachRow' ? (JSON.parse(body.toString('utf8')) as unknown[]) : [];
      inserts.push({ table: table!, rows, body, settings: params.clickhouse_settings });
      return { stream: Readable.from([]) };
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
    const expected = new RowBinaryWriter();
    for (const event of events) writeEventValues(expected, toEventValues(event, enrichment));
    expect(eventsInsert.body.toString('hex')).toBe(expected.bytes().toString('hex'));
    const again = recordingClient();
    await writeStep(again.client, events, [enrichment, enrichment], {});
    const token = eventsInsert.settings?.['insert_deduplication_token'];
    expect(typeof token).toBe('string');
    expect(again.inserts.find((i) => i.table.endsWith('events'))!.settings?.['insert_deduplication_token']).toBe(token);
  });

  it('makes another deduplication token for the same uuids in another project', async () => {
    const uuids = ['0190a6f0-0000-7000-8000-000000000011', '0190a6f0-0000-7000-8000-000000000012'];
    const tokenFor = async (teamId: number) => {
      const { client, inserts } = recordingClient();
      const events = uuids.map((uuid) => ({ ...prepared(uuid), teamId }));
      await writeStep(client, events, [enrichment, enrichment], {});
      return inserts.find((i) => i.table.endsWith('events'))!.settings?.['insert_deduplication_token'];
    };
    const [first, second, firstAgain] = [await tokenFor(1), await tokenFor(2), await tokenFor(1)];
    expect(first).toBe(firstAgain);
    expect(second).not.toBe(first);
  });

  it('leaves out person and distinct-id copies this process already wrote at the same version, once their insert succeeded', async () => {
    const person = {
      id: enrichment.personId,
      team_id: 1,
      created_at: '2024-01-01T00:00:00.000Z',
      properties: '{}',
      is_identified: 0 as const,
      is_deleted: 0 as const,
      version: 3,
    };
    const distinctId = { team_id: 1, distinct_id: 'u1', person_id: enrichment.personId, is_deleted: 0 as const, version: 0 };
    const written = new WrittenCopies();
    const events = [prepared('0190a6f0-0000-7000-8000-000000000004')];
    // The copies go as RowBinary (not read back here); an insert is made only for rows to write.
    const tables = (inserts: { table: string }[]) => inserts.filter((i) => !i.table.endsWith('events')).map((i) => i.table);

    // A failed write remembers nothing: the retry writes every copy.
    const down = recordingClient(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await expect(writeStep(down.client, events, [enrichment], { persons: [person], distinctIds: [distinctId] }, written)).rejects.toBeInstanceOf(StepError);
    const first = recordingClient();
    await writeStep(first.client, events, [enrichment], { persons: [person], distinctIds: [distinctId] }, written);
    expect(tables(first.inserts)).toEqual(['person', 'person_distinct_id2']);

    const again = recordingClient();
    await writeStep(again.client, events, [enrichment], { persons: [person], distinctIds: [distinctId] }, written);
    expect(tables(again.inserts)).toEqual([]);

    const changed = recordingClient();
    await writeStep(changed.client, events, [enrichment], { persons: [{ ...person, version: 4 }], distinctIds: [{ ...distinctId, version: 1 }] }, written);
    expect(tables(changed.inserts)).toEqual(['person', 'person_distinct_id2']);

    // Another process's memory is empty (a restart after kill -9): it writes them again.
    const restarted = recordingClient();
    await writeStep(restarted.client, events, [enrichment], { persons: [person], distinctIds: [distinctId] }, new WrittenCopies());
    expect(tables(restarted.inserts)).toEqual(['person', 'person_distinct_id2']);
  });

  it('reports an unreachable ClickHouse as an outage of the run', async () => {
    const { client } = recordingClient(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    const failure = await writeStep(client, [prepared('0190a6f0-0000-7000-8000-000000000003')], [enrichment], {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StepError);
    expect(failure).toMatchObject({ step: 'write', outage: true });
  });
});

describe('deduplicationTokenOf', () => {
  it('is the SHA-1 of "team:uuid," per event, so a run retried across an upgrade keeps its token', () => {
    const events = [
      { teamId: 1, uuid: '0190a1b2-0000-7000-8000-000000000001' },
      { teamId: 2, uuid: '0190a1b2-0000-7000-8000-000000000002' },
    ];
    const expected = createHash('sha1').update('1:0190a1b2-0000-7000-8000-000000000001,').update('2:0190a1b2-0000-7000-8000-000000000002,').digest('hex');
    expect(deduplicationTokenOf(events)).toBe(expected);
    expect(deduplicationTokenOf([])).toBe(createHash('sha1').digest('hex'));
  });
});
