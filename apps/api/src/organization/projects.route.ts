import {
  insertProject,
  listProjectsFor,
  PROJECT_SDK_SETTINGS,
  resetProjectToken,
  updateProjectSettings,
  type Project,
  type ProjectTokenChanges,
} from '@sightline/accounts';
import type { Logger } from '@sightline/logger';
import { generateProjectApiKey } from '@sightline/auth';
import { errors } from '@sightline/http';
import { checkTimezone, DateRangeError } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import type { Sql } from '@sightline/postgres';
import { parsePropertyFilters, PropertyFilterError } from '@sightline/properties';
import { parseInteger, parseList, parseString } from '../http/drf-fields';
import { describedBody, ignoredBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';

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
    person_display_name_properties: p.person_display_name_properties,
    query_timeout_seconds: p.query_timeout_seconds ?? null,
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

/**
 * The settings POST and PATCH /api/projects/:id/ change: name, timezone, week_start_day,
 * test_account_filters, person_display_name_properties, query_timeout_seconds (1 up to the
 * server's own bound, `maxQueryTimeoutSeconds`: a project may only shorten its queries) and what
 * the browser SDK collects.
 */
function parseSettings(body: unknown, maxQueryTimeoutSeconds: number) {
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
  if (body['person_display_name_properties'] !== undefined) {
    const names = body['person_display_name_properties'];
    change.person_display_name_properties =
      names === null
        ? null
        : parseList(names, 'person_display_name_properties').map((name, i) => parseString(name, `person_display_name_properties__${i}`, { maxLength: 400 }));
  }
  if (body['query_timeout_seconds'] !== undefined) {
    const seconds = body['query_timeout_seconds'];
    change.query_timeout_seconds = seconds === null ? null : parseInteger(seconds, 'query_timeout_seconds', { min: 1, max: maxQueryTimeoutSeconds });
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

const QUERY_TIMEOUT_ABOUT =
  "The longest one analytics query of the project may run (ClickHouse max_execution_time), in seconds: 1 up to the server's ANALYTICS_QUERY_TIMEOUT_SECONDS; null: the server's";

/** What parseSettings reads; it words every refusal itself (a name that is no text is blank, as DRF's CharField says). */
const settingsBody = describedBody('Project settings to change', {
  name: 'Up to 200 characters',
  timezone: 'An IANA time zone (Europe/Berlin)',
  week_start_day: '0 (Sunday) or 1 (Monday), or null',
  test_account_filters: 'Property filters that leave out test accounts',
  person_display_name_properties: 'The person properties that name a person, in order',
  query_timeout_seconds: QUERY_TIMEOUT_ABOUT,
  ...Object.fromEntries(PROJECT_SDK_SETTINGS.map((name) => [name, 'A boolean browser SDK setting'])),
});

const settingsExample = () => ({ name: 'Marketing site', timezone: 'Europe/Berlin', week_start_day: 1, person_display_name_properties: ['email'] });

export interface ProjectsRoutesOptions {
  tokenChanges?: Pick<ProjectTokenChanges, 'publish'>;
  /**
   * Called once a project's row changed, before the answer: drops it from this process's project
   * cache and announces it to the others (never rejects); absent: nothing is cached.
   */
  projectChanged?: (projectId: number) => Promise<void>;
  logger: Logger;
  /** The server's bound on one analytics query (ANALYTICS_QUERY_TIMEOUT_SECONDS): a project's own may not exceed it. */
  maxQueryTimeoutSeconds: number;
}

/**
 * Projects of the caller's organisation: list, create, retrieve, settings, and a new project API
 * key, announced on `tokenChanges` so every process's token cache drops the old one at once.
 */
export function createProjectsRoutes(db: Sql, options: ProjectsRoutesOptions): RouteTable {
  const routes = new RouteTable();
  routes.get(
    '/api/projects',
    { scope: 'project:read', summary: 'List the projects the key may use', list: true, projectRestrictedKeys: 'narrowed' },
    async (req, res) => {
      const results = (await listProjectsFor(db, req.principal!)).map(serializeProject);
      res.json({ count: results.length, next: null, previous: null, results });
    },
  );
  routes.post(
    '/api/projects',
    {
      scope: 'project:write',
      summary: 'Create a project (with a new project API key)',
      body: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          timezone: { type: 'string' },
          week_start_day: { enum: [0, 1, null] },
          test_account_filters: {},
          person_display_name_properties: { type: ['array', 'null'], items: { type: 'string' } },
          query_timeout_seconds: { description: QUERY_TIMEOUT_ABOUT },
        },
      },
      example: settingsExample,
    },
    async (req, res) => {
      const settings = parseSettings(req.body, options.maxQueryTimeoutSeconds);
      const created = await insertProject(db, { organizationId: req.principal!.organizationId, name: settings.name!, apiToken: generateProjectApiKey() });
      const project = await updateProjectSettings(db, created.id, { ...settings, name: undefined });
      res.status(201).json(serializeProject(project!));
    },
  );
  routes.inProject((project) => {
    project.get('', { scope: 'project:read', summary: 'Retrieve a project' }, (req, res) => {
      res.json(serializeProject(req.project!));
    });
    project.patch('', { scope: 'project:write', summary: "Change a project's settings", body: settingsBody, example: settingsExample }, async (req, res) => {
      const updated = await updateProjectSettings(db, req.project!.id, parseSettings(req.body, options.maxQueryTimeoutSeconds));
      await options.projectChanged?.(req.project!.id);
      res.json(serializeProject(updated!));
    });
    // PostHog's reset_token: a new project API key. The announcement makes every process's token
    // cache drop the old key; if it cannot be sent, they drop it when their entries expire.
    project.patch(
      '/reset_token',
      { scope: 'project:write', summary: "Replace the project's API key", body: ignoredBody, example: () => ({}) },
      async (req, res) => {
        const updated = await resetProjectToken(db, req.project!.id, generateProjectApiKey());
        await options.projectChanged?.(req.project!.id);
        await options.tokenChanges?.publish(updated!.id).catch((err: unknown) => {
          options.logger.warn(
            { err, teamId: updated!.id },
            'could not announce a reset project API key; other processes accept the old one until their cache entries expire',
          );
        });
        res.json(serializeProject(updated!));
      },
    );
  });
  return routes;
}
