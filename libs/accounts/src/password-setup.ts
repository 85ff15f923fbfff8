import { generateSecretToken, hashSecretToken } from '@sightline/auth';
import type { Sql } from '@sightline/postgres';
import { findFirstUserWithoutPassword, insertPasswordSetupToken } from './sign-in.repository';

/** How long a one-time password link works. */
export const PASSWORD_SETUP_TTL_MS = 24 * 60 * 60 * 1000;

/** A new one-time link token for the user (only its hash is stored); earlier unused links stop working. */
export async function issuePasswordSetupToken(db: Sql, userId: number, now: number): Promise<string> {
  const token = generateSecretToken();
  await insertPasswordSetupToken(db, { tokenHash: hashSecretToken(token), userId, expiresAt: new Date(now + PASSWORD_SETUP_TTL_MS) });
  return token;
}

/**
 * While no user of the instance has a password, every start issues a fresh link for the first
 * user (the one bootstrap created), so a lost or expired link is replaced by restarting.
 */
export async function issueFirstStartPasswordToken(db: Sql, now: number): Promise<string | null> {
  const user = await findFirstUserWithoutPassword(db);
  return user ? issuePasswordSetupToken(db, user.id, now) : null;
}

export function passwordSetupUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/setup?token=${encodeURIComponent(token)}`;
}

/** The start banner's lines about the link. */
export function formatPasswordSetupBanner(baseUrl: string, token: string): string {
  return [
    '',
    "  Open this link to choose the first user's e-mail and password for the web app",
    `  (it works once, for ${PASSWORD_SETUP_TTL_MS / 3_600_000} hours; restarting prints a new one until a password is set):`,
    `    ${passwordSetupUrl(baseUrl, token)}`,
    '',
  ].join('\n');
}
