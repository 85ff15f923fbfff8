import type { ClickHouseClient } from '@sightline/clickhouse';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { writeCopies } from './person-copies';
import { PERSON_ROW_COLUMNS, personRowOf, type PersonRecord, type PersonRow } from './person-row';
import type { Properties } from './property-updates';

/**
 * Deletion copies are written this far above the person's version, as PostHog's
 * delete_person does: a copy still in flight from an earlier write cannot outrank them.
 */
export const DELETION_VERSION_BUMP = 100;

export interface PersonStores {
  db: MetadataStore;
  ch: ClickHouseClient;
}

/**
 * Changes a person's properties the way an API write does: `set` keys are merged in (keys not
 * named are kept), `unset` keys removed, the version bumped, and the ClickHouse copy written
 * before answering, so the next query sees it. The row is locked as the worker locks it, so a
 * batch of events touching the same person waits instead of overwriting the change.
 * Answers null when the person is gone.
 */
export async function changePersonProperties(
  stores: PersonStores,
  teamId: number,
  personId: number,
  change: { set?: Properties; unset?: readonly string[] },
): Promise<{ uuid: string; properties: Properties; version: number } | null> {
  const updated = await stores.db.transaction(async (tx) => {
    const [record] = await tx.query<PersonRecord>(`SELECT ${PERSON_ROW_COLUMNS} FROM persons p WHERE p.team_id = $1 AND p.id = $2 FOR UPDATE`, [
      teamId,
      personId,
    ]);
    if (!record) return null;
    const row = personRowOf(record);
    const properties: Properties = { ...row.properties, ...(change.set ?? {}) };
    for (const key of change.unset ?? []) delete properties[key];
    const version = row.version + 1;
    // What the API writes is a live value: imported history no longer replaces it (docs/data-model.md#person-properties).
    const written = [...Object.keys(change.set ?? {}), ...(change.unset ?? [])];
    await tx.query(
      `UPDATE persons SET properties = $2::jsonb, version = $3,
              properties_last_updated_at = properties_last_updated_at - $4::text[], properties_last_operation = properties_last_operation - $4::text[]
        WHERE id = $1`,
      [row.id, JSON.stringify(properties), version, written],
    );
    return { row, properties, version };
  });
  if (!updated) return null;
  const { row, properties, version } = updated;
  await writeCopies(stores.ch, {
    persons: [
      {
        id: row.uuid,
        team_id: teamId,
        created_at: row.createdAt,
        properties: JSON.stringify(properties),
        is_identified: row.isIdentified ? 1 : 0,
        is_deleted: 0,
        version,
      },
    ],
  });
  return { uuid: row.uuid, properties, version };
}

/** What a deletion removed, per person. */
export interface DeletedPerson {
  id: number;
  uuid: string;
  distinctIds: string[];
}

/**
 * Deletes persons of a project: their PostgreSQL rows (distinct ids, cohort memberships and
 * hash-key overrides cascade) go in one transaction, which also queues an event-deletion task
 * per person when `deleteEvents` is set; then their ClickHouse copies are marked deleted, so
 * queries stop counting them as persons. The versions written are recorded, so a person created
 * again from one of the distinct ids starts above them. Ids of other projects are ignored.
 */
export async function deletePersons(
  stores: PersonStores,
  teamId: number,
  personIds: readonly number[],
  options: { deleteEvents: boolean; requestedBy: number | null },
): Promise<DeletedPerson[]> {
  if (personIds.length === 0) return [];
  const deleted = await stores.db.transaction(async (tx) => {
    const persons = (
      await tx.query<PersonRecord>(`SELECT ${PERSON_ROW_COLUMNS} FROM persons p WHERE p.team_id = $1 AND p.id = ANY($2::bigint[]) ORDER BY p.id FOR UPDATE`, [
        teamId,
        personIds,
      ])
    ).map(personRowOf);
    if (persons.length === 0) return [];
    const ids = persons.map((p) => p.id);
    const distinctIds = await tx.query<{ person_id: string; distinct_id: string; version: string }>(
      'SELECT person_id::text AS person_id, distinct_id, version FROM person_distinct_ids WHERE team_id = $1 AND person_id = ANY($2::bigint[]) ORDER BY distinct_id',
      [teamId, ids],
    );
    await tx.query('DELETE FROM persons WHERE team_id = $1 AND id = ANY($2::bigint[])', [teamId, ids]);
    return recordDeletion(tx, teamId, persons, distinctIds, options);
  });
  if (deleted.length === 0) return [];
  await writeCopies(stores.ch, {
    persons: deleted.map((p) => ({
      id: p.uuid,
      team_id: teamId,
      created_at: p.createdAt,
      properties: '{}',
      is_identified: 0,
      is_deleted: 1,
      version: p.version,
    })),
    distinctIds: deleted.flatMap((p) =>
      p.distinctIdVersions.map(([distinct_id, version]) => ({ team_id: teamId, distinct_id, person_id: p.uuid, is_deleted: 1 as const, version })),
    ),
  });
  return deleted.map(({ id, uuid, distinctIdVersions }) => ({ id, uuid, distinctIds: distinctIdVersions.map(([d]) => d) }));
}

async function recordDeletion(
  tx: Sql,
  teamId: number,
  persons: PersonRow[],
  distinctIds: { person_id: string; distinct_id: string; version: string }[],
  options: { deleteEvents: boolean; requestedBy: number | null },
) {
  const deleted = persons.map((p) => ({
    id: p.id,
    uuid: p.uuid,
    createdAt: p.createdAt,
    version: p.version + DELETION_VERSION_BUMP,
    distinctIdVersions: distinctIds
      .filter((d) => Number(d.person_id) === p.id)
      .map((d): [string, number] => [d.distinct_id, Number(d.version) + DELETION_VERSION_BUMP]),
  }));
  await tx.query(
    `INSERT INTO deleted_person_versions (team_id, uuid, version) SELECT $1, * FROM unnest($2::uuid[], $3::bigint[])
     ON CONFLICT (team_id, uuid) DO UPDATE SET version = GREATEST(deleted_person_versions.version, EXCLUDED.version), deleted_at = now()`,
    [teamId, deleted.map((p) => p.uuid), deleted.map((p) => p.version)],
  );
  const dids = deleted.flatMap((p) => p.distinctIdVersions);
  if (dids.length > 0) {
    await tx.query(
      `INSERT INTO deleted_distinct_id_versions (team_id, distinct_id, version) SELECT $1, * FROM unnest($2::text[], $3::bigint[])
       ON CONFLICT (team_id, distinct_id) DO UPDATE SET version = GREATEST(deleted_distinct_id_versions.version, EXCLUDED.version)`,
      [teamId, dids.map(([d]) => d), dids.map(([, v]) => v)],
    );
  }
  if (options.deleteEvents) {
    await tx.query(
      `INSERT INTO queued_deletions (team_id, person_uuid, distinct_ids, created_by)
       SELECT $1, u, ARRAY(SELECT jsonb_array_elements_text(d)), $4 FROM unnest($2::uuid[], $3::jsonb[]) AS x(u, d)`,
      [teamId, deleted.map((p) => p.uuid), deleted.map((p) => JSON.stringify(p.distinctIdVersions.map(([d]) => d))), options.requestedBy],
    );
  }
  return deleted;
}
