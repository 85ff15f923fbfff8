import { personRowOf, personWithDistinctIdsOf } from './person-row';

describe('personRowOf', () => {
  const record = {
    id: '9007199254740993',
    uuid: '0192f3c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6',
    team_id: '7',
    properties: { plan: 'pro' },
    is_identified: true,
    version: '12',
    created_at: new Date('2024-03-01T10:00:00Z'),
  };

  it('maps the driver row: numbers from bigint text, the creation time as ISO text', () => {
    expect(personRowOf(record)).toEqual({
      id: Number('9007199254740993'),
      uuid: record.uuid,
      teamId: 7,
      properties: { plan: 'pro' },
      isIdentified: true,
      version: 12,
      createdAt: '2024-03-01T10:00:00.000Z',
    });
  });

  it('answers no properties as an empty object and takes a creation time given as text', () => {
    const row = personRowOf({ ...record, properties: null, created_at: '2024-03-01 10:00:00+00' });
    expect(row.properties).toEqual({});
    expect(row.createdAt).toBe('2024-03-01T10:00:00.000Z');
  });

  it('adds the distinct ids, none when the person has none', () => {
    expect(personWithDistinctIdsOf({ ...record, distinct_ids: ['a', 'b'] }).distinctIds).toEqual(['a', 'b']);
    expect(personWithDistinctIdsOf({ ...record, distinct_ids: null }).distinctIds).toEqual([]);
  });
});
