import { randomUUID } from 'node:crypto';
import { personUuidFor } from '@sightline/ingestion';
import { writeCopies, type PersonCopy, type PersonDistinctIdCopy } from './person-copies';
import { PERSON_ROW_COLUMNS, personRowOf, type PersonRecord } from './person-row';
import { DELETION_VERSION_BUMP, type PersonStores } from './person-writes';

/** What a split did: the distinct ids moved, each to its own person. */
export interface SplitResult {
  moved: { distinctId: string; personUuid: string }[];
}

/**
 * Undoes merges, as PostHog's Person.split_person does (posthog/models/person/person.py): every
 * distinct id of the person except `mainDistinctId` moves to a person of its own, whose uuid is
 * derived from the distinct id as ingestion derives it (so later events of that id land on it)
 * (unless that is the original person's own uuid: then a new one) and whose version starts above the original's deletion bump, so no copy still in flight from
 * the merged person can outrank it. Without `mainDistinctId` the first distinct id stays and the
 * original person's properties are cleared (they can no longer be attributed). `maxSplits` moves
 * only the last N distinct ids. Past events follow their distinct id: queries resolve persons
 * through the distinct-id copies, which are written with higher versions here.
 * Answers null when the person is gone, or when `mainDistinctId` is not one of its ids.
 */
export async function splitPerson(
  stores: PersonStores,
  teamId: number,
  personId: number,
  options: { mainDistinctId?: string | null; maxSplits?: number | null; nowMs?: number } = {},
): Promise<SplitResult | null> {
  const split = await stores.db.transaction(async (tx) => {
    const [record] = await tx.query<PersonRecord>(`SELECT ${PERSON_ROW_COLUMNS} FROM persons p WHERE p.team_id = $1 AND p.id = $2 FOR UPDATE`, [
      teamId,
      personId,
    ]);
    if (!record) return null;
    const person = personRowOf(record);
    // PostHog orders a person's distinct ids by when they were added (PersonDistinctId.id);
    // version then the id itself is the closest order kept here.
    const distinctIds = await tx.query<{ distinct_id: string; version: string }>(
      'SELECT distinct_id, version FROM person_distinct_ids WHERE team_id = $1 AND person_id = $2 ORDER BY version, distinct_id FOR UPDATE',
      [teamId, person.id],
    );
    const main = options.mainDistinctId ?? distinctIds[0]?.distinct_id ?? null;
    if (options.mainDistinctId && !distinctIds.some((d) => d.distinct_id === options.mainDistinctId)) return null;
    // The original's version moves even when only its distinct ids leave it: a worker that kept
    // the person (libs/persons/src/written-persons.ts) learns from the version alone that the ids
    // it kept for it may have moved.
    const version = person.version + 1;
    if (options.mainDistinctId) {
      await tx.query('UPDATE persons SET version = $2 WHERE id = $1', [person.id, version]);
    } else {
      await tx.query(
        `UPDATE persons SET properties = '{}'::jsonb, properties_last_updated_at = '{}'::jsonb, properties_last_operation = '{}'::jsonb, version = $2 WHERE id = $1`,
        [person.id, version],
      );
    }
    const original: PersonCopy = {
      id: person.uuid,
      team_id: teamId,
      created_at: person.createdAt,
      properties: options.mainDistinctId ? JSON.stringify(person.properties) : '{}',
      is_identified: person.isIdentified ? 1 : 0,
      is_deleted: 0,
      version,
    };
    let candidates = distinctIds.filter((d) => d.distinct_id !== main);
    if (options.maxSplits != null && distinctIds.length > options.maxSplits) {
      const kept = new Set(distinctIds.slice(-options.maxSplits).map((d) => d.distinct_id));
      candidates = candidates.filter((d) => kept.has(d.distinct_id));
    }
    const persons: PersonCopy[] = [];
    const copies: PersonDistinctIdCopy[] = [];
    const moved: SplitResult['moved'] = [];
    const newVersion = person.version + DELETION_VERSION_BUMP + 1;
    // The id the person was first created from derives the person's own uuid: that one gets a fresh uuid.
    const targets = candidates.map((d) => {
      const derived = personUuidFor(teamId, d.distinct_id);
      return { ...d, uuid: derived === person.uuid ? randomUUID() : derived };
    });
    const deletedVersions = new Map(
      (
        await tx.query<{ uuid: string; version: string }>(
          'SELECT uuid::text AS uuid, version FROM deleted_person_versions WHERE team_id = $1 AND uuid = ANY($2::uuid[])',
          [teamId, targets.map((t) => t.uuid)],
        )
      ).map((row) => [row.uuid, Number(row.version)]),
    );
    for (const { distinct_id: distinctId, version, uuid } of targets) {
      const deleted = deletedVersions.get(uuid);
      const startVersion = Math.max(newVersion, deleted === undefined ? 0 : deleted + 1);
      // PostHog: get_or_create; a person with this uuid may exist already (the id was split before).
      const [inserted] = await tx.query<PersonRecord>(
        `INSERT INTO persons AS p (team_id, uuid, version, created_at) VALUES ($1, $2, $3, to_timestamp($4::double precision / 1000))
         ON CONFLICT (team_id, uuid) DO UPDATE SET version = p.version
         RETURNING ${PERSON_ROW_COLUMNS}`,
        [teamId, uuid, startVersion, options.nowMs ?? Date.now()],
      );
      const target = personRowOf(inserted!);
      const distinctIdVersion = Number(version) + 1;
      await tx.query('UPDATE person_distinct_ids SET person_id = $3, version = $4 WHERE team_id = $1 AND distinct_id = $2', [
        teamId,
        distinctId,
        target.id,
        distinctIdVersion,
      ]);
      persons.push({
        id: uuid,
        team_id: teamId,
        created_at: target.createdAt,
        properties: JSON.stringify(target.properties),
        is_identified: target.isIdentified ? 1 : 0,
        is_deleted: 0,
        version: target.version,
      });
      copies.push({ team_id: teamId, distinct_id: distinctId, person_id: uuid, is_deleted: 0, version: distinctIdVersion });
      moved.push({ distinctId, personUuid: uuid });
    }
    return { persons: [original, ...persons], distinctIds: copies, moved };
  });
  if (!split) return null;
  await writeCopies(stores.ch, { persons: split.persons, distinctIds: split.distinctIds });
  return { moved: split.moved };
}
