import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { insertCohort, insertGroup, insertGroupType, insertPerson } from '@sightline/testkit';
import { readStoredPersons } from './flag-person-reads';

/**
 * Decide's person read on the embedded store (PGlite), through flags_stored_persons (migration
 * 0155), which keeps one generic plan per session: the answers must not change once PostgreSQL
 * stops planning each execution (from the sixth on) nor with the batch's size.
 */
describe('decide person reads on PGlite', () => {
  let dir: string;
  let db: MetadataStore;
  let teamId: number;
  let ann: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-flag-reads-'));
    db = await createMetadataStore({ dataDir: dir });
    await migratePostgres(db);
    teamId = (await bootstrapInstance(db, { projectApiKey: 'phc_flag_reads_token' })).projectId;
    await insertGroupType(db, teamId, 'company', 0);
    await insertGroup(db, teamId, 0, 'acme', { seats: 40 });
    ann = await insertPerson(db, teamId, ['ann', 'ann-anon'], { plan: 'pro' });
    await insertPerson(db, teamId, ['bob'], { plan: 'free' });
    await insertCohort(db, teamId, { isStatic: true, personIds: [ann] });
    await db.query(`INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES ($1, $2, 'continuity', 'ann-anon')`, [
      teamId,
      ann,
    ]);
  }, 60_000);

  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers persons, cohorts, hash keys, strangers and groups the same on every execution and batch size', async () => {
    for (let round = 0; round < 12; round++) {
      const requests = [
        { distinctId: 'ann-anon', groups: [{ index: 0, key: 'acme' }] },
        ...Array.from({ length: round }, (_, i) => ({ distinctId: `stranger-${round}-${i}`, groups: [{ index: 0, key: 'no-such-company' }] })),
        { distinctId: 'bob', groups: [] },
      ];
      const answers = await readStoredPersons(db, teamId, requests);
      expect(answers).toHaveLength(requests.length);
      expect(answers[0]).toMatchObject({ properties: { plan: 'pro' }, hashKeyOverrides: { continuity: 'ann-anon' }, groups: new Map([[0, { seats: 40 }]]) });
      expect(answers[0]!.personUuid).toMatch(/^[0-9a-f-]{36}$/);
      expect([...answers[0]!.staticCohortIds].every((id) => typeof id === 'number')).toBe(true);
      expect(answers[0]!.staticCohortIds.size).toBe(1);
      expect(answers.at(-1)).toMatchObject({ properties: { plan: 'free' }, hashKeyOverrides: {}, groups: new Map() });
      for (const stranger of answers.slice(1, -1))
        expect(stranger).toEqual({ personUuid: null, properties: {}, staticCohortIds: new Set(), hashKeyOverrides: {}, groups: new Map() });
    }
  });
});
