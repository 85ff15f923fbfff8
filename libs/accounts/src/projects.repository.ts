import type { Sql } from '@sightline/postgres';
import type { Principal } from '@sightline/auth';

export interface Project {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  created_at: Date;
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
  return db.query<Project>(`SELECT * FROM projects WHERE organization_id = $1 AND ($2::int[] IS NULL OR id = ANY($2::int[])) ORDER BY id`, [
    principal.organizationId,
    principal.scopedTeams,
  ]);
}

export function canAccessProject(principal: Principal, project: Project): boolean {
  return project.organization_id === principal.organizationId && (principal.scopedTeams === null || principal.scopedTeams.includes(project.id));
}
