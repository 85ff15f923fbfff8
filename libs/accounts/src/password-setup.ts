import { generateSecretToken, hashSecretToken } from '@sightline/auth';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { findFirstUserWithoutPassword, hasUsablePasswordSetupToken, insertPasswordSetupToken } from './sign-in.repository';

/** How long a one-time password link works. */
export const PASSWORD_SETUP_TTL_MS = 24 * 60 * 60 * 1000;

/** A new one-time link token for the user (only its hash is stored); earlier unused links stop working. */
export async function issuePasswordSetupToken(db: Sql, userId: number, now: number): Promise<string> {
  const token = generateSecretToken();
  await insertPasswordSetupToken(db, { tokenHash: hashSecretToken(token), userId, expiresAt: new Date(now + PASSWORD_SETUP_TTL_MS) });
  return token;
}

// Arbitrary constant identifying "first-start link" among advisory locks.
const FIRST_START_LINK_LOCK_KEY = 7_344_615_003;

/**
 * While no user of the instance has a password, a start issues a link for the first user (the
 * one bootstrap created) and prints it. With `replaceUnused` (embedded mode: one process owns the
 * data directory) every start issues a fresh one, so a lost link is replaced by restarting.
 * Without it (several api processes on one database) a link is issued only while none usable
 * exists, under an advisory lock: of processes starting together exactly one gets a token to
 * print, and the others do not cancel it by issuing their own. `npm run admin -- users
 * reset-password` replaces a lost one.
 */
export async function issueFirstStartPasswordToken(db: MetadataStore, now: number, options: { replaceUnused?: boolean } = {}): Promise<string | null> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [FIRST_START_LINK_LOCK_KEY]);
    const user = await findFirstUserWithoutPassword(tx);
    if (!user) return null;
    if (!options.replaceUnused && (await hasUsablePasswordSetupToken(tx, user.id, new Date(now)))) return null;
    return issuePasswordSetupToken(tx, user.id, now);
  });
}

export function passwordSetupUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/setup?token=${encodeURIComponent(token)}`;
}

/** The start banner's lines about the link; `restartReplaces`: a restart issues a new link (see issueFirstStartPasswordToken). */
export function formatPasswordSetupBanner(baseUrl: string, token: string, restartReplaces = true): string {
  const renewal = restartReplaces ? 'restarting prints a new one until a password is set' : '`npm run admin -- users reset-password` issues a new one';
  return [
    '',
    "  Open this link to choose the first user's e-mail and password for the web app",
    `  (it works once, for ${PASSWORD_SETUP_TTL_MS / 3_600_000} hours; ${renewal}):`,
    `    ${passwordSetupUrl(baseUrl, token)}`,
    '',
  ].join('\n');
}
