import { personUuidFor } from '@sightline/ingestion';
import { GroupTypeIndexes, PersonlessDistinctIdCache } from '@sightline/persons';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import type { PreparedEvent } from './normalize.step';
import { personsStep } from './persons.step';

/**
 * The persons step on its own, against PostgreSQL: the merge each event asks for and the
 * warnings of those it refuses, personless events, groups attached and identified, and the
 * enrichment each event row gets, without the bus, the consumer or ClickHouse around it.
 */
const TEAM = 1;
const T0 = Date.parse('2024-01-10T12:00:00Z');
let sequence = 0;
const event = (distinctId: string, name: string, properties: Record<string, unknown> = {}, options: Partial<PreparedEvent> = {}): PreparedEvent => ({
  uuid: `00000000-0000-4000-8000-${String(++sequence).padStart(12, '0')}`,
  teamId: TEAM,
  distinctId,
  event: name,
  properties,
  timestampMs: T0 + sequence * 1000,
  createdAtMs: T0 + sequence * 1000,
  processPerson: true,
  historical: false,
  elementsChain: '',
  ...options,
});

describe('persons step', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let groupTypes: GroupTypeIndexes;
  const step = (events: PreparedEvent[]) => personsStep(db, groupTypes, new PersonlessDistinctIdCache(), events);

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('persons_step');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    groupTypes = new GroupTypeIndexes(db);
  });
  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  it('gives the events before and after an $identify the identified person, with the properties of each moment', async () => {
    const { enrichments, warnings, copies } = await step([
      event('anon-1', '$pageview', { $set: { seen: 1 } }),
      event('user-1', '$identify', { $anon_distinct_id: 'anon-1', $set: { email: 'u@example.com' } }),
      event('anon-1', '$pageview'),
    ]);
    const anon = personUuidFor(TEAM, 'anon-1');
    expect(enrichments.map((e) => [e.personId, JSON.parse(e.personPropertiesJson), e.personMode])).toEqual([
      [anon, { seen: 1 }, 'full'],
      [anon, { seen: 1, email: 'u@example.com' }, 'full'],
      [anon, { seen: 1, email: 'u@example.com' }, 'full'],
    ]);
    expect(warnings).toEqual([]);
    // One person for both ids (the anonymous one existed first and is kept), identified.
    expect(copies.persons.map((p) => [p.id, p.is_identified, p.is_deleted])).toEqual([[anon, 1, 0]]);
    expect(copies.distinctIds.map((d) => [d.distinct_id, d.person_id]).sort()).toEqual([
      ['anon-1', anon],
      ['user-1', anon],
    ]);
  });

  it('counts a refused merge as a warning and leaves both persons as they were', async () => {
    await step([event('known-a', '$identify', { $anon_distinct_id: 'known-a-anon' }), event('known-b', '$identify', { $anon_distinct_id: 'known-b-anon' })]);
    const { enrichments, warnings } = await step([
      event('known-a', '$identify', { $anon_distinct_id: 'known-b' }),
      event('known-a', '$identify', { $anon_distinct_id: 'anonymous' }),
    ]);
    expect(warnings).toEqual(['cannot_merge_already_identified', 'cannot_merge_with_illegal_distinct_id']);
    expect(new Set(enrichments.map((e) => e.personId))).toEqual(new Set([personUuidFor(TEAM, 'known-a')]));
    const personOf = async (distinctId: string) =>
      (
        await db.query<{ uuid: string }>(
          'SELECT p.uuid FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1 AND d.distinct_id = $2',
          [TEAM, distinctId],
        )
      )[0]?.uuid;
    expect(await personOf('known-b')).toBe(personUuidFor(TEAM, 'known-b'));
    expect(await personOf('anonymous')).toBeUndefined();
  });

  it('neither creates nor changes a person for a personless event, and ignores its merge', async () => {
    await step([event('has-person', '$pageview', { $set: { plan: 'pro' } })]);
    const personless = { processPerson: false };
    const { enrichments, warnings, copies } = await step([
      event('has-person', '$pageview', { $set: { plan: 'free' } }, personless),
      event('no-person', '$pageview', {}, personless),
      event('no-person', '$identify', { $anon_distinct_id: 'has-person' }, personless),
    ]);
    expect(enrichments.map((e) => [e.personId, e.personPropertiesJson, e.personMode])).toEqual([
      [personUuidFor(TEAM, 'has-person'), '{"plan":"pro"}', 'propertyless'],
      [personUuidFor(TEAM, 'no-person'), '{}', 'propertyless'],
      [personUuidFor(TEAM, 'no-person'), '{}', 'propertyless'],
    ]);
    expect(warnings).toEqual(['personless_merge_ignored']);
    expect(copies.persons).toEqual([]);
    expect(await db.query('SELECT 1 FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = $2', [TEAM, 'no-person'])).toEqual([]);
  });

  it("attaches an event's groups by type index, with the properties a $groupidentify of the same batch set", async () => {
    const groups = { company: 'acme' };
    const { enrichments, copies } = await step([
      event('g-user', '$groupidentify', { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 40 } }),
      event('g-user', '$pageview', { $groups: groups }),
      event('g-user', '$pageview', { $groups: { company: '' } }),
    ]);
    const index = (await groupTypes.resolve(TEAM, 'company'))!;
    expect(enrichments[1]!.groups).toEqual([{ index, propertiesJson: '{"seats":40}', createdAtMs: expect.any(Number) }]);
    expect(enrichments[2]!.groups).toEqual([]);
    expect(copies.groups).toEqual([expect.objectContaining({ group_type_index: index, group_key: 'acme' })]);
  });

  it('leaves person properties alone for $exception events', async () => {
    const { enrichments } = await step([event('exc', '$pageview', { $set: { a: 1 } }), event('exc', '$exception', { $set: { a: 2 } })]);
    expect(enrichments.map((e) => e.personPropertiesJson)).toEqual(['{"a":1}', '{"a":1}']);
  });
});
