import { findUserIdByUuid } from '@sightline/accounts';
import { errors } from '@sightline/http';
import { isUniqueViolation, type Sql } from '@sightline/postgres';
import { echoed } from '../http/drf-fields';
import { FEATURE_FLAGS_ACCESS_LEVELS, insertMembership, insertRole, roleNameTaken, type MembershipRow, type RoleRow } from './roles.repository';

const nameTaken = () => errors.validation('There is already a role with this name.', 'name', 'unique');

/**
 * Creates a role of the organisation. Its name is unique within the organisation, compared
 * case-insensitively as PostHog does; its legacy flag access level is one of PostHog's two
 * choices (default: may always edit).
 */
export async function createRole(db: Sql, role: { organizationId: string; name: string; level: unknown; createdById: number }): Promise<RoleRow> {
  if (await roleNameTaken(db, role.organizationId, role.name)) throw nameTaken();
  const level = role.level ?? FEATURE_FLAGS_ACCESS_LEVELS.CAN_ALWAYS_EDIT;
  if (!Object.values(FEATURE_FLAGS_ACCESS_LEVELS).includes(level as 21 | 37)) {
    throw errors.validation(`"${echoed(level)}" is not a valid choice.`, 'feature_flags_access_level', 'invalid_choice');
  }
  try {
    return await insertRole(db, { organizationId: role.organizationId, name: role.name, level: level as number, createdById: role.createdById });
  } catch (error) {
    // Another request created the name between the check and the insert (roles_organization_name, case-insensitive).
    if (isUniqueViolation(error, 'roles_organization_name')) throw nameTaken();
    throw error;
  }
}

/** Makes the organisation's user `userUuid` a member of the role; an unknown user or an existing member is a 400. */
export async function addRoleMember(db: Sql, organizationId: string, role: RoleRow, userUuid: string): Promise<MembershipRow> {
  const userId = await findUserIdByUuid(db, organizationId, userUuid);
  if (userId === null) throw errors.validation('User does not exist.', null, 'invalid');
  const inserted = await insertMembership(db, role.id, userId);
  if (!inserted) throw errors.validation('User is already part of the role.', null, 'invalid');
  return inserted;
}
