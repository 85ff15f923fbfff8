import { Router, type Request, type Response } from 'express';
import { requireScope } from '@sightline/auth';
import { ApiError, errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { activityPage, changesBetween, recordActivity, type Change } from '../activity-log/activity-log';
import { limitOffsetPage } from '../http/pagination';
import { flagAccessLevels } from '../access-control/access-levels';
import { projectAccess } from '../http/project-access';
import { INT4_MAX, queryInteger } from '../http/drf-fields';
import { FLAG_PREFIXES, loadFlag, notifyFlagsChanged, type FeatureFlagDeps } from './flag-context';
import { parseFlagInput, type FlagInput, type FlagValidationContext } from './flag-input';
import { flagStatus } from './flag-status';
import { serializeFlag, serializeFlags } from './feature-flag.serializer';
import {
  dependentFlags,
  findFlag,
  findLiveFlagRef,
  insertFlag,
  isKeyTaken,
  listFlags,
  setAnalyticsDashboards,
  updateFlag,
  WRITABLE_COLUMNS,
  type FlagListFilters,
  type FlagRow,
} from './feature-flags.repository';
import { createUsageDashboard } from './usage-dashboard';

const ACTIVITY_SCOPE = 'FeatureFlag';
/** Fields whose changes the activity log records: the stored ones a client writes, and the linked dashboards. */
const LOGGED_FIELDS = [...WRITABLE_COLUMNS, 'analytics_dashboards'] as const;
const DEFAULT_PAGE_SIZE = 100;

function validationContext(db: Sql, teamId: number, method: FlagValidationContext['method'], current?: FlagRow): FlagValidationContext {
  return {
    method,
    current,
    keyTaken: (key, except) => isKeyTaken(db, teamId, key, except),
    cohortExists: async (id) => (await db.query('SELECT 1 FROM cohorts WHERE team_id = $1 AND id = $2 AND NOT deleted', [teamId, id])).length > 0,
    findFlag: (idOrKey) => findLiveFlagRef(db, teamId, idOrKey),
    missingDashboards: async (ids) => {
      const found = await db.query<{ id: number }>('SELECT id FROM dashboards WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted', [teamId, ids]);
      return ids.filter((id) => !found.some((d) => d.id === id));
    },
  };
}

const uniqueKeyViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505' && /feature_flags_live_key/.test(String(error));

const duplicateKey = () => errors.validation('There is already a feature flag with this key.', 'key', 'unique');

/** The loggable state of a flag, for the activity diff. */
async function loggedState(db: Sql, flag: FlagRow): Promise<Record<string, unknown>> {
  const dashboards = await db.query<{ dashboard_id: number }>(
    'SELECT dashboard_id FROM feature_flag_dashboards WHERE feature_flag_id = $1 ORDER BY dashboard_id',
    [flag.id],
  );
  const state: Record<string, unknown> = { analytics_dashboards: dashboards.map((d) => d.dashboard_id) };
  for (const field of LOGGED_FIELDS) if (field !== 'analytics_dashboards') state[field] = flag[field];
  return state;
}

/** A JSON-encoded list of strings from the query; PostHog ignores a malformed one rather than failing. */
function jsonList(raw: string | undefined): string[] | undefined {
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return undefined;
    // The JSON text passed the input guard as a plain string; what it decodes to is checked here.
    const problem = findInputProblem(parsed);
    if (problem) throw errors.validation(problem.detail, problem.attr === null ? 'tags' : `tags__${problem.attr}`, problem.code);
    return parsed.map(String);
  } catch {
    return undefined;
  }
}

/** One activity-log entry for a flag, by the caller, named after the flag's key as PostHog does. */
function logFlagActivity(db: Sql, req: Request, flag: FlagRow, activity: string, changes: Change[]): Promise<void> {
  return recordActivity(db, {
    teamId: flag.team_id,
    organizationId: req.principal!.organizationId,
    userId: req.principal!.userId,
    scope: ACTIVITY_SCOPE,
    itemId: flag.id,
    activity,
    detail: { changes, name: flag.key },
  });
}

function listFilters(query: Request['query']): FlagListFilters {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  return {
    active: text('active'),
    created_by_id: text('created_by_id'),
    search: text('search'),
    type: text('type'),
    evaluation_runtime: text('evaluation_runtime'),
    excluded_properties: jsonList(text('excluded_properties')),
    tags: jsonList(text('tags')),
    order: text('order'),
  };
}

/** The project's flags the caller has no access to (level "none"), which the list leaves out as PostHog does. */
async function hiddenFlagIds(db: Sql, teamId: number, userId: number): Promise<number[]> {
  const flags = await db.query<{ id: number; created_by_id: number | null }>('SELECT id, created_by_id FROM feature_flags WHERE team_id = $1 AND NOT deleted', [
    teamId,
  ]);
  const levels = await flagAccessLevels(db, teamId, userId, flags);
  return flags.filter((flag) => levels.get(flag.id) === 'none').map((flag) => flag.id);
}

/** PostHog's ActivityQuerySerializer: limit (default 10) and page (default 1), both at least 1. */
function activityQuery(query: Request['query']): { limit: number; page: number } {
  const read = (name: string, fallback: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^-?\d+$/.test(raw)) throw errors.validation('A valid integer is required.', name, 'invalid');
    const n = Number(raw);
    if (n < 1) throw errors.validation('Ensure this value is greater than or equal to 1.', name, 'min_value');
    if (n > INT4_MAX) throw errors.validation(`Ensure this value is less than or equal to ${INT4_MAX}.`, name, 'max_value');
    return n;
  };
  return { limit: read('limit', 10), page: read('page', 1) };
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
    const experiments = await db.query<{ id: number }>('SELECT id FROM experiments WHERE feature_flag_id = $1 AND NOT deleted ORDER BY id', [flag.id]);
    if (experiments.length > 0) {
      throw refuse(
        `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiments.map((e) => e.id).join(', ')}. Please delete the experiment(s) before deleting the flag.`,
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
      const disabled = await db.query<{ id: number; key: string }>(
        'SELECT id, key FROM feature_flags WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted AND NOT active ORDER BY key',
        [flag.team_id, ids],
      );
      if (disabled.length > 0) {
        throw refuse(`Cannot enable this feature flag because it depends on disabled flags: ${names(disabled)}. Please enable the dependency flags first.`);
      }
    }
  }
}

/** List, create, retrieve, update (soft delete), refused DELETE, activity and status. */
export function createFeatureFlagsRoutes(deps: FeatureFlagDeps): Router {
  const { db } = deps;
  const router = Router();
  const viewer = (req: Request) => ({ userId: req.principal!.userId, teamId: req.project!.id });

  for (const base of FLAG_PREFIXES) {
    router.get(base, requireScope('feature_flag:read'), projectAccess(db), async (req, res) => {
      const limit = queryInteger(req.query['limit'], DEFAULT_PAGE_SIZE, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const filters = { ...listFilters(req.query), hidden_ids: await hiddenFlagIds(db, req.project!.id, req.principal!.userId) };
      const { rows, count } = await listFlags(db, req.project!.id, filters, { limit, offset }, deps.now());
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serializeFlags(db, rows, viewer(req), deps.now()) }));
    });

    router.post(base, requireScope('feature_flag:write'), projectAccess(db), async (req, res) => {
      const teamId = req.project!.id;
      const userId = req.principal!.userId;
      const input = await parseFlagInput(req.body ?? {}, validationContext(db, teamId, 'POST'));
      let flag: FlagRow;
      try {
        flag = await db.transaction(async (tx) => {
          const created = await insertFlag(tx, teamId, userId, input, new Date(deps.now()));
          await setAnalyticsDashboards(tx, created.id, input.analytics_dashboards ?? []);
          await logFlagActivity(tx, req, created, 'created', changesBetween(ACTIVITY_SCOPE, null, await loggedState(tx, created), LOGGED_FIELDS));
          if (input.create_usage_dashboard !== false) await createUsageDashboard(tx, created, userId);
          return (await findFlag(tx, teamId, created.id))!;
        });
      } catch (error) {
        if (uniqueKeyViolation(error)) throw duplicateKey();
        throw error;
      }
      await notifyFlagsChanged(deps, teamId, req.log);
      res.status(201).json(await serializeFlag(db, flag, viewer(req), deps.now()));
    });

    router.get(`${base}/activity`, requireScope('activity_log:read'), projectAccess(db), async (req, res) => {
      res.json(await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, ...activityQuery(req.query) }));
    });

    router.get(`${base}/:id`, requireScope('feature_flag:read'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      res.json(await serializeFlag(db, req.flag!, viewer(req), deps.now()));
    });

    const update = async (req: Request, res: Response) => {
      const teamId = req.project!.id;
      const userId = req.principal!.userId;
      const input = await parseFlagInput(req.body ?? {}, validationContext(db, teamId, req.method === 'PUT' ? 'PUT' : 'PATCH', req.flag));
      if (input.active === true) input.performed_rollback = false;
      let flag: FlagRow;
      try {
        flag = await db.transaction(async (tx) => {
          // The row lock makes the version check and the increment one step.
          const locked = (await findFlag(tx, teamId, req.flag!.id, { forUpdate: true }))!;
          if (input.version !== undefined && input.version !== locked.version) {
            const conflicts = input.original_flag ? conflictingFields(locked, input, input.original_flag) : ['version'];
            if (conflicts.length > 0) {
              const [editor] = locked.last_modified_by_id
                ? await tx.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [locked.last_modified_by_id])
                : [];
              throw new ApiError(
                409,
                'invalid_request',
                'conflict',
                `The feature flag was updated by ${editor?.email ?? 'another user'} since you started editing it. Please refresh and try again.`,
              );
            }
          }
          await checkLifecycleChange(tx, locked, input);
          // Soft-deleting a flag whose experiments were deleted frees its key (PostHog renames it).
          if (input.deleted === true && !locked.deleted) {
            const deletedExperiments = await tx.query('SELECT 1 FROM experiments WHERE feature_flag_id = $1 AND deleted LIMIT 1', [locked.id]);
            if (deletedExperiments.length > 0) input.key = `${input.key ?? locked.key}:deleted:${locked.id}`;
          }
          const before = await loggedState(tx, locked);
          const updated = await updateFlag(tx, locked, userId, input, new Date(deps.now()));
          await setAnalyticsDashboards(tx, updated.id, input.analytics_dashboards ?? []);
          const changes = changesBetween(ACTIVITY_SCOPE, before, await loggedState(tx, updated), LOGGED_FIELDS);
          const deletedChange = changes.find((c) => c.field === 'deleted');
          const activity = deletedChange ? (deletedChange.after ? 'deleted' : 'restored') : 'updated';
          await logFlagActivity(tx, req, updated, activity, changes);
          return updated;
        });
      } catch (error) {
        if (uniqueKeyViolation(error)) throw duplicateKey();
        throw error;
      }
      await notifyFlagsChanged(deps, teamId, req.log);
      res.json(await serializeFlag(db, flag, viewer(req), deps.now()));
    };
    router.patch(`${base}/:id`, requireScope('feature_flag:write'), projectAccess(db), loadFlag(db, 'editor'), update);
    router.put(`${base}/:id`, requireScope('feature_flag:write'), projectAccess(db), loadFlag(db, 'editor'), update);

    // PostHog's ForbidDestroyModel: the scope is checked first, then the hard delete is
    // refused before the flag is even looked up.
    router.delete(`${base}/:id`, requireScope('feature_flag:write'), projectAccess(db), () => {
      throw errors.methodNotAllowed('DELETE', 'Hard delete of this model is not allowed. Use a patch API call to set "deleted" to true');
    });

    router.get(`${base}/:id/activity`, requireScope('activity_log:read'), projectAccess(db), loadFlag(db, 'viewer'), async (req, res) => {
      const query = activityQuery(req.query);
      res.json(await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, itemId: String(req.flag!.id), ...query }));
    });

    // PostHog answers an unknown flag with 404 and the same body shape (status "unknown").
    router.get(`${base}/:id/status`, requireScope('feature_flag:read'), projectAccess(db), async (req, res) => {
      const raw = String(req.params['id']);
      const flag = /^\d{1,9}$/.test(raw) ? await findFlag(db, req.project!.id, Number(raw)) : null;
      const status = flagStatus(flag, deps.now());
      res.status(status.status === 'unknown' ? 404 : 200).json(status);
    });
  }
  return router;
}
