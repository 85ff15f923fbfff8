import { randomUUID } from 'node:crypto';
import type { SessionInfo } from '@sightline/auth';
import type { Sql } from '@sightline/postgres';

/** What the web app shows of the signed-in user. */
export interface SignInUser {
  id: number;
  uuid: string;
  email: string;
  firstName: string;
  organizationId: string;
  passwordHash: string | null;
}

interface UserRow {
  id: number;
  uuid: string;
  email: string;
  first_name: string;
  organization_id: string;
  password_hash: string | null;
}

const toUser = (row: UserRow): SignInUser => ({
  id: row.id,
  uuid: row.uuid,
  email: row.email,
  firstName: row.first_name,
  organizationId: row.organization_id,
  passwordHash: row.password_hash,
});

const USER_COLUMNS = 'u.id, u.uuid, u.email, u.first_name, u.organization_id, u.password_hash';

/** E-mail addresses compare case-insensitively, as Django's auth backend does for PostHog. */
export async function findUserByEmail(db: Sql, email: string): Promise<SignInUser | null> {
  const rows = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE lower(u.email) = lower($1) ORDER BY u.id LIMIT 1`, [email]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function findUserById(db: Sql, id: number): Promise<SignInUser | null> {
  const rows = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function insertSession(db: Sql, session: { tokenHash: string; csrfToken: string; userId: number; expiresAt: Date }): Promise<void> {
  await db.query('INSERT INTO user_sessions (token_hash, csrf_token, user_id, expires_at) VALUES ($1, $2, $3, $4)', [
    session.tokenHash,
    session.csrfToken,
    session.userId,
    session.expiresAt.toISOString(),
  ]);
}

/** The session's principal (every scope of its user, every project of the organisation), or null once it expired. */
export async function findSessionByTokenHash(db: Sql, tokenHash: string, now: Date): Promise<(SessionInfo & { userId: number }) | null> {
  const rows = await db.query<{ user_id: number; csrf_token: string; organization_id: string }>(
    `SELECT s.user_id, s.csrf_token, u.organization_id
       FROM user_sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = $1 AND s.expires_at > $2`,
    [tokenHash, now.toISOString()],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    userId: row.user_id,
    csrfToken: row.csrf_token,
    principal: { userId: row.user_id, keyId: null, scopes: ['*'], scopedTeams: null, organizationId: row.organization_id },
  };
}

export async function deleteSession(db: Sql, tokenHash: string): Promise<void> {
  await db.query('DELETE FROM user_sessions WHERE token_hash = $1', [tokenHash]);
}

/**
 * A user's new password; their other sessions end (whoever knew the old password is signed out)
 * and their unused setup links stop working.
 */
export async function setUserPassword(db: Sql, userId: number, passwordHash: string): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
  await db.query('DELETE FROM user_sessions WHERE user_id = $1', [userId]);
  await db.query('DELETE FROM password_setup_tokens WHERE user_id = $1 AND used_at IS NULL', [userId]);
}

export async function setUserEmail(db: Sql, userId: number, email: string): Promise<void> {
  await db.query('UPDATE users SET email = $2 WHERE id = $1', [userId, email]);
}

/** A new one-time link for a user; earlier unused ones stop working. */
export async function insertPasswordSetupToken(db: Sql, token: { tokenHash: string; userId: number; expiresAt: Date }): Promise<void> {
  await db.query('DELETE FROM password_setup_tokens WHERE user_id = $1 AND used_at IS NULL', [token.userId]);
  await db.query('INSERT INTO password_setup_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
    token.tokenHash,
    token.userId,
    token.expiresAt.toISOString(),
  ]);
}

/** Whether the user has a setup link that is neither used nor expired. */
export async function hasUsablePasswordSetupToken(db: Sql, userId: number, now: Date): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM password_setup_tokens WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2 LIMIT 1', [
    userId,
    now.toISOString(),
  ]);
  return rows.length > 0;
}

/** The user a setup link is for, while it is neither used nor expired; null otherwise. Reads only: nothing is spent. */
export async function findPasswordSetupTokenUser(db: Sql, tokenHash: string, now: Date): Promise<number | null> {
  const rows = await db.query<{ user_id: number }>('SELECT user_id FROM password_setup_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [
    tokenHash,
    now.toISOString(),
  ]);
  return rows[0]?.user_id ?? null;
}

/** Marks a setup link used and answers its user, or null when it is unknown, used or expired. Call inside a transaction. */
export async function consumePasswordSetupToken(db: Sql, tokenHash: string, now: Date): Promise<number | null> {
  const rows = await db.query<{ user_id: number }>(
    `UPDATE password_setup_tokens SET used_at = $2
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
      RETURNING user_id`,
    [tokenHash, now.toISOString()],
  );
  return rows[0]?.user_id ?? null;
}

/** The user a first-start link is for: the first user, while no user of the instance has a password. */
export async function findFirstUserWithoutPassword(db: Sql): Promise<SignInUser | null> {
  const withPassword = await db.query<{ id: number }>('SELECT id FROM users WHERE password_hash IS NOT NULL LIMIT 1');
  if (withPassword.length > 0) return null;
  const rows = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u ORDER BY u.id LIMIT 1`);
  return rows[0] ? toUser(rows[0]) : null;
}

/** A new user of an organisation, without a password until they use a setup link. */
export async function insertUser(db: Sql, user: { organizationId: string; email: string; firstName: string }): Promise<SignInUser> {
  const rows = await db.query<UserRow>(
    `INSERT INTO users (uuid, distinct_id, organization_id, first_name, email) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, uuid, email, first_name, organization_id, password_hash`,
    [randomUUID(), randomUUID(), user.organizationId, user.firstName, user.email],
  );
  return toUser(rows[0]!);
}

export async function listUsers(db: Sql): Promise<SignInUser[]> {
  const rows = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u ORDER BY u.id`);
  return rows.map(toUser);
}
