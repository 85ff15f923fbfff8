import { personChangeCodec, type PersonChange } from './decide-person-cache';
import { personChangesOf } from './person-copies';

describe('personChangeCodec', () => {
  it('carries a targeted change through Redis as it was sent', () => {
    const change: PersonChange = { teamId: 7, persons: ['0190a3c2-0000-5000-8000-000000000001'], distinctIds: ['user-1', 'anon-1'], groups: [[0, 'acme']] };
    const text = personChangeCodec.encode(change);
    expect(JSON.parse(text)).toEqual(change);
    expect(personChangeCodec.decode(text)).toEqual(change);
  });

  it('sends a whole-project change, or one naming more than 5,000 ids, as the bare project id', () => {
    expect(personChangeCodec.encode({ teamId: 7 })).toBe('7');
    const distinctIds = Array.from({ length: 5001 }, (_, i) => `user-${i}`);
    expect(personChangeCodec.encode({ teamId: 7, persons: [], distinctIds, groups: [] })).toBe('7');
    expect(personChangeCodec.encode({ teamId: 7, persons: [], distinctIds: distinctIds.slice(1), groups: [] })).not.toBe('7');
    expect(personChangeCodec.decode('7')).toEqual({ teamId: 7 });
  });

  it('reads anything else as "anything may have changed"', () => {
    for (const text of [
      '',
      'x',
      '{"teamId":"7"}',
      '{"teamId":7,"persons":[1],"distinctIds":[],"groups":[]}',
      '{"teamId":7,"persons":[],"distinctIds":[],"groups":[["0","a"]]}',
      '{"teamId":7,"persons":[]}',
    ]) {
      expect(personChangeCodec.decode(text)).toBeNull();
    }
  });
});

describe('personChangesOf', () => {
  it('names, per project, the persons copied, the persons distinct ids joined, the distinct ids and the groups copied', () => {
    const person = (team_id: number, id: string) => ({
      id,
      team_id,
      created_at: '',
      properties: '{}',
      is_identified: 0 as const,
      is_deleted: 0 as const,
      version: 1,
    });
    const changes = personChangesOf({
      persons: [person(1, 'p-a'), person(1, 'p-b'), person(2, 'p-c')],
      distinctIds: [
        { team_id: 1, distinct_id: 'anon', person_id: 'p-a', is_deleted: 0, version: 1 },
        { team_id: 1, distinct_id: 'late', person_id: 'p-d', is_deleted: 0, version: 0 },
      ],
      groups: [
        { team_id: 2, group_type_index: 0, group_key: 'acme', created_at: '', group_properties: '{}', version: 1 },
        { team_id: 2, group_type_index: 0, group_key: 'acme', created_at: '', group_properties: '{}', version: 2 },
      ],
    });
    expect(changes).toEqual([
      { teamId: 1, persons: ['p-a', 'p-b', 'p-d'], distinctIds: ['anon', 'late'], groups: [] },
      { teamId: 2, persons: ['p-c'], distinctIds: [], groups: [[0, 'acme']] },
    ]);
    expect(personChangesOf({ persons: [], distinctIds: [], groups: [] })).toEqual([]);
  });
});
