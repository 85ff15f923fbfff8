import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { insertEvents, type EventRow } from './events.table';

const row: EventRow = {
  uuid: '0190a6f0-0000-7000-8000-000000000001',
  event: 'quote " backslash \\ newline \n',
  properties: { a: 'x"y\\z\u0001 é 😀', n: 1.5, arr: [1, { b: null }] },
  timestamp: '2024-01-01 00:00:00.123000',
  team_id: 7,
  distinct_id: 'tab\there',
  elements_chain: 'a:nth-child="1"',
  created_at: '2024-01-01 00:00:01.000000',
  person_id: '0190a6f0-0000-5000-8000-000000000002',
  person_properties: '{}',
  person_mode: 'propertyless',
};

/** A client whose exec records the statement, body and settings. */
function recordingClient() {
  const calls: { query: string; body: string; settings: Record<string, unknown> }[] = [];
  const client = {
    exec: async (params: { query: string; values: AsyncIterable<string>; clickhouse_settings: Record<string, unknown> }) => {
      let body = '';
      for await (const chunk of params.values) body += chunk;
      calls.push({ query: params.query, body, settings: params.clickhouse_settings });
      return { stream: Readable.from([]) };
    },
  };
  return { client: client as unknown as ClickHouseClient, calls };
}

describe('insertEvents', () => {
  it('sends the rows as one JSON array, objects in JSON-text columns as objects, with the deduplication token', async () => {
    const { client, calls } = recordingClient();
    const other: EventRow = { ...row, uuid: '0190a6f0-0000-7000-8000-000000000002', properties: '{"text":1}', group3_properties: '{"g":1}' };
    await insertEvents(client, [row, other], { deduplicationToken: 'token-1' });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.query).toBe('INSERT INTO events FORMAT JSONEachRow');
    expect(calls[0]!.settings).toEqual({ input_format_json_read_objects_as_strings: 1, insert_deduplication_token: 'token-1' });
    expect(JSON.parse(calls[0]!.body)).toEqual([row, other]);
  });

  it('sends nothing for no rows', async () => {
    const { client, calls } = recordingClient();
    await insertEvents(client, []);
    expect(calls).toEqual([]);
  });
});
