import { errors, ApiError } from '@sightline/http';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { changesBetween, recordActivity, type Change } from '../activity-log';
import { findUserEmail } from '@sightline/accounts';
import { existingDashboardIds, findCohort } from '@sightline/insights';
import type { FlagInput, FlagValidationContext } from './flag-input';
import {
  activeExperimentIds,
  dependentFlags,
  disabledFlagsAmong,
  findFlag,
  findLiveFlagRef,
  flagDashboardIds,
  hasDeletedExperiment,
  insertFlag,
  isKeyTaken,
  setAnalyticsDashboards,
  updateFlag,
  WRITABLE_COLUMNS,
  type FlagRow,
} from './feature-flags.repository';
import { createUsageDashboard, followKeyChange } from './usage-dashboard';

export const ACTIVITY_SCOPE = 'FeatureFlag';
/** Fields whose changes the activity log records: the stored ones a client writes, and the linked dashboards. */
const LOGGED_FIELDS = [...WRITABLE_COLUMNS, 'analytics_dashboards'] as const;

/** Who writes: the caller's project, user and organisation. */
export interface FlagActor {
  teamId: number;
  userId: number;
  organizationId: string;
}

/** The lookups flag validation needs, backed by the project's tables. */
export function validationContext(db: Sql, teamId: number, method: FlagValidationContext['method'], current?: FlagRow): FlagValidationContext {
  return {
    method,
    current,
    keyTaken: (key, except) => isKeyTaken(db, teamId, key, except),
    cohortExists: async (id) => (await findCohort(db, teamId, id))?.deleted === false,
    findFlag: (idOrKey) => findLiveFlagRef(db, teamId, idOrKey),
    missingDashboards: async (ids) => {
      const live = await existingDashboardIds(db, teamId, ids);
      return ids.filter((id) => !live.has(id));
    },
  };
}

const uniqueKeyViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505' && /feature_flags_live_key/.test(String(error));

const duplicateKey = () => errors.validation('There is already a feature flag with this key.', 'key', 'unique');

/** The loggable state of a flag, for the activity diff. */
async function loggedState(db: Sql, flag: FlagRow): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = { analytics_dashboards: await flagDashboardIds(db, flag.id) };
  for (const field of LOGGED_FIELDS) if (field !== 'analytics_dashboards') state[field] = flag[field];
  return state;
}

/** One activity-log entry for a flag, by the actor, named after the flag's key as PostHog does. */
function logFlagActivity(db: Sql, actor: FlagActor, flag: FlagRow, activity: string, changes: Change[]): Promise<void> {
  return recordActivity(db, {
    teamId: flag.team_id,
    organizationId: actor.organizationId,
    userId: actor.userId,
    scope: ACTIVITY_SCOPE,
    itemId: flag.id,
    activity,
    detail: { changes, name: flag.key },
  });
}

/** The fields of `original_flag` the caller changed and someone else changed meanwhile (PostHog's conflict rule). */
function conflictingFields(locked: FlagRow, input: FlagInput, original: Record<string, unknown>): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (Object.keys(input) as (keyof FlagInput)[]).filter(
    (field) =>
      field in original &&
      field in locked &&
      !same(input[field], original[field]) &&
      !same(original[field], locked[field as keyof FlagRow]) &&
      !same(input[field], locked[field as keyof FlagRow]),
  );
}

/** Refusals PostHog makes before a soft delete, a disable or an enable. */
async function checkLifecycleChange(db: Sql, flag: FlagRow, input: FlagInput): Promise<void> {
  const refuse = (detail: string) => errors.validation(detail, null, 'invalid');
  const names = (flags: { id: number; key: string }[]) => {
    const shown = flags.slice(0, 5).map((f) => `${f.key} (ID: ${f.id})`);
    if (flags.length > 5) shown.push(`and ${flags.length - 5} more`);
    return shown.join(', ');
  };
  if (input.deleted === true && !flag.deleted) {
    const experiments = await activeExperimentIds(db, flag.id);
    if (experiments.length > 0) {
      throw refuse(
        `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiments.join(', ')}. Please delete the experiment(s) before deleting the flag.`,
      );
    }
    const dependents = await dependentFlags(db, flag);
    if (dependents.length > 0) {
      throw refuse(
        `Cannot delete this feature flag because other flags depend on it: ${names(dependents)}. Please update or delete the dependent flags first.`,
      );
    }
  }
  if (input.active === false && flag.active) {
    const dependents = await dependentFlags(db, flag);
    if (dependents.length > 0) {
      throw refuse(
        `Cannot disable this feature flag because other flags depend on it: ${names(dependents)}. Please update or disable the dependent flags first.`,
      );
    }
  }
  if (input.active === true && !flag.active) {
    const filters = input.filters ?? flag.filters;
    const ids = (Array.isArray(filters['groups']) ? filters['groups'] : [])
      .flatMap((g: { properties?: unknown }) => (Array.isArray(g?.properties) ? g.properties : []))
      .filter((p: { type?: unknown }) => p?.type === 'flag')
      .map((p: { key?: unknown }) => Number(p.key))
      .filter(Number.isInteger);
    if (ids.length > 0) {
      const disabled = await disabledFlagsAmong(db, flag.team_id, ids);
      if (disabled.length > 0) {
        throw refuse(`Cannot enable this feature flag because it depends on disabled flags: ${names(disabled)}. Please enable the dependency flags first.`);
      }
    }
  }
}

/** Creates a validated flag with its dashboards, activity entry and usage dashboard, in one transaction. */
export async function createFeatureFlag(db: MetadataStore, actor: FlagActor, input: FlagInput, now: Date): Promise<FlagRow> {
  const { teamId, userId } = actor;
  try {
    return await db.transaction(async (tx) => {
      const created = await insertFlag(tx, teamId, userId, input, now);
      await setAnalyticsDashboards(tx, created.id, input.analytics_dashboards ?? []);
      await logFlagActivity(tx, actor, created, 'created', changesBetween(ACTIVITY_SCOPE, null, await loggedState(tx, created), LOGGED_FIELDS));
      if (input.create_usage_dashboard !== false) await createUsageDashboard(tx, created, userId);
      return (await findFlag(tx, teamId, created.id))!;
    });
  } catch (error) {
    if (uniqueKeyViolation(error)) throw duplicateKey();
    throw error;
  }
}

/**
 * Applies a validated update under the row lock: the stale-version check (409 naming the last
 * editor), lifecycle refusals, the key freed by a soft delete, the activity entry with its diff.
 */
export async function updateFeatureFlag(db: MetadataStore, actor: FlagActor, flag: FlagRow, input: FlagInput, now: Date): Promise<FlagRow> {
  const { teamId, userId } = actor;
  if (input.active === true) input.performed_rollback = false;
  try {
    return await db.transaction(async (tx) => {
      // The row lock makes the version check and the increment one step.
      const locked = (await findFlag(tx, teamId, flag.id, { forUpdate: true }))!;
      if (input.version !== undefined && input.version !== locked.version) {
        const conflicts = input.original_flag ? conflictingFields(locked, input, input.original_flag) : ['version'];
        if (conflicts.length > 0) {
          const editor = locked.last_modified_by_id ? await findUserEmail(tx, locked.last_modified_by_id) : null;
          throw new ApiError(
            409,
            'invalid_request',
            'conflict',
            `The feature flag was updated by ${editor ?? 'another user'} since you started editing it. Please refresh and try again.`,
          );
        }
      }
      await checkLifecycleChange(tx, locked, input);
      // Soft-deleting a flag whose experiments were deleted frees its key (PostHog renames it).
      if (input.deleted === true && !locked.deleted) {
        if (await hasDeletedExperiment(tx, locked.id)) input.key = `${input.key ?? locked.key}:deleted:${locked.id}`;
      }
      const before = await loggedState(tx, locked);
      const updated = await updateFlag(tx, locked, userId, input, now);
      await setAnalyticsDashboards(tx, updated.id, input.analytics_dashboards ?? []);
      // The usage dashboard follows a renamed key (not the key a soft delete frees).
      if (!updated.deleted) await followKeyChange(tx, updated, locked.key, userId);
      const changes = changesBetween(ACTIVITY_SCOPE, before, await loggedState(tx, updated), LOGGED_FIELDS);
      const deletedChange = changes.find((c) => c.field === 'deleted');
      const activity = deletedChange ? (deletedChange.after ? 'deleted' : 'restored') : 'updated';
      await logFlagActivity(tx, actor, updated, activity, changes);
      return updated;
    });
  } catch (error) {
    if (uniqueKeyViolation(error)) throw duplicateKey();
    throw error;
  }
}
