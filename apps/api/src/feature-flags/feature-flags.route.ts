import type { Request, Response } from 'express';
import { errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import { flagAccessLevels, hiddenFlagIds } from './flag-access-levels';
import { atLeast } from '../access-control';
import { activityPage } from '../activity-log';
import { INT4_MAX, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { parseObjectId } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { serializeFlag, serializeFlags } from './feature-flag.serializer';
import { findFlag, listFlags, type FlagListFilters } from './feature-flags.repository';
import { ACTIVITY_SCOPE, createFeatureFlag, updateFeatureFlag, validationContext, type FlagActor } from './feature-flags.service';
import { FLAG_PATH, loadFlag, notifyFlagsChanged, type FeatureFlagDeps } from './flag-context';
import { parseFlagInput } from './flag-input';
import { loadFlagRelations } from './flag-relations';
import { createFlagBody, changeFlagBody } from './flag-body.schema';
import { flagStatus } from './flag-status';

const DEFAULT_PAGE_SIZE = 100;

/** A JSON-encoded list of strings from the query; PostHog ignores a malformed one rather than failing. */
function jsonList(raw: string | undefined, name: string): string[] | undefined {
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  // The JSON text passed the input guard as a plain string; what it decodes to is checked here.
  const problem = findInputProblem(parsed);
  if (problem) throw errors.validation(problem.detail, problem.attr === null ? name : `${name}__${problem.attr}`, problem.code);
  return parsed.map(String);
}

function listFilters(query: Request['query']): FlagListFilters {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  return {
    active: text('active'),
    created_by_id: text('created_by_id'),
    search: text('search'),
    type: text('type'),
    evaluation_runtime: text('evaluation_runtime'),
    excluded_properties: jsonList(text('excluded_properties'), 'excluded_properties'),
    tags: jsonList(text('tags'), 'tags'),
    order: text('order'),
  };
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

/** List, create, retrieve, update (soft delete), refused DELETE, activity and status. */
export function createFeatureFlagsRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  const viewer = (req: Request) => ({ userId: req.principal!.userId, teamId: req.project!.id });
  const actorOf = (req: Request): FlagActor => ({ teamId: req.project!.id, userId: req.principal!.userId, organizationId: req.principal!.organizationId });

  routes.inProject((project) => {
    const base = FLAG_PATH;
    project.get(base, { scope: 'feature_flag:read', summary: 'List feature flags', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], DEFAULT_PAGE_SIZE, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const filters = { ...listFilters(req.query), hidden_ids: await hiddenFlagIds(db, req.project!.id, req.principal!.userId) };
      const { rows, count } = await listFlags(db, req.project!.id, filters, { limit, offset }, deps.now());
      res.json(limitOffsetPage(req, { count, limit, offset, results: serializeFlags(rows, await loadFlagRelations(db, rows, viewer(req)), deps.now()) }));
    });

    project.post(
      base,
      {
        scope: 'feature_flag:write',
        summary: 'Create a feature flag',
        body: createFlagBody,
        example: () => ({ key: 'new-checkout', name: 'New checkout', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }),
      },
      async (req, res) => {
        const teamId = req.project!.id;
        const input = await parseFlagInput(req.body ?? {}, validationContext(db, teamId, 'POST'));
        const flag = await createFeatureFlag(db, actorOf(req), input, new Date(deps.now()));
        await notifyFlagsChanged(deps, teamId, req.log);
        res.status(201).json(serializeFlag(flag, await loadFlagRelations(db, [flag], viewer(req)), deps.now()));
      },
    );

    project.get(`${base}/activity`, { scope: 'activity_log:read', summary: "Activity on the project's flags", list: true }, async (req, res) => {
      const hidden = await hiddenFlagIds(db, req.project!.id, req.principal!.userId);
      res.json(
        await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, excludedItemIds: hidden.map(String), ...activityQuery(req.query) }),
      );
    });

    project.get(`${base}/:id`, { scope: 'feature_flag:read', summary: 'Retrieve a feature flag' }, loadFlag(db, 'viewer'), async (req, res) => {
      res.json(serializeFlag(req.flag!, await loadFlagRelations(db, [req.flag!], viewer(req)), deps.now()));
    });

    const update = async (req: Request, res: Response) => {
      const teamId = req.project!.id;
      const input = await parseFlagInput(req.body ?? {}, validationContext(db, teamId, req.method === 'PUT' ? 'PUT' : 'PATCH', req.flag));
      const flag = await updateFeatureFlag(db, actorOf(req), req.flag!, input, new Date(deps.now()));
      await notifyFlagsChanged(deps, teamId, req.log);
      res.json(serializeFlag(flag, await loadFlagRelations(db, [flag], viewer(req)), deps.now()));
    };
    project.patch(
      `${base}/:id`,
      { scope: 'feature_flag:write', summary: 'Update a feature flag', body: changeFlagBody, example: () => ({ name: 'Renamed flag', active: false }) },
      loadFlag(db, 'editor'),
      update,
    );
    project.put(
      `${base}/:id`,
      {
        scope: 'feature_flag:write',
        summary: 'Replace a feature flag',
        body: createFlagBody,
        example: () => ({ key: 'new-checkout', name: 'New checkout', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }),
      },
      loadFlag(db, 'editor'),
      update,
    );

    // PostHog's ForbidDestroyModel: the scope is checked first, then the hard delete is
    // refused before the flag is even looked up.
    project.delete(`${base}/:id`, { scope: 'feature_flag:write', summary: 'Refused: PATCH {"deleted": true} removes a flag' }, () => {
      throw errors.methodNotAllowed('DELETE', 'Hard delete of this model is not allowed. Use a patch API call to set "deleted" to true');
    });

    project.get(
      `${base}/:id/activity`,
      { scope: 'activity_log:read', summary: 'Activity on one flag', list: true },
      loadFlag(db, 'viewer'),
      async (req, res) => {
        const query = activityQuery(req.query);
        res.json(await activityPage(db, req, { teamId: req.project!.id, scope: ACTIVITY_SCOPE, itemId: String(req.flag!.id), ...query }));
      },
    );

    // PostHog answers an unknown flag with 404 and the same body shape (status "unknown"). A flag
    // the caller may not view is refused as its page is.
    project.get(`${base}/:id/status`, { scope: 'feature_flag:read', summary: 'Whether a flag is active, stale or deleted' }, async (req, res) => {
      const id = parseObjectId(req.params['id']);
      const flag = id === null ? null : await findFlag(db, req.project!.id, id);
      if (flag && !atLeast((await flagAccessLevels(db, req.project!.id, req.principal!.userId, [flag])).get(flag.id)!, 'viewer'))
        throw errors.permissionDenied('You do not have viewer access to this resource.');
      const status = flagStatus(flag, deps.now());
      res.status(status.status === 'unknown' ? 404 : 200).json(status);
    });
  });
  return routes;
}
