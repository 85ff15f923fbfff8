import type { Sql } from '@sightline/postgres';
import type { Principal } from '@sightline/auth';

export async function findPrincipalByKeyHash(db: Sql, hash: string): Promise<Principal | null> {
  const rows = await db.query<{ id: number; user_id: number; scopes: string[]; scoped_teams: number[] | null; organization_id: string }>(
    `SELECT k.id, k.user_id, k.scopes, k.scoped_teams, u.organization_id
       FROM personal_api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.secure_value = $1`,
    [hash],
  );
  const row = rows[0];
  if (!row) return null;
  return { keyId: row.id, userId: row.user_id, scopes: row.scopes, scopedTeams: row.scoped_teams, organizationId: row.organization_id };
}

export async function insertPersonalKey(
  db: Sql,
  key: { userId: number; label: string; secureValue: string; maskValue: string; scopes: readonly string[]; scopedTeams?: number[] | null },
): Promise<number> {
  const rows = await db.query<{ id: number }>(
    `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [key.userId, key.label, key.secureValue, key.maskValue, key.scopes, key.scopedTeams ?? null],
  );
  return rows[0]!.id;
}
