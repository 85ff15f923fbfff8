import { personUuidFor } from '@sightline/ingestion';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '@sightline/testkit';
import { PersonBatch, PersonVersionRace } from './person-batch';
import type { PropertyUpdates } from './property-updates';

/**
 * PersonBatch on its own, against PostgreSQL: what a batch of events does to persons in memory
 * (create, update, link, merge and each refusal), what its flush writes in one transaction, and
 * the ClickHouse copies it hands back. The worker's pipeline tests reach it only through whole
 * batches of events.
 */
const TEAM = 1;
const T0 = Date.parse('2024-01-10T12:00:00Z');
const set = (properties: Record<string, unknown>): PropertyUpdates => ({ set: properties, setOnce: {}, unset: [] });

describe('PersonBatch', () => {
  let pg: TestPostgresDatabase;
  let db: MetadataStore;

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('person_batch');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
  });
  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  /** A batch over `ids`, changed by `work` and flushed in one transaction. */
  async function run(ids: string[], work: (batch: PersonBatch) => void) {
    return db.transaction(async (tx) => {
      const batch = await PersonBatch.load(tx, new Map([[TEAM, ids]]), { lock: true });
      work(batch);
      return { batch, copies: await batch.flush(tx) };
    });
  }
  const stored = async (distinctId: string) =>
    (
      await db.query<{ uuid: string; properties: Record<string, unknown>; is_identified: boolean; version: string; distinct_id_version: string }>(
        `SELECT p.uuid, p.properties, p.is_identified, p.version, d.version AS distinct_id_version
           FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1 AND d.distinct_id = $2`,
        [TEAM, distinctId],
      )
    )[0];

  it('creates a person on first sight with the uuid of its distinct id, and writes it and its copies', async () => {
    const { copies } = await run(['new-1'], (b) => b.updateProperties(b.getOrCreate(TEAM, 'new-1', T0), set({ plan: 'free' })));
    const uuid = personUuidFor(TEAM, 'new-1');
    expect(await stored('new-1')).toEqual({ uuid, properties: { plan: 'free' }, is_identified: false, version: '0', distinct_id_version: '0' });
    expect(copies.persons).toEqual([
      { id: uuid, team_id: TEAM, created_at: new Date(T0).toISOString(), properties: '{"plan":"free"}', is_identified: 0, is_deleted: 0, version: 0 },
    ]);
    expect(copies.distinctIds).toEqual([{ team_id: TEAM, distinct_id: 'new-1', person_id: uuid, is_deleted: 0, version: 0 }]);
  });

  it('claims one version per batch however many changes it makes, and none when nothing changed', async () => {
    await run(['count-1'], (b) => b.getOrCreate(TEAM, 'count-1', T0));
    await run(['count-1'], (b) => {
      const person = b.find(TEAM, 'count-1')!;
      expect(b.updateProperties(person, set({ a: 1 }))).toBe(true);
      expect(b.updateProperties(person, set({ b: 2 }))).toBe(true);
      expect(b.updateProperties(person, set({ b: 2 }))).toBe(false);
    });
    expect(await stored('count-1')).toMatchObject({ properties: { a: 1, b: 2 }, version: '1' });
    const { copies } = await run(['count-1'], (b) => b.updateProperties(b.find(TEAM, 'count-1')!, set({ a: 1 })));
    expect(await stored('count-1')).toMatchObject({ version: '1' });
    // Untouched by a full-mode event (find only), so no copy is written again.
    expect(copies.persons).toEqual([]);
  });

  it('answers each merge request with what it did', async () => {
    await run(['m-known', 'm-identified'], (b) => {
      b.getOrCreate(TEAM, 'm-known', T0);
      b.identify(b.getOrCreate(TEAM, 'm-identified', T0));
    });
    await run(['m-known', 'm-identified', 'm-new-a', 'm-new-b', 'm-link'], (b) => {
      expect(b.merge(TEAM, 'm-known', 'm-known', '$identify', T0)).toBe('same_id');
      expect(b.merge(TEAM, 'm-known', 'anonymous', '$identify', T0)).toBe('illegal_id');
      expect(b.merge(TEAM, 'm-new-a', 'm-new-b', '$identify', T0)).toBe('created');
      expect(b.merge(TEAM, 'm-known', 'm-link', '$identify', T0)).toBe('linked');
      expect(b.merge(TEAM, 'm-link', 'm-known', '$identify', T0)).toBe('already_merged');
      expect(b.merge(TEAM, 'm-known', 'm-identified', '$identify', T0)).toBe('refused_already_identified');
    });
    expect((await stored('m-new-b'))!.uuid).toBe(personUuidFor(TEAM, 'm-new-a'));
    expect((await stored('m-link'))!.uuid).toBe(personUuidFor(TEAM, 'm-known'));
    expect((await stored('m-identified'))!.uuid).toBe(personUuidFor(TEAM, 'm-identified'));
  });

  it('merges two stored persons: the survivor keeps its properties on conflicts and takes every distinct id of the other', async () => {
    await run(['keep', 'gone', 'gone-unseen'], (b) => {
      b.updateProperties(b.getOrCreate(TEAM, 'keep', T0 + 1000), set({ plan: 'pro', name: 'Keep' }));
      const gone = b.getOrCreate(TEAM, 'gone', T0);
      b.updateProperties(gone, set({ plan: 'free', email: 'g@example.com' }));
      b.merge(TEAM, 'gone', 'gone-unseen', '$create_alias', T0);
    });
    // The batch sees only `keep` and `gone`: `gone-unseen` moves with its person all the same.
    const { copies } = await run(['keep', 'gone'], (b) => {
      expect(b.merge(TEAM, 'keep', 'gone', '$merge_dangerously', T0 + 2000)).toBe('merged');
    });
    const keep = personUuidFor(TEAM, 'keep');
    expect(await stored('keep')).toEqual({
      uuid: keep,
      properties: { plan: 'pro', name: 'Keep', email: 'g@example.com' },
      is_identified: true,
      version: '1',
      distinct_id_version: '0',
    });
    expect(await stored('gone')).toMatchObject({ uuid: keep, distinct_id_version: '1' });
    expect(await stored('gone-unseen')).toMatchObject({ uuid: keep, distinct_id_version: '1' });
    expect(await db.query('SELECT 1 FROM persons WHERE uuid = $1', [personUuidFor(TEAM, 'gone')])).toEqual([]);
    // Both were at version 0: each write claims max + 1. The survivor takes the earlier creation
    // time; the other person's copy is a deletion that outranks its rows.
    expect(copies.persons).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: keep, created_at: new Date(T0).toISOString(), is_deleted: 0, version: 1 }),
        expect.objectContaining({ id: personUuidFor(TEAM, 'gone'), properties: '{}', is_deleted: 1, version: 1 }),
      ]),
    );
    expect(copies.distinctIds).toEqual(expect.arrayContaining([expect.objectContaining({ distinct_id: 'gone-unseen', person_id: keep, version: 1 })]));
  });

  it('refuses the write of a batch that read without locks when another batch wrote the person in between', async () => {
    await run(['race'], (b) => b.getOrCreate(TEAM, 'race', T0));
    const load = () => PersonBatch.load(db, new Map([[TEAM, ['race']]]), { lock: false });
    const [first, second] = [await load(), await load()];
    first.updateProperties(first.find(TEAM, 'race')!, set({ by: 'first' }));
    second.updateProperties(second.find(TEAM, 'race')!, set({ by: 'second' }));
    await db.transaction((tx) => first.flush(tx));
    await expect(db.transaction((tx) => second.flush(tx))).rejects.toBeInstanceOf(PersonVersionRace);
    expect(await stored('race')).toMatchObject({ properties: { by: 'first' }, version: '1' });
  });

  it('gives the first person row of an id seen on personless events version 1, and marks the sighting merged', async () => {
    await run(['ghost'], (b) => void b.personOfPersonlessEvent(TEAM, 'ghost'));
    expect(await stored('ghost')).toBeUndefined();
    await run(['ghost'], (b) => b.getOrCreate(TEAM, 'ghost', T0));
    expect(await stored('ghost')).toMatchObject({ distinct_id_version: '1' });
    expect(await db.query('SELECT is_merged FROM personless_distinct_ids WHERE team_id = $1 AND distinct_id = $2', [TEAM, 'ghost'])).toEqual([
      { is_merged: true },
    ]);
  });
});
