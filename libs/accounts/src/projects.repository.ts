import { randomUUID } from 'node:crypto';
import type { Sql } from '@sightline/postgres';
import type { Principal } from '@sightline/auth';

export interface Project extends ProjectSdkSettings {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  /** 0 Sunday, 1 Monday; null: Sunday. */
  week_start_day: 0 | 1 | null;
  /** Property filters `filter_test_accounts` applies (a list or a group). */
  test_account_filters: unknown;
  /** Person properties that name a person in lists; null: PostHog's defaults. */
  person_display_name_properties: string[] | null;
  /** The longest one analytics query of the project may run, in seconds; null: the server's bound. */
  query_timeout_seconds: number | null;
  created_at: Date;
}

/** What the browser SDK is told to collect (the remote config); PostHog's posthog_team names. */
export interface ProjectSdkSettings {
  autocapture_opt_out: boolean;
  autocapture_exceptions_opt_in: boolean;
  autocapture_web_vitals_opt_in: boolean;
  capture_performance_opt_in: boolean;
  capture_dead_clicks: boolean;
  heatmaps_opt_in: boolean;
}

export const PROJECT_SDK_SETTINGS: readonly (keyof ProjectSdkSettings)[] = [
  'autocapture_opt_out',
  'autocapture_exceptions_opt_in',
  'autocapture_web_vitals_opt_in',
  'capture_performance_opt_in',
  'capture_dead_clicks',
  'heatmaps_opt_in',
];

export interface ProjectSettingsChange {
  name?: string;
  timezone?: string;
  week_start_day?: 0 | 1 | null;
  test_account_filters?: unknown;
  person_display_name_properties?: string[] | null;
  query_timeout_seconds?: number | null;
  sdk?: Partial<ProjectSdkSettings>;
}

/** Changes the settings given, leaving the others; answers the project as stored. */
export async function updateProjectSettings(db: Sql, id: number, change: ProjectSettingsChange): Promise<Project | null> {
  const rows = await db.query<Project>(
    `UPDATE projects SET
       name = CASE WHEN $2 THEN $3 ELSE name END,
       timezone = CASE WHEN $4 THEN $5 ELSE timezone END,
       week_start_day = CASE WHEN $6 THEN $7::smallint ELSE week_start_day END,
       test_account_filters = CASE WHEN $8 THEN $9::jsonb ELSE test_account_filters END,
       autocapture_opt_out = COALESCE($10::boolean, autocapture_opt_out),
       autocapture_exceptions_opt_in = COALESCE($11::boolean, autocapture_exceptions_opt_in),
       autocapture_web_vitals_opt_in = COALESCE($12::boolean, autocapture_web_vitals_opt_in),
       capture_performance_opt_in = COALESCE($13::boolean, capture_performance_opt_in),
       capture_dead_clicks = COALESCE($14::boolean, capture_dead_clicks),
       heatmaps_opt_in = COALESCE($15::boolean, heatmaps_opt_in),
       person_display_name_properties = CASE WHEN $16 THEN $17::text[] ELSE person_display_name_properties END,
       query_timeout_seconds = CASE WHEN $18 THEN $19::integer ELSE query_timeout_seconds END
     WHERE id = $1 RETURNING *`,
    [
      id,
      change.name !== undefined,
      change.name ?? null,
      change.timezone !== undefined,
      change.timezone ?? null,
      change.week_start_day !== undefined,
      change.week_start_day ?? null,
      change.test_account_filters !== undefined,
      JSON.stringify(change.test_account_filters ?? []),
      ...PROJECT_SDK_SETTINGS.map((name) => change.sdk?.[name] ?? null),
      change.person_display_name_properties !== undefined,
      change.person_display_name_properties ?? null,
      change.query_timeout_seconds !== undefined,
      change.query_timeout_seconds ?? null,
    ],
  );
  return rows[0] ?? null;
}

/** A new project of the organisation with the given project API key. */
export async function insertProject(db: Sql, project: { organizationId: string; name: string; apiToken: string; timezone?: string }): Promise<Project> {
  const rows = await db.query<Project>(`INSERT INTO projects (uuid, organization_id, name, api_token, timezone) VALUES ($5, $1, $2, $3, $4) RETURNING *`, [
    project.organizationId,
    project.name,
    project.apiToken,
    project.timezone ?? 'UTC',
    randomUUID(),
  ]);
  return rows[0]!;
}

/** Replaces the project API key; the old one stops matching at once (caches forget it within their TTL). */
export async function resetProjectToken(db: Sql, id: number, apiToken: string): Promise<Project | null> {
  const rows = await db.query<Project>('UPDATE projects SET api_token = $2 WHERE id = $1 RETURNING *', [id, apiToken]);
  return rows[0] ?? null;
}

/** Every project, for the operator's command line. */
export async function listAllProjects(db: Sql): Promise<Project[]> {
  return db.query<Project>('SELECT * FROM projects ORDER BY id');
}

export async function findProjectByToken(db: Sql, token: string): Promise<Project | null> {
  const rows = await db.query<Project>('SELECT * FROM projects WHERE api_token = $1', [token]);
  return rows[0] ?? null;
}

export async function findProjectById(db: Sql, id: number): Promise<Project | null> {
  const rows = await db.query<Project>('SELECT * FROM projects WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** The projects a personal key may see: its organisation's, narrowed by scoped_teams. */
export async function listProjectsFor(db: Sql, principal: Principal): Promise<Project[]> {
  if (!canAccessOrganization(principal, principal.organizationId)) return [];
  return db.query<Project>(`SELECT * FROM projects WHERE organization_id = $1 AND ($2::int[] IS NULL OR id = ANY($2::int[])) ORDER BY id`, [
    principal.organizationId,
    principal.scopedTeams,
  ]);
}

/** A key restricted to organisations (`scoped_organizations`) reaches only those. */
export function canAccessOrganization(principal: Principal, organizationId: string): boolean {
  const scoped = principal.scopedOrganizations ?? null;
  return organizationId === principal.organizationId && (scoped === null || scoped.some((id) => id.toLowerCase() === organizationId.toLowerCase()));
}

export function canAccessProject(principal: Principal, project: Project): boolean {
  return canAccessOrganization(principal, project.organization_id) && (principal.scopedTeams === null || principal.scopedTeams.includes(project.id));
}
