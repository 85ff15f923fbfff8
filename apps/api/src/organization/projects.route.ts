import { Router } from 'express';
import { listProjectsFor, PROJECT_SDK_SETTINGS, updateProjectSettings, type Project } from '@sightline/accounts';
import { requireScope } from '@sightline/auth';
import { errors } from '@sightline/http';
import { checkTimezone, DateRangeError } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { parsePropertyFilters, PropertyFilterError } from '@sightline/properties';
import { projectAccess } from '../http/project-access';

export function serializeProject(p: Project) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organization_id,
    name: p.name,
    api_token: p.api_token,
    timezone: p.timezone,
    week_start_day: p.week_start_day,
    test_account_filters: p.test_account_filters ?? [],
    test_account_filters_default_checked: false,
    created_at: new Date(p.created_at).toISOString(),
    ...Object.fromEntries(PROJECT_SDK_SETTINGS.map((name) => [name, p[name]])),
    // Sightline has no recording or surveys endpoint: the remote config keeps both off.
    session_recording_opt_in: false,
    surveys_opt_in: false,
  };
}

/** Settings that can only be off here (PATCH true is refused; false is accepted as a no-op). */
const UNAVAILABLE_SETTINGS: Record<string, string> = {
  session_recording_opt_in: 'Sightline does not store session recordings, so recording cannot be turned on.',
  surveys_opt_in: 'Sightline does not serve surveys, so surveys cannot be turned on.',
};

/** Filter types a project's test-account filters may use (they are ANDed into queries). */
const TEST_ACCOUNT_FILTER_TYPES = new Set(['event', 'person', 'cohort', 'group', 'element', 'hogql']);

/** The settings PATCH /api/projects/:id/ changes: name, timezone, week_start_day, test_account_filters and what the browser SDK collects. */
function parseSettings(body: unknown) {
  if (!isJsonObject(body)) throw errors.validation('The body must be a JSON object.', null, 'parse_error');
  const change: Parameters<typeof updateProjectSettings>[2] = {};
  if (body['name'] !== undefined) {
    if (typeof body['name'] !== 'string' || body['name'].trim() === '') throw errors.validation('This field may not be blank.', 'name', 'blank');
    if (body['name'].length > 200) throw errors.validation('Ensure this field has no more than 200 characters.', 'name', 'max_length');
    change.name = body['name'];
  }
  if (body['timezone'] !== undefined) {
    try {
      if (typeof body['timezone'] !== 'string') throw new DateRangeError('timezone', 'timezone must be a string.');
      change.timezone = checkTimezone(body['timezone']);
    } catch (error) {
      if (error instanceof DateRangeError)
        throw errors.validation(`"${String(body['timezone']).slice(0, 60)}" is not a valid choice.`, 'timezone', 'invalid_choice');
      throw error;
    }
  }
  if (body['week_start_day'] !== undefined) {
    const day = body['week_start_day'];
    if (day !== null && day !== 0 && day !== 1)
      throw errors.validation(`"${String(day).slice(0, 20)}" is not a valid choice.`, 'week_start_day', 'invalid_choice');
    change.week_start_day = day;
  }
  if (body['test_account_filters'] !== undefined) {
    const filters = body['test_account_filters'] ?? [];
    try {
      parsePropertyFilters(filters, 'test_account_filters', { types: TEST_ACCOUNT_FILTER_TYPES });
    } catch (error) {
      if (error instanceof PropertyFilterError) throw errors.validation(error.message, error.attr, error.code);
      throw error;
    }
    change.test_account_filters = filters;
  }
  for (const name of PROJECT_SDK_SETTINGS) {
    const value = body[name];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw errors.validation('Must be a valid boolean.', name, 'invalid');
    (change.sdk ??= {})[name] = value;
  }
  for (const [name, detail] of Object.entries(UNAVAILABLE_SETTINGS)) {
    const value = body[name];
    if (value === undefined || value === false || value === null) continue;
    if (typeof value !== 'boolean') throw errors.validation('Must be a valid boolean.', name, 'invalid');
    throw errors.validation(detail, name, 'not_supported');
  }
  return change;
}

export function createProjectsRouter(db: Sql): Router {
  const router = Router();
  router.get('/api/projects', requireScope('project:read'), async (req, res) => {
    const results = (await listProjectsFor(db, req.principal!)).map(serializeProject);
    res.json({ count: results.length, next: null, previous: null, results });
  });
  for (const prefix of ['/api/projects/:project_id', '/api/environments/:project_id']) {
    router.get(prefix, requireScope('project:read'), projectAccess(db), (req, res) => {
      res.json(serializeProject(req.project!));
    });
    router.patch(prefix, requireScope('project:write'), projectAccess(db), async (req, res) => {
      const updated = await updateProjectSettings(db, req.project!.id, parseSettings(req.body));
      res.json(serializeProject(updated!));
    });
  }
  return router;
}
