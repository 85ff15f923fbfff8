import type { Sql } from '@sightline/postgres';
import { generatePersonalApiKey, hashPersonalApiKey, maskPersonalApiKey, type Principal } from '@sightline/auth';

/** A personal API key as stored: its value only as a hash, and a masked form for display. */
export interface PersonalKeyRow {
  id: number;
  user_id: number;
  label: string;
  mask_value: string;
  scopes: string[];
  scoped_teams: number[] | null;
  scoped_organizations: string[] | null;
  created_at: Date;
  last_used_at: Date | null;
  last_rolled_at: Date | null;
}

const KEY_COLUMNS = 'id, user_id, label, mask_value, scopes, scoped_teams, scoped_organizations, created_at, last_used_at, last_rolled_at';

/** How stale last_used_at may get before a request refreshes it (PostHog writes it at most hourly). */
const LAST_USED_RESOLUTION = "interval '1 hour'";

export async function findPrincipalByKeyHash(db: Sql, hash: string): Promise<Principal | null> {
  const rows = await db.query<{
    id: number;
    user_id: number;
    scopes: string[];
    scoped_teams: number[] | null;
    scoped_organizations: string[] | null;
    organization_id: string;
    stale: boolean;
  }>(
    `SELECT k.id, k.user_id, k.scopes, k.scoped_teams, k.scoped_organizations, u.organization_id,
            (k.last_used_at IS NULL OR k.last_used_at < now() - ${LAST_USED_RESOLUTION}) AS stale
       FROM personal_api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.secure_value = $1`,
    [hash],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.stale) {
    // Not awaited: the request does not wait for bookkeeping, and a failed write only leaves the time older.
    db.query(`UPDATE personal_api_keys SET last_used_at = now() WHERE id = $1`, [row.id]).catch(() => undefined);
  }
  return {
    keyId: row.id,
    userId: row.user_id,
    scopes: row.scopes,
    scopedTeams: row.scoped_teams,
    scopedOrganizations: row.scoped_organizations,
    organizationId: row.organization_id,
  };
}

export interface NewPersonalKey {
  userId: number;
  label: string;
  secureValue: string;
  maskValue: string;
  scopes: readonly string[];
  scopedTeams?: number[] | null;
  scopedOrganizations?: string[] | null;
}

export async function insertPersonalKey(db: Sql, key: NewPersonalKey): Promise<number> {
  const rows = await db.query<{ id: number }>(
    `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams, scoped_organizations)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [key.userId, key.label, key.secureValue, key.maskValue, key.scopes, key.scopedTeams ?? null, key.scopedOrganizations ?? null],
  );
  return rows[0]!.id;
}

/** A user's keys, newest first; with no user, every key (the operator's view). */
export async function listPersonalKeys(db: Sql, userId: number | null): Promise<PersonalKeyRow[]> {
  return db.query<PersonalKeyRow>(`SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE ($1::int IS NULL OR user_id = $1) ORDER BY created_at DESC, id DESC`, [
    userId,
  ]);
}

/** `lock`: inside a transaction, hold the row until it ends, so what is checked is what gets changed. */
export async function findPersonalKey(db: Sql, userId: number | null, id: number, options: { lock?: boolean } = {}): Promise<PersonalKeyRow | null> {
  const rows = await db.query<PersonalKeyRow>(
    `SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE id = $1 AND ($2::int IS NULL OR user_id = $2)${options.lock ? ' FOR UPDATE' : ''}`,
    [id, userId],
  );
  return rows[0] ?? null;
}

export interface PersonalKeyChange {
  label?: string;
  scopes?: readonly string[];
  scopedTeams?: number[] | null;
  scopedOrganizations?: string[] | null;
}

export async function updatePersonalKey(db: Sql, userId: number | null, id: number, change: PersonalKeyChange): Promise<PersonalKeyRow | null> {
  const rows = await db.query<PersonalKeyRow>(
    `UPDATE personal_api_keys SET
       label = CASE WHEN $3 THEN $4 ELSE label END,
       scopes = CASE WHEN $5 THEN $6::text[] ELSE scopes END,
       scoped_teams = CASE WHEN $7 THEN $8::int[] ELSE scoped_teams END,
       scoped_organizations = CASE WHEN $9 THEN $10::text[] ELSE scoped_organizations END
     WHERE id = $1 AND ($2::int IS NULL OR user_id = $2) RETURNING ${KEY_COLUMNS}`,
    [
      id,
      userId,
      change.label !== undefined,
      change.label ?? null,
      change.scopes !== undefined,
      change.scopes ?? null,
      change.scopedTeams !== undefined,
      change.scopedTeams ?? null,
      change.scopedOrganizations !== undefined,
      change.scopedOrganizations ?? null,
    ],
  );
  return rows[0] ?? null;
}

/** A new value for the key: the old one stops working at once. */
export async function rollPersonalKey(
  db: Sql,
  userId: number | null,
  id: number,
  value: { secureValue: string; maskValue: string },
): Promise<PersonalKeyRow | null> {
  const rows = await db.query<PersonalKeyRow>(
    `UPDATE personal_api_keys SET secure_value = $3, mask_value = $4, last_rolled_at = now()
      WHERE id = $1 AND ($2::int IS NULL OR user_id = $2) RETURNING ${KEY_COLUMNS}`,
    [id, userId, value.secureValue, value.maskValue],
  );
  return rows[0] ?? null;
}

/** Deletes a key (of `userId`, or anyone's when null); its owner, to announce the change to, or null when there was no such key. */
export async function deletePersonalKey(db: Sql, userId: number | null, id: number): Promise<{ userId: number } | null> {
  const rows = await db.query<{ user_id: number }>(`DELETE FROM personal_api_keys WHERE id = $1 AND ($2::int IS NULL OR user_id = $2) RETURNING user_id`, [
    id,
    userId,
  ]);
  return rows[0] ? { userId: rows[0].user_id } : null;
}

/** Issues a key: a fresh value, stored as its hash; the value is returned this once. */
export async function issuePersonalKey(
  db: Sql,
  key: { userId: number; label: string; scopes: readonly string[]; scopedTeams?: number[] | null; scopedOrganizations?: string[] | null },
): Promise<{ key: PersonalKeyRow; value: string }> {
  const value = generatePersonalApiKey();
  const id = await insertPersonalKey(db, { ...key, secureValue: hashPersonalApiKey(value), maskValue: maskPersonalApiKey(value) });
  return { key: (await findPersonalKey(db, key.userId, id))!, value };
}

/** A new value for an existing key; the value is returned this once. */
export async function reissuePersonalKey(db: Sql, userId: number | null, id: number): Promise<{ key: PersonalKeyRow; value: string } | null> {
  const value = generatePersonalApiKey();
  const key = await rollPersonalKey(db, userId, id, { secureValue: hashPersonalApiKey(value), maskValue: maskPersonalApiKey(value) });
  return key ? { key, value } : null;
}
