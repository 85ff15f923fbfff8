import { WrittenCopies, type PersonCopy, type PersonDistinctIdCopy } from './person-copies';

const person = (over: Partial<PersonCopy> = {}): PersonCopy => ({
  id: '0190a6f0-0000-5000-8000-000000000001',
  team_id: 1,
  created_at: '2024-01-01T00:00:00.000Z',
  properties: '{}',
  is_identified: 0,
  is_deleted: 0,
  version: 3,
  ...over,
});
const distinctId = (over: Partial<PersonDistinctIdCopy> = {}): PersonDistinctIdCopy => ({
  team_id: 1,
  distinct_id: 'u1',
  person_id: '0190a6f0-0000-5000-8000-000000000001',
  is_deleted: 0,
  version: 0,
  ...over,
});
const unwrittenCount = (written: WrittenCopies, persons: PersonCopy[], distinctIds: PersonDistinctIdCopy[]) => {
  const left = written.unwritten({ persons, distinctIds });
  return [left.persons.length, left.distinctIds.length];
};

describe('WrittenCopies', () => {
  it('knows a copy as written only once recorded, and only at the same key, project, version, deletion and person', () => {
    const written = new WrittenCopies();
    expect(unwrittenCount(written, [person()], [distinctId()])).toEqual([1, 1]);
    written.record({ persons: [person()], distinctIds: [distinctId()] });
    expect(unwrittenCount(written, [person()], [distinctId()])).toEqual([0, 0]);
    expect(
      unwrittenCount(
        written,
        [person({ version: 4 }), person({ is_deleted: 1 }), person({ team_id: 2 }), person({ id: '0190a6f0-0000-5000-8000-000000000002' })],
        [
          distinctId({ version: 1 }),
          distinctId({ is_deleted: 1 }),
          distinctId({ team_id: 2 }),
          distinctId({ distinct_id: 'u2' }),
          distinctId({ person_id: 'other' }),
        ],
      ),
    ).toEqual([4, 5]);
    // A deletion at version n and a live copy at version n are different rows.
    written.record({ persons: [person({ version: 5, is_deleted: 1 })], distinctIds: [] });
    expect(unwrittenCount(written, [person({ version: 5 }), person({ version: 5, is_deleted: 1 })], [])).toEqual([1, 0]);
  });

  it('holds at most its capacity in two generations over all projects, always the last half of it recorded', () => {
    const written = new WrittenCopies(4); // generations of 2 keys
    const unwrittenIds = (persons: PersonCopy[]) => written.unwritten({ persons, distinctIds: [] }).persons.map((p) => `${p.team_id}/${p.id}`);
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((id) => person({ id }));
    written.record({ persons: [a!, b!], distinctIds: [] }); // a full generation: it becomes the previous one
    written.record({ persons: [c!], distinctIds: [] });
    expect(unwrittenIds([a!, b!, c!, d!])).toEqual(['1/d']);
    written.record({ persons: [d!], distinctIds: [] }); // c and d fill the next: a and b are forgotten
    expect(unwrittenIds([a!, b!, c!, d!])).toEqual(['1/a', '1/b']);
    // A key recorded again in the current generation is updated in place: it does not fill it.
    written.record({ persons: [e!], distinctIds: [] });
    written.record({ persons: [person({ id: 'e', version: 4 })], distinctIds: [] });
    expect(unwrittenIds([c!, d!, e!, person({ id: 'e', version: 4 })])).toEqual(['1/e']);
    // Another project's keys count toward the same bound.
    written.record({ persons: [person({ id: 'x', team_id: 2 })], distinctIds: [] });
    expect(unwrittenIds([c!, d!, person({ id: 'e', version: 4 }), person({ id: 'x', team_id: 2 })])).toEqual(['1/c', '1/d']);
  });
});
