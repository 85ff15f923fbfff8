import { eventRowLine, type EventRow } from './events.table';

const row: EventRow = {
  uuid: '0190a6f0-0000-7000-8000-000000000001',
  event: 'quote " backslash \\ newline \n',
  properties: JSON.stringify({ a: 'x"y\\z\u0001 é 😀', n: 1.5, arr: [1, { b: null }] }),
  timestamp: '2024-01-01 00:00:00.123000',
  team_id: 7,
  distinct_id: 'tab\there',
  elements_chain: 'a:nth-child="1"',
  created_at: '2024-01-01 00:00:01.000000',
  person_id: '0190a6f0-0000-5000-8000-000000000002',
  person_properties: '{}',
  person_mode: 'propertyless',
};

describe('eventRowLine', () => {
  it('is one JSON line holding every column, the JSON-text columns as the objects they are', () => {
    const line = eventRowLine({
      ...row,
      person_created_at: '2023-12-31 00:00:00.000000',
      group3_properties: '{"g":1}',
      group3_created_at: '2023-01-01 00:00:00.000000',
    });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      ...row,
      properties: JSON.parse(row.properties),
      person_properties: {},
      person_created_at: '2023-12-31 00:00:00.000000',
      group3_properties: { g: 1 },
      group3_created_at: '2023-01-01 00:00:00.000000',
    });
  });

  it('leaves absent optional columns out, and sends JSON text that is not an object as a string', () => {
    const parsed = JSON.parse(eventRowLine({ ...row, properties: '[1]', person_properties: '' })) as Record<string, unknown>;
    expect(parsed['properties']).toBe('[1]');
    expect(parsed['person_properties']).toBe('');
    expect(Object.keys(parsed).filter((k) => k.startsWith('group') || k === 'person_created_at')).toEqual([]);
  });
});
