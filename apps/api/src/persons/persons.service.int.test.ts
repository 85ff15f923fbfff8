import { createTestPerson, createTestStores, type TestPerson, type TestStores } from '@sightline/testkit';
import { ApiError } from '@sightline/http';
import { bulkDeletePersons, splitPersonApart, updatePersonProperties, type PersonsActor } from './person-changes.service';
import { findPersonByRef as findPerson } from '@sightline/persons';
import { listPersons, type PersonsDeps } from './persons.service';

const NOW = Date.parse('2024-03-10T12:00:00Z');
const NO_FILTERS = { properties: { type: 'AND' as const, values: [] }, cohortId: null, distinctId: null, email: null, search: null };

describe('persons services', () => {
  let stores: TestStores;
  let deps: PersonsDeps;
  let actor: PersonsActor;
  /** Projects announced as changed, in order. */
  const changed: number[] = [];
  const people: TestPerson[] = [];

  const activity = async (itemId: number) =>
    stores.db.query<{ activity: string; detail: { name: string; changes: unknown } }>(
      'SELECT activity, detail FROM activity_log WHERE team_id = 1 AND scope = $1 AND item_id = $2 ORDER BY created_at',
      ['Person', String(itemId)],
    );

  beforeAll(async () => {
    stores = await createTestStores('persons_services');
    deps = { db: stores.db, ch: stores.ch, now: () => NOW, personsChanged: async (teamId) => void changed.push(teamId) };
    const [project] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    actor = { teamId: 1, organizationId: project!.organization_id, userId: null, displayProperties: null };
    for (let i = 0; i < 3; i++) {
      people.push(
        await createTestPerson(stores, {
          distinctIds: [`user-${i}`, `anon-${i}`],
          properties: { email: `u${i}@example.com` },
          createdAt: `2024-03-0${i + 1} 00:00:00`,
        }),
      );
    }
  });
  afterAll(() => stores.close());
  beforeEach(() => void changed.splice(0));

  it('finds a person by uuid or integer id with its distinct ids', async () => {
    const byUuid = await findPerson(stores.db, 1, { uuid: people[0]!.uuid });
    expect(byUuid).toMatchObject({ uuid: people[0]!.uuid, properties: { email: 'u0@example.com' }, distinctIds: ['anon-0', 'user-0'] });
    expect(await findPerson(stores.db, 1, { id: String(byUuid!.id) })).toEqual(byUuid);
    // PostgreSQL reads a uuid in any case, as the route's `:person_id` may give it.
    expect(await findPerson(stores.db, 1, { uuid: people[0]!.uuid.toUpperCase() })).toEqual(byUuid);
    expect(await findPerson(stores.db, 1, { id: '999999' })).toBeNull();
  });

  it('pages newest first; a later page of the same snapshot leaves out persons created since', async () => {
    const first = await listPersons(deps, 1, NO_FILTERS, { limit: 2, offset: 0, through: null });
    expect(first.count).toBe(3);
    expect(first.persons.map((p) => p.uuid)).toEqual([people[2]!.uuid, people[1]!.uuid]);
    const newer = await createTestPerson(stores, { distinctIds: ['newcomer'], createdAt: '2024-03-09 00:00:00' });
    const second = await listPersons(deps, 1, NO_FILTERS, { limit: 2, offset: 2, through: first.through });
    expect(second).toMatchObject({ count: 3, through: first.through });
    expect(second.persons.map((p) => p.uuid)).toEqual([people[0]!.uuid]);
    const fresh = await listPersons(deps, 1, NO_FILTERS, { limit: 1, offset: 0, through: null });
    expect(fresh.persons.map((p) => p.uuid)).toEqual([newer.uuid]);
    expect(Number(fresh.through)).toBeGreaterThan(Number(first.through));
  });

  it('merges properties, answers the person after the change and logs before and after', async () => {
    const person = (await findPerson(stores.db, 1, { uuid: people[1]!.uuid }))!;
    const after = await updatePersonProperties(deps, actor, person, { plan: 'pro' });
    expect(after.properties).toEqual({ email: 'u1@example.com', plan: 'pro' });
    expect(changed).toEqual([1]);
    const [entry] = await activity(person.id);
    expect(entry).toMatchObject({
      activity: 'updated',
      detail: { name: 'u1@example.com', changes: [{ field: 'properties', before: { email: 'u1@example.com' }, after: after.properties }] },
    });
  });

  it('refuses to split on a distinct id the person does not have, changing nothing', async () => {
    const person = (await findPerson(stores.db, 1, { uuid: people[2]!.uuid }))!;
    await expect(splitPersonApart(deps, actor, person, { mainDistinctId: 'user-0', maxSplits: null })).rejects.toMatchObject({
      status: 400,
      attr: 'main_distinct_id',
    } satisfies Partial<ApiError>);
    expect(changed).toEqual([]);
    expect((await findPerson(stores.db, 1, { uuid: person.uuid }))!.distinctIds).toEqual(['anon-2', 'user-2']);
  });

  it('bulk-deletes the persons distinct ids name, counting found and deleted, each logged by its uuid', async () => {
    const person = (await findPerson(stores.db, 1, { uuid: people[0]!.uuid }))!;
    const answer = await bulkDeletePersons(deps, actor, { deleteEvents: false, targets: { distinctIds: ['user-0', 'anon-0', 'nobody'] } });
    expect(answer).toEqual({ found: 1, deleted: 1 });
    expect(changed).toEqual([1]);
    expect(await findPerson(stores.db, 1, { uuid: person.uuid })).toBeNull();
    expect(await activity(person.id)).toEqual([{ activity: 'deleted', detail: expect.objectContaining({ name: person.uuid, changes: null }) }]);
    expect(await bulkDeletePersons(deps, actor, { deleteEvents: false, targets: { uuids: [person.uuid], ids: [] } })).toEqual({ found: 0, deleted: 0 });
    expect(changed).toEqual([1]);
  });
});
