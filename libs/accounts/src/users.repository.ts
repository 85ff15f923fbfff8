import type { Sql } from '@sightline/postgres';

/** The User shape PostHog embeds as created_by (UserBasicSerializer). */
export interface BasicUser {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: boolean;
  hedgehog_config: Record<string, unknown> | null;
  role_at_organization: string | null;
}

export async function loadBasicUsers(db: Sql, ids: readonly (number | null | undefined)[]): Promise<Map<number, BasicUser>> {
  const wanted = [...new Set(ids.filter((id): id is number => typeof id === 'number'))];
  if (wanted.length === 0) return new Map();
  const rows = await db.query<BasicUser>(
    `SELECT id, uuid::text AS uuid, distinct_id, first_name, last_name, email, is_email_verified, hedgehog_config, role_at_organization
       FROM users WHERE id = ANY($1::int[])`,
    [wanted],
  );
  return new Map(rows.map((u) => [u.id, u]));
}

/** A user of the organisation by uuid, or null. */
export async function findUserIdByUuid(db: Sql, organizationId: string, uuid: string): Promise<number | null> {
  const [user] = await db.query<{ id: number }>('SELECT id FROM users WHERE uuid = $1 AND organization_id = $2', [uuid, organizationId]);
  return user?.id ?? null;
}

export async function findUserEmail(db: Sql, id: number): Promise<string | null> {
  const [user] = await db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [id]);
  return user?.email ?? null;
}
