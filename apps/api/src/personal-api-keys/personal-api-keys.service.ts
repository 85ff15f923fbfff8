import {
  deletePersonalKey,
  findPersonalKey,
  issuePersonalKey,
  listPersonalKeys,
  reissuePersonalKey,
  updatePersonalKey,
  type PersonalKeyChange,
  type PersonalKeyRow,
} from '@sightline/accounts';
import { holdsPowersOf, powerBeyond, type KeyPowers, type Principal } from '@sightline/auth';
import { errors } from '@sightline/http';
import type { MetadataStore, Sql } from '@sightline/postgres';

/**
 * Key management by a caller (a key, or the web app's session, which holds every power of its
 * user): whatever it issues, changes or rolls never holds a scope, project or organisation the
 * caller lacks, and it sees and manages only keys within its own powers (itself included). See
 * docs/http-api.md, "Personal API keys".
 */

const powersOf = (key: PersonalKeyRow): KeyPowers => ({ scopes: key.scopes, scopedTeams: key.scoped_teams, scopedOrganizations: key.scoped_organizations });

/** A key the caller may see and manage: it holds no power the caller lacks. */
const manageable = (caller: Principal, key: PersonalKeyRow) => holdsPowersOf(caller, powersOf(key));

function requireManageable(caller: Principal, key: PersonalKeyRow): void {
  const beyond = powerBeyond(caller, powersOf(key));
  if (beyond !== null) throw errors.permissionDenied(`This key cannot manage personal API key ${key.id}: that key holds ${beyond}, which this key does not.`);
}

function requireGrantable(caller: Principal, result: KeyPowers): void {
  const beyond = powerBeyond(caller, result);
  if (beyond !== null) throw errors.permissionDenied(`A key cannot give a key ${beyond}, which it does not have itself.`);
}

export async function listManageableKeys(db: MetadataStore, caller: Principal): Promise<PersonalKeyRow[]> {
  return (await listPersonalKeys(db, caller.userId)).filter((key) => manageable(caller, key));
}

export async function retrieveKey(db: MetadataStore, caller: Principal, id: number): Promise<PersonalKeyRow> {
  const key = await findPersonalKey(db, caller.userId, id);
  if (!key) throw errors.notFound();
  requireManageable(caller, key);
  return key;
}

export async function issueKey(
  db: MetadataStore,
  caller: Principal,
  key: { label: string; scopes: readonly string[]; scopedTeams?: number[] | null; scopedOrganizations?: string[] | null },
): Promise<{ key: PersonalKeyRow; value: string }> {
  // Absent restrictions mean none: a restricted caller must name them.
  requireGrantable(caller, { scopes: key.scopes, scopedTeams: key.scopedTeams ?? null, scopedOrganizations: key.scopedOrganizations ?? null });
  return issuePersonalKey(db, { userId: caller.userId, ...key });
}

/**
 * Announces that a user's keys changed, so the principal caches (this process's at once, the
 * others' through the invalidation channel) drop what they hold of that user's keys.
 */
export type KeysChanged = (userId: number) => Promise<void>;

/**
 * The key is read with its row locked, checked, and changed in one transaction, so a change made
 * meanwhile (say, the user widening it in the web app) cannot slip between the check and the write.
 */
async function withManageableKey<T>(
  db: MetadataStore,
  caller: Principal,
  id: number,
  keysChanged: KeysChanged,
  work: (tx: Sql, key: PersonalKeyRow) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      const key = await findPersonalKey(tx, caller.userId, id, { lock: true });
      if (!key) throw errors.notFound();
      requireManageable(caller, key);
      return work(tx, key);
    });
  } finally {
    // Once the change is committed (or whatever became of it: a commit whose answer was lost may
    // have happened), before the answer: the next request with the old key or powers is looked up again.
    await keysChanged(caller.userId);
  }
}

export function changeKey(db: MetadataStore, caller: Principal, id: number, change: PersonalKeyChange, keysChanged: KeysChanged): Promise<PersonalKeyRow> {
  return withManageableKey(db, caller, id, keysChanged, async (tx, key) => {
    requireGrantable(caller, {
      scopes: change.scopes ?? key.scopes,
      scopedTeams: change.scopedTeams !== undefined ? change.scopedTeams : key.scoped_teams,
      scopedOrganizations: change.scopedOrganizations !== undefined ? change.scopedOrganizations : key.scoped_organizations,
    });
    const updated = await updatePersonalKey(tx, caller.userId, key.id, change);
    if (!updated) throw errors.notFound();
    return updated;
  });
}

export function rollKey(db: MetadataStore, caller: Principal, id: number, keysChanged: KeysChanged): Promise<{ key: PersonalKeyRow; value: string }> {
  return withManageableKey(db, caller, id, keysChanged, async (tx, key) => {
    const rolled = await reissuePersonalKey(tx, caller.userId, key.id);
    if (!rolled) throw errors.notFound();
    return rolled;
  });
}

export function removeKey(db: MetadataStore, caller: Principal, id: number, keysChanged: KeysChanged): Promise<void> {
  return withManageableKey(db, caller, id, keysChanged, async (tx, key) => {
    await deletePersonalKey(tx, caller.userId, key.id);
  });
}
