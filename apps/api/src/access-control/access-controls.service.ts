import { findUserIdByUuid } from '@sightline/accounts';
import { errors } from '@sightline/http';
import type { MetadataStore } from '@sightline/postgres';
import { echoed } from '../http/drf-fields';
import { findRole } from '../organization';
import { controlsFor, setAccessControl, type AccessControlRow } from './access-controls.repository';
import type { AccessLevel } from './access-levels';

/** A parsed PUT of an access control: the level (null removes the rule) and whom it is for (neither: everyone). */
export interface AccessControlChange {
  level: AccessLevel | null;
  /** A role of the organisation, by id. */
  roleRef: unknown;
  /** A user of the organisation, by uuid (Sightline has no separate membership ids). */
  memberRef: unknown;
}

/** Where the rule applies and who sets it. */
export interface AccessControlScope {
  organizationId: string;
  teamId: number;
  resource: string;
  /** null: the project-wide rule for the resource kind. */
  resourceId: string | null;
  actorId: number;
}

/**
 * Upserts (or, with a null level, removes) one access control, as PostHog's
 * AccessControlViewSetMixin._update_access_controls does; a role or member outside the
 * organisation is a 400. Answers the rule as stored, or null when removed.
 */
export async function putAccessControl(db: MetadataStore, scope: AccessControlScope, change: AccessControlChange): Promise<AccessControlRow | null> {
  const { organizationId, teamId, resource, resourceId } = scope;
  let roleId: string | null = null;
  let userId: number | null = null;
  if (change.roleRef !== null) {
    const role = await findRole(db, organizationId, String(change.roleRef));
    if (!role) throw errors.validation(`Invalid pk "${echoed(change.roleRef)}" - object does not exist.`, 'role', 'does_not_exist');
    roleId = role.id;
  }
  if (change.memberRef !== null) {
    const uuid = String(change.memberRef);
    const memberId = /^[0-9a-f-]{36}$/i.test(uuid) ? await findUserIdByUuid(db, organizationId, uuid) : null;
    if (memberId === null) {
      throw errors.validation(
        `Invalid organization member id. Use the user's uuid (Sightline has no separate membership ids).`,
        'organization_member',
        'does_not_exist',
      );
    }
    userId = memberId;
  }
  const id = await setAccessControl(db, { teamId, resource, resourceId, roleId, userId }, change.level, scope.actorId);
  return id === null ? null : (await controlsFor(db, teamId, resource, resourceId)).find((c) => c.id === id)!;
}
