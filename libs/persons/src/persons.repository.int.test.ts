import { randomUUID } from 'node:crypto';
import { createTestStores, insertPerson, type TestStores } from '@sightline/testkit';
import {
  findPersonByDistinctId,
  findPersonIdsByDistinctIds,
  findPersonIdsByRefs,
  findPersonsByUuids,
  findPersonUuid,
  latestPersonId,
  personUuidsAfterId,
} from './persons.repository';

describe('persons repository', () => {
  let stores: TestStores;
  let otherProject: number;
  /** Persons of project 1 by name: their id and uuid. */
  const persons = new Map<string, { id: number; uuid: string }>();
  let stranger: { id: number; uuid: string };

  const add = async (teamId: number, distinctIds: string[], properties: Record<string, unknown> = {}) => {
    // The driver answers the bigint id as text.
    const id = Number(await insertPerson(stores.db, teamId, distinctIds, properties));
    const [row] = await stores.db.query<{ uuid: string }>('SELECT uuid::text AS uuid FROM persons WHERE id = $1', [id]);
    return { id, uuid: row!.uuid };
  };

  beforeAll(async () => {
    stores = await createTestStores('persons_repository');
    const [project] = await stores.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) SELECT gen_random_uuid(), organization_id, 'other', 'phc_repo_other' FROM projects WHERE id = 1 RETURNING id",
    );
    otherProject = project!.id;
    persons.set('ann', await add(1, ['ann-anon', 'ann'], { email: 'ann@example.com' }));
    persons.set('bob', await add(1, ['bob']));
    stranger = await add(otherProject, ['ann']);
  });
  afterAll(() => stores.close());

  it('reads persons by uuid with their distinct ids in text order, leaving out other projects and text that is no uuid', async () => {
    const ann = persons.get('ann')!;
    const found = await findPersonsByUuids(stores.db, 1, [ann.uuid, 'not-a-uuid', stranger.uuid, randomUUID()]);
    expect([...found.keys()]).toEqual([ann.uuid]);
    expect(found.get(ann.uuid)).toMatchObject({
      id: ann.id,
      uuid: ann.uuid,
      teamId: 1,
      properties: { email: 'ann@example.com' },
      distinctIds: ['ann', 'ann-anon'],
    });
    expect(await findPersonsByUuids(stores.db, 1, [])).toEqual(new Map());
  });

  it('reads a page longer than one statement reads', async () => {
    const many: string[] = [];
    for (let i = 0; i < 130; i++) many.push((await add(1, [`many-${i}`])).uuid);
    const found = await findPersonsByUuids(stores.db, 1, many);
    expect(found.size).toBe(130);
    expect(found.get(many[129]!)!.distinctIds).toEqual(['many-129']);
  });

  it("finds a person's uuid by uuid or integer id, only in its project", async () => {
    const bob = persons.get('bob')!;
    expect(await findPersonUuid(stores.db, 1, { uuid: bob.uuid })).toBe(bob.uuid);
    expect(await findPersonUuid(stores.db, 1, { id: String(bob.id) })).toBe(bob.uuid);
    expect(await findPersonUuid(stores.db, 1, { uuid: stranger.uuid })).toBeNull();
    expect(await findPersonUuid(stores.db, otherProject, { id: String(bob.id) })).toBeNull();
  });

  it('finds person ids by distinct ids (each person once) or by uuids and ids', async () => {
    const { id: ann } = persons.get('ann')!;
    const { id: bob, uuid: bobUuid } = persons.get('bob')!;
    expect((await findPersonIdsByDistinctIds(stores.db, 1, ['ann', 'ann-anon', 'bob', 'nobody'])).sort((a, b) => a - b)).toEqual([ann, bob]);
    expect(await findPersonIdsByDistinctIds(stores.db, otherProject, ['ann'])).toEqual([stranger.id]);
    expect((await findPersonIdsByRefs(stores.db, 1, { uuids: [bobUuid, stranger.uuid], ids: [String(ann), String(bob)] })).sort((a, b) => a - b)).toEqual([
      ann,
      bob,
    ]);
  });

  it("answers the project's latest person id and the persons created after an id, oldest first", async () => {
    const latest = await latestPersonId(stores.db, 1);
    const { id: bob, uuid: bobUuid } = persons.get('bob')!;
    expect(Number(latest)).toBeGreaterThan(bob);
    const after = await personUuidsAfterId(stores.db, 1, String(persons.get('ann')!.id), 2);
    expect(after[0]).toBe(bobUuid);
    expect(after).toHaveLength(2);
    expect(await personUuidsAfterId(stores.db, 1, latest, 10)).toEqual([]);
    const [empty] = await stores.db.query<{ id: number }>(
      "INSERT INTO projects (uuid, organization_id, name, api_token) SELECT gen_random_uuid(), organization_id, 'empty', 'phc_repo_empty' FROM projects WHERE id = 1 RETURNING id",
    );
    expect(await latestPersonId(stores.db, empty!.id)).toBe('0');
  });

  it('finds the person of a distinct id as a person row with its distinct ids', async () => {
    const ann = persons.get('ann')!;
    expect(await findPersonByDistinctId(stores.db, 1, 'ann-anon')).toMatchObject({
      id: ann.id,
      uuid: ann.uuid,
      teamId: 1,
      version: 0,
      distinctIds: ['ann', 'ann-anon'],
    });
    expect(await findPersonByDistinctId(stores.db, otherProject, 'ann')).toMatchObject({ id: stranger.id, teamId: otherProject });
    expect(await findPersonByDistinctId(stores.db, 1, 'nobody')).toBeNull();
  });
});
